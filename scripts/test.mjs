// Runs every *.test.ts under test/ with node's test runner; TypeScript is loaded through tsx.
// Node 20's --test takes no globs, so the files are listed here.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function findTests(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...findTests(path));
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const filters = process.argv.slice(2);
const roots = ['test/unit', 'test/webview', 'test/e2e'].filter((d) => {
  try {
    return statSync(d).isDirectory();
  } catch {
    return false;
  }
});
let files = roots.flatMap(findTests).sort();
if (filters.length > 0) files = files.filter((f) => filters.some((x) => f.includes(x)));
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...files], {
  stdio: 'inherit',
});
process.exit(result.status ?? 1);

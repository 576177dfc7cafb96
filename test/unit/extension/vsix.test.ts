import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
// @ts-expect-error: a plain .mjs script without type declarations.
import { checkEntries, isCheckedPage, linkProblems, zipEntries, REQUIRED } from '../../../scripts/check-vsix.mjs';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const VSIX = join(ROOT, 'collective-profiler.vsix');

test('the vsix check catches missing bundles and shipped sources', () => {
  const good: string[] = [...REQUIRED, 'extension/readme.md'];
  assert.deepEqual(checkEntries(good), []);
  const problems: string[] = checkEntries([
    ...good.filter((n) => !n.endsWith('tree-sitter-python.wasm')),
    'extension/src/extension/extension.ts',
    'extension/test/unit/a.test.ts',
    'extension/node_modules/yaml/index.js',
    'extension/dist/extension.js.map',
  ]);
  assert.deepEqual(problems, [
    'missing extension/dist/tree-sitter-python.wasm',
    'must not ship extension/src/extension/extension.ts (TypeScript sources)',
    'must not ship extension/test/unit/a.test.ts (tests)',
    'must not ship extension/node_modules/yaml/index.js (node_modules (everything is bundled))',
    'must not ship extension/dist/extension.js.map (source maps)',
  ]);
});

test(
  'the packaged .vsix (when `npm run package` has run) ships what it must and nothing else',
  { skip: existsSync(VSIX) ? false : 'no collective-profiler.vsix: run `npm run package` first' },
  () => {
    const entries: { name: string; size: number }[] = zipEntries(readFileSync(VSIX));
    assert.deepEqual(checkEntries(entries.map((e) => e.name)), []);
    const mb = statSync(VSIX).size / 1024 / 1024;
    console.log(`collective-profiler.vsix: ${entries.length} files, ${mb.toFixed(2)} MB`);
    assert.ok(mb < 5, `the .vsix is ${mb.toFixed(2)} MB; the target is under 5 MB`);
  },
);

/** The entry name vsce gives a file it packages: under extension/, with the README and CHANGELOG lower-cased. */
function packagedName(file: string): string {
  const renamed: Record<string, string> = {
    'README.md': 'readme.md',
    'CHANGELOG.md': 'changelog.md',
    LICENSE: 'LICENSE.txt',
  };
  return `extension/${renamed[file] ?? file}`;
}

test(
  'the files vsce would package (vsce ls) are lean, and the README and docs/ link only to files among them',
  { skip: existsSync(join(ROOT, 'dist', 'extension.js')) ? false : 'dist/ is not built: run `npm run build` first' },
  () => {
    // vsce ls applies .vscodeignore exactly as vsce package does, without building or zipping anything.
    const listed = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules', '@vscode', 'vsce', 'vsce'), 'ls', '--no-dependencies'],
      {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    assert.equal(listed.status, 0, listed.stderr);
    const files = listed.stdout.split('\n').filter((line) => line.trim() !== '');
    const names = files.map(packagedName);
    assert.deepEqual(checkEntries(names), []);
    const pages = new Map(
      files
        .filter((file) => isCheckedPage(packagedName(file)))
        .map((file) => [packagedName(file), readFileSync(join(ROOT, file), 'utf8')]),
    );
    assert.ok(pages.has('extension/readme.md') && pages.size > 1, [...pages.keys()].join(', '));
    assert.deepEqual(linkProblems(pages, names), []);
    assert.ok(names.includes('extension/package.nls.json'), 'the English texts of package.json ship');
  },
);

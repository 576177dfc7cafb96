// The built CLI as scripts/build.mjs makes it: esbuild's split chunks turned into CommonJS function bodies
// (scripts/cli-bundle.mjs) that dist/cli.js (scripts/cli-launcher.cjs) compiles with vm.Script. These tests build it
// into a temporary folder and check that every chunk is such a body, and that commands run from it without Node's
// ES module loader: `simulate`, `check` (tree-sitter's chunk, whose `import('fs/promises')` must become a require)
// and `--version`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { ROOT } from './run-cli';

/** The CLI built as scripts/build.mjs builds it, with the wasm files beside the launcher; returns the folder. */
async function builtCli(): Promise<string> {
  const esbuild = await import('esbuild');
  const { cliTarget } = (await import(join(ROOT, 'scripts', 'cli-bundle.mjs'))) as {
    cliTarget: (common: object) => Record<string, unknown>;
  };
  const dir = mkdtempSync(join(tmpdir(), 'cp-cli-launcher-'));
  const target = cliTarget({ bundle: true, sourcemap: true, minify: false, logLevel: 'error' });
  await esbuild.build({ ...target, absWorkingDir: ROOT, outdir: join(dir, 'cli') });
  copyFileSync(join(ROOT, 'scripts', 'cli-launcher.cjs'), join(dir, 'cli.js'));
  for (const wasm of [
    'node_modules/web-tree-sitter/tree-sitter.wasm',
    'node_modules/tree-sitter-python/tree-sitter-python.wasm',
  ])
    copyFileSync(join(ROOT, wasm), join(dir, wasm.split('/').pop()!));
  return dir;
}

let built: Promise<string> | undefined;
const cliFolder = (): Promise<string> => (built ??= builtCli());

/** Runs the built CLI with a preload that reports, at exit, whether Node's ES module loader linked a module. */
function run(dir: string, args: readonly string[]): { code: number | null; stdout: string; stderr: string } {
  const preload = join(dir, 'report-esm.cjs');
  writeFileSync(
    preload,
    // module_job is the ES module loader's part that links and runs a module; a CommonJS program never loads it.
    "process.on('exit', () => process.stderr.write(`\\nesm-loader ${process.moduleLoadList.some((m) => m.endsWith('esm/module_job'))}\\n`));\n",
  );
  const result = spawnSync(process.execPath, ['--require', preload, join(dir, 'cli.js'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('every chunk of the built CLI is a CommonJS function body, with its source map', async () => {
  const dir = await cliFolder();
  const files = readdirSync(join(dir, 'cli'));
  const chunks = files.filter((f) => f.endsWith('.cjs'));
  assert.ok(chunks.includes('main.cjs'), 'main.cjs is the entry point');
  assert.ok(chunks.length > 10, `the CLI is split (${chunks.length} chunks)`);
  assert.deepEqual(
    files.filter((f) => !f.endsWith('.cjs') && !f.endsWith('.cjs.map')),
    [],
    'nothing but chunks and their maps',
  );
  const sources: string[] = [];
  for (const chunk of chunks) {
    const text = readFileSync(join(dir, 'cli', chunk), 'utf8');
    // The launcher's wrapper; an ES module's import or export statement is a syntax error here.
    assert.doesNotThrow(
      () => new Script(`(function (exports, require, module, __filename, __dirname) {'use strict';${text}\n})`),
      chunk,
    );
    assert.ok(!/\bimport\(/.test(text), `${chunk} has a dynamic import()`);
    const map = JSON.parse(readFileSync(join(dir, 'cli', `${chunk}.map`), 'utf8')) as { sources: string[] };
    sources.push(...map.sources);
  }
  // The maps lead back through both steps of the build to the TypeScript sources.
  for (const source of ['src/cli/main.ts', 'src/engine/simulate.ts', 'src/cli/commands/check.ts'])
    assert.ok(
      sources.some((s) => s.endsWith(source)),
      `a map names ${source}`,
    );
});

test('simulate and check run from the built CLI without the ES module loader', async () => {
  const dir = await cliFolder();
  const simulate = run(dir, ['simulate', '--system', 'dgx-h100', '--nodes', '2', '--bytes', '1M', '--json']);
  assert.equal(simulate.code, 0, simulate.stderr);
  const json = JSON.parse(simulate.stdout) as { timeUs: number };
  assert.ok(json.timeUs > 0);
  assert.match(simulate.stderr, /esm-loader false/);
  // tree-sitter's chunk reads the grammar through import('fs/promises'), lowered to require().
  const check = run(dir, ['check', 'examples/python/train_summed_gradients.py']);
  assert.equal(check.code, 1, check.stderr);
  assert.match(check.stdout, /CP001/);
  assert.match(check.stderr, /esm-loader false/);
  const version = run(dir, ['--version']);
  assert.equal(version.code, 0);
  assert.match(version.stdout, /^collective-profiler \d+\.\d+\.\d+/);
});

// Activation must stay cheap: the main extension bundle may not contain the heavy layers, which live in the lazy
// bundle (src/extension/lazy.ts). This builds both as scripts/build.mjs does and reads their inputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as esbuild from 'esbuild';

const ROOT = join(import.meta.dirname, '..', '..', '..');

const HEAVY = (f: string) =>
  /node_modules\/(yaml|ajv|web-tree-sitter|fast-uri)\//.test(f) ||
  /^src\/config\//.test(f) ||
  /^src\/native\/(runner|python|process-tree|convert)\.ts$/.test(f) ||
  (/^src\/analysis\//.test(f) && !/^src\/analysis\/(rules|types)\.ts$/.test(f)) ||
  /^src\/extension\/handlers\//.test(f);

/** The same plugin as scripts/build.mjs: `import('./lazy')` stays a runtime require of the second bundle. */
const lazyPlugin: esbuild.Plugin = {
  name: 'lazy-extension-bundle',
  setup(build) {
    build.onResolve({ filter: /^\.\/lazy$/ }, () => ({ path: './extension-lazy.js', external: true }));
  },
};

async function inputsOf(entry: string, plugins: esbuild.Plugin[] = []): Promise<{ inputs: string[]; bytes: number }> {
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [entry],
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'cjs',
    external: ['vscode'],
    logLevel: 'silent',
    outfile: 'out/test-bundle/out.js',
    plugins,
  });
  return {
    inputs: Object.keys(result.metafile!.inputs),
    bytes: Object.values(result.metafile!.outputs).reduce((n, o) => n + o.bytes, 0),
  };
}

test('the main extension bundle leaves YAML, ajv, tree-sitter, config, the runner and the analysis to the lazy bundle', async () => {
  const { inputs, bytes } = await inputsOf('src/extension/extension.ts', [lazyPlugin]);
  assert.deepEqual(inputs.filter(HEAVY), []);
  assert.ok(bytes < 400 * 1024, `main bundle is ${(bytes / 1024).toFixed(0)} KiB unminified`);
});

test('the check recognises the heavy modules: the lazy bundle is full of them', async () => {
  const { inputs } = await inputsOf('src/extension/lazy.ts');
  const heavy = inputs.filter(HEAVY);
  for (const needle of [
    'node_modules/yaml/',
    'node_modules/ajv/',
    'src/config/',
    'src/native/runner.ts',
    'src/analysis/analyze.ts',
    'src/extension/handlers/',
  ]) {
    assert.ok(
      heavy.some((f) => f.includes(needle)),
      needle,
    );
  }
});

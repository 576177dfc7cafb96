// Builds the bundles: the extension host (node, cjs; main, lazy and shared parts), the CLI and the webview panels (browser).
import * as esbuild from 'esbuild';
import { existsSync, mkdirSync, readdirSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { extensionBundleTargets } from './extension-bundles.mjs';
import { cliTarget, writeCliLauncher } from './cli-bundle.mjs';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');
const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'warning' };

// Every folder under webview/ with a main.ts is one panel bundle.
const webviewEntries = readdirSync('webview', { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join('webview', d.name, 'main.ts')))
  .map((d) => ({ in: join('webview', d.name, 'main.ts'), out: d.name }));

// The extension host is three bundles (main, lazy and the modules both share): see scripts/extension-bundles.mjs.
// In --watch mode the split is measured once at start; restart the watcher after moving code between them.
const { targets: extensionTargets } = await extensionBundleTargets({ common });

const targets = [
  ...extensionTargets,
  // Long engine jobs run in a worker thread so that they can be cancelled (see src/extension/worker/).
  {
    ...common,
    entryPoints: ['src/extension/worker/engine-worker.ts'],
    outfile: 'dist/extension-worker.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  // The CLI's worker threads (sweep sizes, training sweeps) load this bundle, the engine and little else.
  {
    ...common,
    entryPoints: ['src/cli/parallel/worker.ts'],
    outfile: 'dist/cli-worker.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  // The CLI: dist/cli.js launches dist/cli/main.mjs, split per command (scripts/cli-bundle.mjs).
  cliTarget(common),
];
if (webviewEntries.length > 0) {
  targets.push({
    ...common,
    entryPoints: webviewEntries,
    outdir: 'dist/webview',
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
  });
}

// The grammar and runtime .wasm files ship next to the bundles so the analysis layer can load them offline.
mkdirSync('dist', { recursive: true });
for (const wasm of [
  'node_modules/web-tree-sitter/tree-sitter.wasm',
  'node_modules/tree-sitter-python/tree-sitter-python.wasm',
]) {
  if (existsSync(wasm)) copyFileSync(wasm, join('dist', wasm.split('/').pop()));
}
writeCliLauncher();
// The codicon font and stylesheet ship in dist/ too: webviews may load only from media/ and dist/.
mkdirSync('dist/codicons', { recursive: true });
for (const file of ['codicon.css', 'codicon.ttf']) {
  const from = join('node_modules/@vscode/codicons/dist', file);
  if (existsSync(from)) copyFileSync(from, join('dist/codicons', file));
}

const present = targets.filter((t) => t.stdin || existsSync(t.entryPoints[0].in ?? t.entryPoints[0]));
if (watch) {
  for (const t of present) await (await esbuild.context(t)).watch();
} else {
  await Promise.all(present.map((t) => esbuild.build(t)));
}

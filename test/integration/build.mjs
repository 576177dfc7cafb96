// Bundles the integration suite for the extension host (cjs, vscode external) into out/integration/.
import * as esbuild from 'esbuild';

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode', '@vscode/test-electron'],
  logLevel: 'warning',
  sourcemap: true,
};
await esbuild.build({
  ...common,
  entryPoints: ['test/integration/run-tests.ts'],
  outfile: 'out/integration/run-tests.js',
});
await esbuild.build({
  ...common,
  entryPoints: ['test/integration/suite/index.ts'],
  outfile: 'out/integration/suite/index.js',
});

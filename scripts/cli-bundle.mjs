// The CLI as ES modules split at each command (src/cli/commands/catalogue.ts imports every command dynamically):
// dist/cli/main.mjs is the entry point, and each command's code, with what only it needs (YAML and ajv, the
// native runner, tree-sitter), is a chunk loaded when that command runs. Code that several commands share (the
// engine) is a chunk of its own, loaded once. `--version` then compiles the dispatcher only, and `simulate` on a
// preset the engine and itself. dist/cli.js stays the program users run (`bin`, `node dist/cli.js`): a CommonJS
// file of two lines that imports the entry point.
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';

/** Where the entry point and its chunks go; the launcher is `${CLI_DIR}.js`. */
export const CLI_DIR = 'dist/cli';

// The bundled packages and modules are written for CommonJS: they call require() (node built-ins, from yaml and
// ajv) and read __dirname (pool.ts finds dist/cli-worker.js beside the launcher; the wasm files are found beside
// it too). An ES module has none of these, so every output file defines them first, for the launcher's folder
// (dist/), where they pointed when the CLI was one CommonJS file.
const COMMONJS_NAMES = [
  "import { createRequire as __cliCreateRequire } from 'node:module';",
  "import { dirname as __cliDirname } from 'node:path';",
  "import { fileURLToPath as __cliFileURLToPath } from 'node:url';",
  'const require = __cliCreateRequire(import.meta.url);',
  "const __filename = __cliFileURLToPath(new URL('../cli.js', import.meta.url));",
  'const __dirname = __cliDirname(__filename);',
].join('\n');

/** The esbuild options of the split CLI; `common` carries bundling, source maps and minification. */
export function cliTarget(common) {
  return {
    ...common,
    entryPoints: [{ in: 'src/cli/main.ts', out: 'main' }],
    outdir: CLI_DIR,
    outExtension: { '.js': '.mjs' },
    splitting: true,
    chunkNames: 'chunk-[hash]',
    // web-tree-sitter's ESM build reads import.meta.url for its own folder (dist/cli/); its cjs build takes the
    // wasm location from the caller, as the other node bundles use it.
    alias: { 'web-tree-sitter': './node_modules/web-tree-sitter/tree-sitter.cjs' },
    platform: 'node',
    format: 'esm',
    target: 'node20',
    banner: { js: COMMONJS_NAMES },
  };
}

/**
 * Writes dist/cli.js, the launcher: the shebang and one dynamic import of the split CLI's entry point. Empties
 * dist/cli/ first: chunk names carry a hash of their content, so an earlier build's chunks would stay there.
 */
export function writeCliLauncher() {
  rmSync(CLI_DIR, { recursive: true, force: true });
  mkdirSync('dist', { recursive: true });
  const launcher = [
    '#!/usr/bin/env node',
    '// The CLI is split into ES modules under dist/cli/ (scripts/cli-bundle.mjs); this file only starts it.',
    "'use strict';",
    "import('./cli/main.mjs');",
    '',
  ].join('\n');
  writeFileSync(`${CLI_DIR}.js`, launcher);
  chmodSync(`${CLI_DIR}.js`, 0o755);
}

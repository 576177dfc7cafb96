// The CLI split at each command (src/cli/commands/catalogue.ts imports every command dynamically): dist/cli/main.js
// is the entry point, and each command's code, with what only it needs (YAML and ajv, the native runner,
// tree-sitter), is a chunk loaded when that command runs. Code that several commands share (the engine) is a chunk
// of its own, loaded once. `--version` then compiles the dispatcher only, and `simulate` on a preset the engine and
// itself. dist/cli.js stays the program users run (`bin`, `node dist/cli.js`): a file of two lines that requires
// the entry point.
//
// esbuild splits only ES modules, so the build has two steps: the split ES modules go to a temporary folder, and a
// second build turns each of them into a CommonJS file of the same name under dist/cli/ (its dynamic imports become
// require() calls, source maps follow the first build's). Node loads CommonJS without its ES module loader: at
// 16,384 GPUs a cold `simulate` took about 30 ms less CPU, and `--version` as much (docs/performance.md, session 15).
import * as esbuild from 'esbuild';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where the entry point and its chunks go; the launcher is `${CLI_DIR}.js`. */
export const CLI_DIR = 'dist/cli';

// The bundled packages and modules read __dirname and __filename for the launcher's folder (dist/): pool.ts finds
// dist/cli-worker.js beside the launcher, and the wasm files are found beside it too. Each output file sits in
// dist/cli/, so it moves both one folder up first (`var` may redeclare a CommonJS module's parameters). The first
// build's ES modules are never run; require comes from CommonJS in the files that are.
const LAUNCHER_FOLDER = [
  "var __filename = require('node:path').join(__dirname, '..', 'cli.js');",
  "var __dirname = require('node:path').dirname(__filename);",
].join('\n');

/**
 * The esbuild options of the split CLI; `common` carries bundling, source maps and minification. A build that
 * writes its files converts them into dist/cli/ when it ends (in --watch mode after every rebuild); one that keeps
 * them in memory (`write: false`, the tests' look at the split) stops at the ES modules.
 */
export function cliTarget(common) {
  const esmFolder = mkdtempSync(join(tmpdir(), 'cp-cli-esm-'));
  process.once('exit', () => rmSync(esmFolder, { recursive: true, force: true }));
  return {
    ...common,
    entryPoints: [{ in: 'src/cli/main.ts', out: 'main' }],
    outdir: esmFolder,
    splitting: true,
    chunkNames: 'chunk-[hash]',
    // web-tree-sitter's ESM build reads import.meta.url for its own folder; its cjs build takes the wasm location
    // from the caller, as the other node bundles use it.
    alias: { 'web-tree-sitter': './node_modules/web-tree-sitter/tree-sitter.cjs' },
    platform: 'node',
    format: 'esm',
    target: 'node20',
    banner: { js: LAUNCHER_FOLDER },
    plugins: [
      {
        name: 'cli-commonjs',
        setup(build) {
          build.onEnd(async (result) => {
            if (result.errors.length > 0 || build.initialOptions.write === false) return;
            await toCommonJs(build.initialOptions.outdir, common);
          });
        },
      },
    ],
  };
}

/** Converts every .js file of `esmFolder` into a CommonJS file of the same name in dist/cli/, emptied first. */
async function toCommonJs(esmFolder, common) {
  const files = readdirSync(esmFolder).filter((f) => f.endsWith('.js'));
  // Chunk names carry a hash of their content, so an earlier build's chunks would stay in dist/cli/.
  rmSync(CLI_DIR, { recursive: true, force: true });
  await esbuild.build({
    entryPoints: files.map((f) => join(esmFolder, f)),
    outdir: CLI_DIR,
    bundle: false,
    sourcemap: common.sourcemap,
    minify: common.minify,
    logLevel: common.logLevel,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  });
}

/** Writes dist/cli.js, the launcher: the shebang and one require() of the split CLI's entry point. */
export function writeCliLauncher() {
  mkdirSync('dist', { recursive: true });
  const launcher = [
    '#!/usr/bin/env node',
    '// The CLI is split into CommonJS files under dist/cli/ (scripts/cli-bundle.mjs); this file only starts it.',
    "'use strict';",
    "require('./cli/main.js');",
    '',
  ].join('\n');
  writeFileSync(`${CLI_DIR}.js`, launcher);
  chmodSync(`${CLI_DIR}.js`, 0o755);
}

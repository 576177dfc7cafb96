// The CLI as chunks split at each command (src/cli/commands/catalogue.ts imports every command dynamically):
// dist/cli/main.cjs is the entry point, and each command's code, with what only it needs (YAML and ajv, the native
// runner, tree-sitter), is a chunk loaded when that command runs. Code that several commands share (the engine) is
// a chunk of its own, loaded once. `--version` then compiles the dispatcher only, and `simulate` on a preset the
// engine and itself. dist/cli.js stays the program users run (`bin`, `node dist/cli.js`): scripts/cli-launcher.cjs,
// which loads the chunks with vm.Script rather than through Node's ES module loader (the reasons are in that file).
//
// esbuild splits ES modules only, so the split is built as ES modules in memory and each output is then turned
// into CommonJS (`require` and `module.exports`; every `import()` becomes a `require` in a promise) before it is
// written. The source maps follow both steps: each chunk's map is handed to the second one inline.
import * as esbuild from 'esbuild';
import { chmodSync, copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';

/** Where the entry point and its chunks go; the launcher is `${CLI_DIR}.js`. */
export const CLI_DIR = 'dist/cli';

/** The esbuild options of the split CLI; `common` carries bundling, source maps and minification. */
export function cliTarget(common) {
  return {
    ...common,
    entryPoints: [{ in: 'src/cli/main.ts', out: 'main' }],
    outdir: CLI_DIR,
    // The names the chunks import one another by, and have once written: `.cjs`, since that is what they become.
    outExtension: { '.js': '.cjs' },
    splitting: true,
    chunkNames: 'chunk-[hash]',
    // web-tree-sitter's ESM build reads import.meta.url for its own folder; its cjs build takes the wasm location
    // from the caller, as the other node bundles use it.
    alias: { 'web-tree-sitter': './node_modules/web-tree-sitter/tree-sitter.cjs' },
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    plugins: [commonJsChunks(common.minify === true)],
  };
}

/** Writes each output of the split build as CommonJS, once the build (or each rebuild under --watch) ends. */
function commonJsChunks(minify) {
  return {
    name: 'cli-commonjs-chunks',
    setup(build) {
      build.onEnd(async (result) => {
        if (result.errors.length > 0 || !result.outputFiles) return;
        const maps = new Map(result.outputFiles.filter((f) => f.path.endsWith('.map')).map((f) => [f.path, f.text]));
        for (const file of result.outputFiles) {
          if (file.path.endsWith('.map')) continue;
          const { code, map } = await toCommonJs(file.text, maps.get(`${file.path}.map`), file.path, minify);
          mkdirSync(dirname(file.path), { recursive: true });
          writeFileSync(
            file.path,
            map === undefined ? code : `${code}//# sourceMappingURL=${basename(file.path)}.map\n`,
          );
          if (map !== undefined) writeFileSync(`${file.path}.map`, map);
        }
      });
    },
  };
}

/**
 * One ES module chunk as CommonJS. `dynamic-import: false` makes esbuild lower `import()` (of a chunk, or of
 * `fs/promises` in web-tree-sitter) to `Promise.resolve().then(() => __toESM(require(…)))`, so no chunk needs
 * Node's ES module loader; a module namespace object becomes the exports object with the same names.
 */
async function toCommonJs(text, map, path, minify) {
  const withoutLink = text.replace(/\/\/# sourceMappingURL=\S+\s*$/, '');
  const input =
    map === undefined
      ? withoutLink
      : `${withoutLink}//# sourceMappingURL=data:application/json;base64,${Buffer.from(map).toString('base64')}\n`;
  const out = await esbuild.transform(input, {
    loader: 'js',
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    supported: { 'dynamic-import': false },
    sourcefile: basename(path),
    sourcemap: map === undefined ? false : 'external',
    minify,
  });
  return { code: out.code, map: map === undefined ? undefined : out.map };
}

/**
 * Writes dist/cli.js, the launcher (scripts/cli-launcher.cjs, executable). Empties dist/cli/ first: chunk names
 * carry a hash of their content, so an earlier build's chunks would stay there.
 */
export function writeCliLauncher() {
  rmSync(CLI_DIR, { recursive: true, force: true });
  mkdirSync('dist', { recursive: true });
  copyFileSync('scripts/cli-launcher.cjs', `${CLI_DIR}.js`);
  chmodSync(`${CLI_DIR}.js`, 0o755);
}

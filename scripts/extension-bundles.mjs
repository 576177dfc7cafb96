// The extension host's three bundles, so that no module is bundled twice:
// - dist/extension.js (src/extension/extension.ts) is what activation loads;
// - dist/extension-lazy.js (src/extension/lazy.ts) holds the handlers and their heavy dependencies, required on the
//   first command that needs them (the main bundle keeps `import('./lazy')` as a runtime require);
// - dist/extension-shared.js holds every module that both of them import, once.
// Without the shared bundle, each of the first two carried its own copy of the modules they share: two copies of
// every class (so `instanceof` failed across them) and of every module-level cache.
import * as esbuild from 'esbuild';
import { join, resolve } from 'node:path';

const SHARED_FILE = './extension-shared.js';
const EXTENSION_LAZY = join('src', 'extension', 'lazy.ts');

/** The esbuild options all three bundles have in common: node 20, CommonJS, `vscode` provided by the host. */
function hostOptions(common) {
  return {
    ...common,
    // web-tree-sitter's ESM build reads import.meta.url, which a cjs bundle does not have; the node bundles use
    // its cjs build instead (the same code, with __filename).
    alias: { 'web-tree-sitter': './node_modules/web-tree-sitter/tree-sitter.cjs' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  };
}

/**
 * `import('./lazy')` in the main bundle stays a runtime require of dist/extension-lazy.js. Only an import that
 * resolves to src/extension/lazy.ts is that bundle: another layer's own `./lazy` module (the engine's
 * src/engine/trace/lazy.ts) is bundled as any module is, or the shared bundle would require the lazy one while
 * activation loads it, and the extension would fail to load.
 */
const lazyAsRuntimeRequire = {
  name: 'lazy-extension-bundle',
  setup(build) {
    build.onResolve({ filter: /^\.\/lazy$/ }, (args) =>
      resolve(args.resolveDir, 'lazy.ts') ===
        resolve(build.initialOptions.absWorkingDir ?? process.cwd(), EXTENSION_LAZY) &&
      !args.importer.endsWith(join('src', 'extension', 'lazy.ts'))
        ? { path: './extension-lazy.js', external: true }
        : undefined,
    );
  },
};

/**
 * Replaces each shared module by a stub that takes its exports from dist/extension-shared.js. The stub is loaded
 * instead of the file, so the file's own imports are never followed and nothing it reaches is bundled again.
 */
function fromSharedBundle(sharedInputs, root) {
  const shared = new Set(sharedInputs.map((input) => resolve(root, input)));
  return {
    name: 'from-shared-bundle',
    setup(build) {
      build.onResolve({ filter: /^\.\/extension-shared\.js$/ }, () => ({ path: SHARED_FILE, external: true }));
      build.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
        if (!shared.has(args.path)) return undefined;
        const key = JSON.stringify(sharedKey(root, args.path));
        return { contents: `module.exports = require(${JSON.stringify(SHARED_FILE)})[${key}];`, loader: 'js' };
      });
    },
  };
}

/** A module's key in the shared bundle: its path relative to the repository, with forward slashes. */
function sharedKey(root, absolutePath) {
  return absolutePath
    .slice(resolve(root).length + 1)
    .split('\\')
    .join('/');
}

async function inputsOf(options) {
  const result = await esbuild.build({
    ...options,
    write: false,
    metafile: true,
    logLevel: 'silent',
    sourcemap: false,
  });
  // Virtual modules (esbuild's runtime helpers, stdin, plugin namespaces) are not files of the project.
  return Object.keys(result.metafile.inputs).filter((input) => !input.includes(':') && !input.startsWith('<'));
}

/**
 * The three targets, ready for esbuild.build. Which modules are shared is measured first, by building the main
 * and lazy bundles without writing them (about a second), so the split follows the code as it is today.
 */
export async function extensionBundleTargets({ common, root = process.cwd() }) {
  const host = { ...hostOptions(common), absWorkingDir: resolve(root) };
  const main = { ...host, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js' };
  const lazy = { ...host, entryPoints: ['src/extension/lazy.ts'], outfile: 'dist/extension-lazy.js' };
  const [mainInputs, lazyInputs] = await Promise.all([
    inputsOf({ ...main, plugins: [lazyAsRuntimeRequire] }),
    inputsOf(lazy),
  ]);
  const lazySet = new Set(lazyInputs);
  const sharedInputs = mainInputs.filter((input) => lazySet.has(input)).sort();
  const sharedEntry = sharedInputs
    .map((input) => `  ${JSON.stringify(input)}: require(${JSON.stringify(`./${input}`)}),`)
    .join('\n');
  const shared = {
    ...host,
    stdin: { contents: `module.exports = {\n${sharedEntry}\n};\n`, resolveDir: resolve(root), loader: 'js' },
    outfile: 'dist/extension-shared.js',
    // Shared modules such as the diagnostics load the lazy bundle with `import('./lazy')` too.
    plugins: [lazyAsRuntimeRequire],
  };
  const split = fromSharedBundle(sharedInputs, root);
  return {
    sharedInputs,
    targets: [shared, { ...main, plugins: [lazyAsRuntimeRequire, split] }, { ...lazy, plugins: [split] }],
  };
}

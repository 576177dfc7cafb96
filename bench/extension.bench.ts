// The extension's editor features: activation (loading the bundle and activate), diagnostics and code lenses on a
// 3,000-line training script, and the size of the packaged .vsix.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Benchmark } from './types';
import { analyzePython } from '../src/analysis/index';
import { loadPythonParser } from '../src/cli/python-parser';
import { presetSystem, resolveSystem, simulateCollective, type CollectiveResult, asBytes } from '../src/engine/index';
import { pythonLensSites } from '../src/extension/glue/lens-sites';
import { findingsToDiagnostics } from '../src/extension/glue/diagnostics-map';
import { predictionTitle } from '../src/extension/glue/lens-label';
import { trainingScript } from './training-script';

const ROOT = join(import.meta.dirname, '..');
const script = trainingScript(3000);
let counts = { diagnostics: 0, lenses: 0, simulations: 0 };

/** Bundles the activation child and the stand-in vscode module to plain cjs under out/bench/, once. */
let scripts: Promise<{ child: string; fake: string }> | undefined;
function activationScripts(): Promise<{ child: string; fake: string }> {
  scripts ??= (async () => {
    const esbuild = await import('esbuild');
    const child = join(ROOT, 'out', 'bench', 'extension-activate.cjs');
    const fake = join(ROOT, 'out', 'bench', 'fake-vscode.cjs');
    const common = { bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning' } as const;
    await esbuild.build({ ...common, entryPoints: [join(ROOT, 'bench', 'extension-activate.ts')], outfile: child });
    await esbuild.build({
      ...common,
      entryPoints: [join(ROOT, 'test', 'unit', 'extension', 'fixtures', 'fake-vscode.ts')],
      outfile: fake,
    });
    return { child, fake };
  })();
  return scripts;
}

/** The newest change to anything that goes into the .vsix, so a package older than its sources is rebuilt. */
function newestSourceMs(): number {
  let newest = 0;
  const visit = (path: string): void => {
    if (!existsSync(path)) return;
    const stat = statSync(path);
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const path of [
    'package.json',
    '.vscodeignore',
    'README.md',
    'CHANGELOG.md',
    'LICENSE',
    'scripts/build.mjs',
    'src',
    'webview',
    'media',
    'schemas',
    'syntaxes',
    'language-configuration',
    'examples',
    'harness',
    'docs',
  ])
    visit(join(ROOT, path));
  return newest;
}

export const benchmarks: Benchmark[] = [
  {
    name: 'extension: activation (load bundle + activate)',
    unit: 'ms',
    target: 100,
    quick: true,
    runs: 5,
    async measure() {
      const { child, fake } = await activationScripts();
      const out = execFileSync(process.execPath, [child, ROOT, fake], { cwd: ROOT, encoding: 'utf8' });
      return Number(out.trim().split('\n').pop());
    },
  },
  {
    name: 'extension: diagnostics + code lenses, 3,000-line script',
    unit: 'ms',
    target: 50,
    quick: true,
    runs: 9,
    async measure() {
      const parser = await loadPythonParser();
      const system = resolveSystem(presetSystem('dgx-h100')!);
      analyzePython(parser, script);
      const start = performance.now();
      // What one edit costs: analysis and diagnostic mapping, lens placement, and resolving every prediction lens
      // (the provider caches simulations by kind and size, as here).
      const diagnostics = findingsToDiagnostics(
        analyzePython(parser, script).findings,
        {},
        (code) => `docs/rules/${code}.md`,
      );
      const sites = pythonLensSites(script);
      const cache = new Map<string, CollectiveResult>();
      let titles = 0;
      for (const site of sites) {
        if (site.kind === 'bucket') continue;
        const bytes = asBytes((site.bucketCapMb ?? 25) * 2 ** 20);
        const results = site.collectives.map((kind) => {
          const key = `${kind}|${bytes}`;
          if (!cache.has(key)) cache.set(key, simulateCollective(system, { kind, bytes }));
          return cache.get(key)!;
        });
        if (predictionTitle(results, bytes, 'buckets')) titles++;
      }
      const elapsed = performance.now() - start;
      counts = { diagnostics: diagnostics.length, lenses: titles, simulations: cache.size };
      return elapsed;
    },
    extra: () => ({ lines: script.split('\n').length, ...counts }),
  },
  {
    name: 'extension: .vsix size',
    unit: 'MB',
    target: 5,
    runs: 1,
    measure() {
      const vsix = join(ROOT, 'collective-profiler.vsix');
      if (!existsSync(vsix) || statSync(vsix).mtimeMs < newestSourceMs()) {
        const result = spawnSync('npm', ['run', 'package'], { cwd: ROOT, stdio: 'inherit' });
        if (result.status !== 0) throw new Error('npm run package failed');
      }
      return statSync(vsix).size / 1024 / 1024;
    },
  },
];

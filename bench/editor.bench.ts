// Editor features (issue 8): the extension host's memory after opening a 1,000,000-span trace, measured in a fresh
// node process running the real dist/extension.js against the test stand-in for `vscode`. Activation, diagnostics
// and code lenses, and the .vsix size are in bench/extension.bench.ts.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Benchmark } from './types';
import { writeChromeTrace } from './support/chrome-trace';

const ROOT = join(import.meta.dirname, '..');
const OUT = join(ROOT, 'out', 'bench');
const LANES = 64;

export interface HostMemory {
  rssMB: number;
  heapUsedMB: number;
  externalMB: number;
  baselineRssMB: number;
  peakRssMB: number;
  openMs: number;
  spans: number;
  lanes: number;
  postedMessages: number;
  postedMB: number;
}

/** Bundles the child (with the stand-in) to plain cjs once, so no TypeScript loader sits in the measured process. */
let child: Promise<string> | undefined;
function childScript(): Promise<string> {
  child ??= (async () => {
    const esbuild = await import('esbuild');
    const outfile = join(OUT, 'trace-memory-child.cjs');
    await esbuild.build({ entryPoints: [join(ROOT, 'bench', 'support', 'trace-memory-child.ts')], outfile, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning' });
    return outfile;
  })();
  return child;
}

/** The generated trace, written once and reused while its size matches (the generator is deterministic). */
function traceFile(spans: number): { path: string; bytes: number } {
  mkdirSync(OUT, { recursive: true });
  const path = join(OUT, `chrome-trace-${spans}.json`);
  if (!existsSync(path)) writeChromeTrace(path, spans, LANES);
  return { path, bytes: statSync(path).size };
}

/** Opens the trace in a fresh extension host stand-in and returns what it measured. */
export async function measureHostMemory(spans: number): Promise<HostMemory> {
  const script = await childScript();
  const { path } = traceFile(spans);
  if (!existsSync(join(ROOT, 'dist', 'extension.js'))) throw new Error('dist/extension.js is missing: run npm run build');
  const out = execFileSync(process.execPath, ['--expose-gc', script, ROOT, path], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 20 });
  const result = JSON.parse(out.trim().split('\n').pop() ?? '') as HostMemory;
  if (result.spans !== spans) throw new Error(`the timeline got ${result.spans} spans of ${spans}`);
  return result;
}

function hostMemoryBenchmark(spans: number, target: number, options: { quick?: boolean; runs: number }): Benchmark {
  let last: HostMemory | undefined;
  const rss: number[] = [];
  return {
    name: `extension: host memory after opening a ${spans.toLocaleString('en-US')}-span trace`,
    unit: 'MB',
    target,
    ...options,
    async measure() {
      last = await measureHostMemory(spans);
      rss.push(last.rssMB);
      return last.rssMB;
    },
    extra: () => ({
      over: 'RSS after a full GC, minus RSS after activation',
      traceMB: Number((traceFile(spans).bytes / 2 ** 20).toFixed(1)),
      heapUsedMB: last && Number(last.heapUsedMB.toFixed(1)),
      peakRssMB: last && Number(last.peakRssMB.toFixed(1)),
      baselineRssMB: last && Number(last.baselineRssMB.toFixed(1)),
      openMs: last && Math.round(last.openMs),
      lanes: last?.lanes,
      postedMessages: last?.postedMessages,
    }),
  };
}

export const benchmarks: Benchmark[] = [
  hostMemoryBenchmark(1_000_000, 300, { runs: 3 }),
  // The same path and budget at a tenth of the size, for CI (`--quick`), so the child, the stand-in and Open Trace
  // keep working; one run, since the figure varies by a few percent at most. Memory does not scale down linearly:
  // the first trace loads the lazy bundle (~16 MB of RSS), and V8 keeps some pages the parse used.
  hostMemoryBenchmark(100_000, 300, { quick: true, runs: 1 }),
];

// Issue 17's trace at scale: `simulate --trace` for a 1 GiB AllReduce on 131,072 GPUs (16,384 DGX H100 nodes) in a
// cold CLI process, as the user runs it: summarised per node (the default above 1,024 ranks) and in full (every
// rank's spans streamed to the file), with the process's peak resident memory.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Benchmark } from './types';
import { coldCli } from './support/cold-cli';

type Detail = 'summary' | 'full';

interface TraceRun {
  readonly ms: number;
  readonly peakMB: number;
  readonly spans: number;
  readonly fileMB: number;
}
const lastRun = new Map<Detail, TraceRun>();

function coldTrace(detail: Detail): TraceRun {
  const dir = mkdtempSync(join(tmpdir(), 'cp-bench-trace-'));
  const out = join(dir, 'trace.json');
  try {
    const run = coldCli([
      ...['simulate', '--system', 'dgx-h100', '--nodes', '16384', '--bytes', '1G', '--json'],
      ...['--trace', out, '--trace-detail', detail],
    ]);
    const spans = Number(/: (\d+) spans written/.exec(run.stderr)?.[1]);
    if (!(spans > 0)) throw new Error(`no span count: ${run.stderr.trim()}`);
    const traced = { ms: run.ms, peakMB: run.peakKB / 1024, spans, fileMB: statSync(out).size / 2 ** 20 };
    lastRun.set(detail, traced);
    return traced;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const facts = (detail: Detail) => (): Record<string, unknown> => {
  const run = lastRun.get(detail);
  return run ? { spans: run.spans, fileMB: Math.round(run.fileMB), peakMB: Math.round(run.peakMB) } : {};
};

export const benchmarks: Benchmark[] = (['summary', 'full'] as const).flatMap((detail): Benchmark[] => [
  {
    name: `cli: trace of a 1 GiB AllReduce, 131,072 GPUs, ${detail}, cold process`,
    unit: 'ms',
    // What a user waits for without giving up: a few seconds for the default, a minute for every rank's spans.
    target: detail === 'summary' ? 5000 : 60000,
    // The summary takes seconds since it names links from the layout (session 14) and makes spans only for the nodes
    // it draws (session 15: 3.2 s of CPU, 241 MiB at load 19-20): a median of 3.
    runs: detail === 'summary' ? 3 : 1,
    measure: () => coldTrace(detail).ms,
    extra: facts(detail),
  },
  {
    name: `cli: trace of a 1 GiB AllReduce, 131,072 GPUs, ${detail}, cold process, peak resident memory`,
    unit: 'MB',
    // The untraced run's 300 MB target, with room for the simulated spans the trace keeps.
    target: 500,
    runs: 1,
    measure: () => lastRun.get(detail)?.peakMB ?? coldTrace(detail).peakMB,
    extra: facts(detail),
  },
]);

// Issue 17's targets: one 1 GiB AllReduce on DGX H100 nodes as a user runs it, in a cold CLI process, at 16,384
// and 131,072 GPUs, with the process's peak memory, and how the wall time grows from 64 to 131,072 GPUs. Cold processes include module loading and system resolution,
// which the in-process engine benchmarks leave out.
import type { Benchmark } from './types';
import { coldCli } from './support/cold-cli';

const GPUS_PER_NODE = 8;

interface ColdRun {
  readonly ms: number;
  readonly peakMB: number;
  readonly algorithm: string;
  readonly timeUs: number;
}
const lastRun = new Map<number, ColdRun>();
const peaksMB = new Map<number, number[]>();

/** Runs `simulate` for `gpus` GPUs in a fresh node process and returns its wall time and peak resident memory. */
function coldAllReduce(gpus: number): ColdRun {
  const run = coldCli([
    'simulate',
    '--system',
    'dgx-h100',
    '--nodes',
    String(gpus / GPUS_PER_NODE),
    '--bytes',
    '1G',
    '--json',
  ]);
  const { ms, peakKB } = run;
  const result = JSON.parse(run.stdout) as { algorithm: string; timeUs: number };
  const cold = { ms, peakMB: peakKB / 1024, algorithm: result.algorithm, timeUs: result.timeUs };
  lastRun.set(gpus, cold);
  peaksMB.set(gpus, [...(peaksMB.get(gpus) ?? []), cold.peakMB]);
  return cold;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function facts(gpus: number): Record<string, unknown> {
  const run = lastRun.get(gpus);
  const peaks = peaksMB.get(gpus) ?? [];
  return {
    algorithm: run?.algorithm,
    simulatedUs: run?.timeUs,
    peakRssMedianMB: peaks.length ? Math.round(median(peaks)) : undefined,
  };
}

/** Least-squares slope of log(time) against log(GPUs). */
function growthExponent(points: readonly (readonly [number, number])[]): number {
  const xs = points.map(([x]) => Math.log(x));
  const ys = points.map(([, y]) => Math.log(y));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return num / den;
}

const GROWTH_GPUS = [64, 1024, 16384, 131072] as const;
let growthPoints: (readonly [number, number])[] = [];

export const benchmarks: Benchmark[] = [
  // Session 15 (wip-17c): 0.60 -> 0.56 s of CPU, cold, medians of 11 at a load of 28-31 (the exit without V8's heap
  // teardown and fewer calls per entry in the NVLSTree rounds); wall time at that load measures the queue, and the
  // idle figure before was 0.29-0.32 s (docs/performance.md, session 15).
  // Session 16 (wip-17n): NVLSTree's tree rounds timed from classes of their flows (no routes or packing per flow):
  // 0.64 -> 0.42 s of CPU, cold, medians of 7 at a load of 45-48; 131,072 GPUs 1.46 -> 0.81 s, 141 -> 75 MiB
  // peak (docs/performance.md, session 16).
  // Session 17 (wip-17s): the CLI's chunks loaded as CommonJS with vm.Script (no ES module loader) and the solver's
  // scratch left unwritten: 0.41 -> 0.39 s of CPU cold, medians of 9 at a load of 36-48; 131,072 GPUs 0.76 -> 0.71 s
  // (docs/performance.md, session 17).
  // Session 17 (wip-17c): the class proof over roles, leaf classes and edge and node types with multiplicities
  // (per round: hundreds of steps, not two per tree edge), the tree walked by lowest set bit: 0.39 -> 0.28 s of CPU,
  // cold, medians of 9 at a load of 36-39; 131,072 GPUs 0.78 -> 0.59 s (docs/performance.md, session 17).
  {
    name: 'cli: 1 GiB AllReduce, 16,384 GPUs, cold process',
    unit: 'ms',
    target: 300,
    runs: 3,
    measure: () => coldAllReduce(16384).ms,
    extra: () => facts(16384),
  },
  {
    name: 'cli: 1 GiB AllReduce, 131,072 GPUs, cold process',
    unit: 'ms',
    target: 1000,
    runs: 3,
    measure: () => coldAllReduce(131072).ms,
    extra: () => facts(131072),
  },
  {
    name: 'cli: 1 GiB AllReduce, 131,072 GPUs, cold process, peak resident memory',
    unit: 'MB',
    target: 300,
    runs: 3,
    measure: () => coldAllReduce(131072).peakMB,
    extra: () => facts(131072),
  },
  {
    name: 'cli: growth exponent of cold-process wall time vs GPUs (log-log fit, 64..131,072, homogeneous)',
    unit: 'exponent',
    target: 0.3,
    runs: 1,
    measure() {
      // One cold run per size, the smallest first; Node's own start-up is part of every point, as the user sees it.
      growthPoints = GROWTH_GPUS.map((gpus) => [gpus, coldAllReduce(gpus).ms] as const);
      return growthExponent(growthPoints);
    },
    extra: () => ({ points: growthPoints.map(([gpus, ms]) => ({ gpus, ms: Math.round(ms) })) }),
  },
];

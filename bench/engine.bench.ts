// The simulated engine: a full nccl-tests style sweep (what `sweep` and the panels run while the user types) and
// one 1 GiB AllReduce as the system grows from one node to 16,384 GPUs. Timings exclude the trace (sweeps never
// draw one); the spans a traced run produces are reported beside them, with the heap the untraced run left.
import { performance } from 'node:perf_hooks';
import { presetSystem, simulateCollective, sweepAllReduce, type Algorithm, asBytes } from '../src/engine/index';
import type { Benchmark } from './types';

const GiB = asBytes(2 ** 30);
const SCALES = [8, 64, 1024, 8192, 16384] as const;

interface ScaleFacts {
  algorithm?: string;
  protocol?: string;
  busbwGBps?: number;
  heapMB?: number;
  spans?: number;
  tracedMs?: number;
}
const facts = new Map<number, ScaleFacts>();
let sweepRows = 0;

function algorithmFor(gpus: number): Algorithm | 'auto' {
  // One node has no hierarchy; across nodes the benchmark uses the hierarchical schedule the targets name.
  return gpus <= 8 ? 'auto' : 'hierarchical';
}

/** Wall time of one untraced 1 GiB AllReduce on `gpus` DGX H100 GPUs, system resolution included, ms. */
function oneAllReduceMs(gpus: number): number {
  const started = performance.now();
  const result = simulateCollective(presetSystem('dgx-h100', { nodes: gpus / 8 })!, {
    bytes: GiB,
    algorithm: algorithmFor(gpus),
  });
  const elapsed = performance.now() - started;
  const heapMB = process.memoryUsage().heapUsed / 1e6;
  facts.set(gpus, {
    ...facts.get(gpus),
    algorithm: result.algorithm,
    protocol: result.protocol,
    busbwGBps: result.busbwGBps,
    heapMB,
  });
  return elapsed;
}

function tracedFacts(gpus: number): ScaleFacts {
  const known = facts.get(gpus) ?? {};
  if (known.spans === undefined) {
    const started = performance.now();
    const traced = simulateCollective(presetSystem('dgx-h100', { nodes: gpus / 8 })!, {
      bytes: GiB,
      algorithm: algorithmFor(gpus),
      trace: true,
    });
    known.tracedMs = performance.now() - started;
    known.spans = traced.spanCount;
    facts.set(gpus, known);
  }
  return known;
}

const TARGET_MS: Record<number, number> = { 8: 20, 64: 50, 1024: 200, 8192: 5000, 16384: 2000 };

/** Least-squares slope of log(time) against log(GPUs). */
function growthExponent(points: readonly [number, number][]): number {
  const xs = points.map(([x]) => Math.log(x));
  const ys = points.map(([, y]) => Math.log(Math.max(y, 1e-3)));
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

let exponentPoints: [number, number][] = [];

export const benchmarks: Benchmark[] = [
  {
    name: 'engine: AllReduce sweep 8 B..8 GiB (×2, 31 sizes) on dgx-h100',
    unit: 'ms',
    target: 100,
    quick: true,
    measure() {
      const started = performance.now();
      sweepRows = sweepAllReduce(presetSystem('dgx-h100')!, {
        minBytes: asBytes(8),
        maxBytes: asBytes(8 * GiB),
        factor: 2,
      }).length;
      return performance.now() - started;
    },
    extra: () => ({ sizes: sweepRows }),
  },
  {
    name: 'engine: AllReduce sweep 8 B..8 GiB (×2, 31 sizes) on 8× A100 (ring/tree)',
    unit: 'ms',
    target: 100,
    quick: true,
    measure() {
      const started = performance.now();
      sweepAllReduce(presetSystem('dgx-a100')!, { minBytes: asBytes(8), maxBytes: asBytes(8 * GiB), factor: 2 });
      return performance.now() - started;
    },
  },
  ...SCALES.map((gpus): Benchmark => ({
    name: `engine: 1 GiB AllReduce, ${gpus.toLocaleString('en-US')} GPUs (${algorithmFor(gpus)})`,
    unit: 'ms',
    target: TARGET_MS[gpus],
    quick: gpus <= 1024,
    runs: gpus >= 8192 ? 3 : 5,
    measure: () => oneAllReduceMs(gpus),
    extra: () => {
      const f = tracedFacts(gpus);
      return {
        algorithm: f.algorithm,
        protocol: f.protocol,
        busbwGBps: f.busbwGBps,
        heapUsedMB: f.heapMB,
        spansWhenTraced: f.spans,
        tracedMs: f.tracedMs,
      };
    },
  })),
  {
    name: 'engine: growth exponent of 1 GiB AllReduce wall time vs GPUs (log-log fit, 64..16,384)',
    unit: 'exponent',
    target: 1.2,
    runs: 1,
    measure() {
      exponentPoints = SCALES.filter((g) => g >= 64).map((gpus) => [gpus, oneAllReduceMs(gpus)] as [number, number]);
      return growthExponent(exponentPoints);
    },
    extra: () => ({ points: exponentPoints.map(([gpus, ms]) => ({ gpus, ms: Math.round(ms * 10) / 10 })) }),
  },
];

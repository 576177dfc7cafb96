// Numeric reduction: how long `verify` and the profile's gradient-scaling check take. Both run on demand (a CLI
// call, a code lens), so a second is acceptable for the big case and the scaling check should feel instant.
import { performance } from 'node:perf_hooks';
import { reduceNumerically, runScalingCheck } from '../src/engine/index';
import type { Benchmark } from './types';

let lastOverflow = 0;
let lastMultiplier = 0;

export const benchmarks: Benchmark[] = [
  {
    name: 'numeric: fp16 ring AllReduce, 512 ranks × 4,096 elements, checked',
    unit: 'ms',
    target: 1000,
    quick: true,
    runs: 3,
    measure() {
      const started = performance.now();
      const result = reduceNumerically({
        algorithm: 'ring',
        ranks: 512,
        dtype: 'fp16',
        op: 'sum',
        elements: 4096,
        seed: 1,
      });
      lastOverflow = result.overflow?.count ?? 0;
      return performance.now() - started;
    },
    extra: () => ({ elementReductions: 512 * 4096, overflowedElements: lastOverflow }),
  },
  {
    name: 'numeric: gradient-scaling check, 64 ranks, 20 steps',
    unit: 'ms',
    target: 300,
    quick: true,
    measure() {
      const started = performance.now();
      lastMultiplier = runScalingCheck({ ranks: 64, reduceOp: 'sum', lrRule: 'fixed' }).lrMultiplier;
      return performance.now() - started;
    },
    extra: () => ({ measuredMultiplier: lastMultiplier }),
  },
];

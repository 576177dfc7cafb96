// Importing measured data: how long a user waits for the largest real files in ../shared/fixtures-real to open
// (a 2160-rank nccl-tests log, a 389 KB NCCL_DEBUG log, a 750 KB gzipped Kineto trace), and for compare on a
// 32-size calibration dataset. Without ../shared they throw, so the run fails instead of recording 0 ms as a pass.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { importMeasurementFile } from '../src/native/import-file';
import { compareMeasurement } from '../src/native/compare';
import { loadSystem } from '../src/cli/load-system';
import type { Benchmark } from './types';

const SHARED = resolve(import.meta.dirname, '..', '..', 'shared');
const FIXTURES = join(SHARED, 'fixtures-real');
const CALIBRATION = join(SHARED, 'calibration', 'nccl-tests');

/** Throws when the real files are absent: a benchmark with nothing to measure must not record a passing 0 ms. */
function requireShared(dir: string): void {
  if (!existsSync(dir)) throw new Error(`needs the real files in ${dir} (../shared beside the repository)`);
}

function timeImport(file: string): number {
  requireShared(FIXTURES);
  const start = performance.now();
  const result = importMeasurementFile(join(FIXTURES, file));
  if (result.measurements.length === 0 && !result.trace) throw new Error(`${file} imported nothing`);
  return performance.now() - start;
}

export const benchmarks: Benchmark[] = [
  {
    name: 'native: import nccl-tests log of 2160 ranks',
    unit: 'ms',
    target: 50,
    quick: true,
    measure: () => timeImport('nccl-tests-a100-2160gpu-2024.txt'),
  },
  {
    name: 'native: import 389 KB NCCL_DEBUG log with system file',
    unit: 'ms',
    target: 100,
    quick: true,
    measure: () => timeImport('nccl-debug-a100-2gpu-graph-tuning.log'),
  },
  {
    name: 'native: import 750 KB gzipped Kineto trace',
    unit: 'ms',
    target: 500,
    quick: true,
    measure: () => timeImport('kineto-a100-2rank-nccl2.17-full.json.gz'),
  },
  {
    name: 'native: compare 24 sizes of an 8-GPU calibration run with the model',
    unit: 'ms',
    target: 1000,
    async measure() {
      requireShared(CALIBRATION);
      const measurement = importMeasurementFile(join(CALIBRATION, 'a100-8gpu-nvswitch-1node-azure-ndv4.json'))
        .measurements[0];
      const system = await loadSystem('dgx-a100');
      const start = performance.now();
      compareMeasurement(measurement, system);
      return performance.now() - start;
    },
  },
];

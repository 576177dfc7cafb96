// `calibrate` on worker threads. The search (src/native/calibrate.ts) yields one batch of independent simulations
// at a time: the fitted rows of one evaluation, or NCCL's choice for each of them. Each row becomes a task of a
// WorkerPool that stays up for the whole search, so the rows of every evaluation run side by side; the search's
// steps themselves stay in order, each on the result of the one before. Batches run here until the recent ones
// show that a batch costs more than handing its rows to threads does (a multi-node system); a small system, one
// core, --jobs 1 or no worker bundle never starts the pool. Whichever thread answers, the numbers
// are the same (one simulationOutcome, doubles copied exactly), so the fitted system is the same bytes.
import { cpuUsage } from 'node:process';
import type { SystemSpec } from '../../engine/index';
import { calibrationSearch, type CalibrateOptions } from '../../native/calibrate';
import type { CalibrationResult } from '../../native/calibrate-parts';
import { answerHere, batchSystem, type BatchAnswer, type SimulationBatch } from '../../native/calibrate-batch';
import type { Measurement } from '../../native/import/model';
import { CancelledError, defaultWorkerScript, workerCount, type PoolOptions } from './pool';
import { WorkerPool } from './worker-pool';

/**
 * Batches whose median CPU time on this thread stays under this stay here: below it, posting rows to threads and
 * their warm-up (each worker compiles the simulator and builds the system's caches itself, about 1 s of CPU on a
 * 2-node system) cost more than they save. Measured (docs/performance.md): after their first batches, 1-node runs
 * take 4-9 ms a batch and never reach it; 2- and 4-node runs take 60-150 ms a batch from the sixth on.
 */
export const PARALLEL_BATCH_MIN_CPU_MS = 50;
/** The recent batches whose median decides: the first ones also pay this thread's warm-up, a few times the rest. */
const RECENT_BATCHES = 5;

export interface CalibratePoolOptions extends PoolOptions {
  /** Overrides PARALLEL_BATCH_MIN_CPU_MS (the tests force the pool with 0). */
  readonly minBatchCpuMs?: number;
}

export interface CalibrateRun {
  readonly result: CalibrationResult;
  /** Worker threads used; 0 when every batch ran on this thread. */
  readonly workers: number;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = cpuUsage(since);
  return (used.user + used.system) / 1000;
}

export async function calibrateInParallel(
  measurement: Measurement,
  given: SystemSpec,
  options: CalibrateOptions,
  pool: CalibratePoolOptions = {},
): Promise<CalibrateRun> {
  const search = calibrationSearch(measurement, given, options);
  const minCpuMs = pool.minBatchCpuMs ?? PARALLEL_BATCH_MIN_CPU_MS;
  let workers: WorkerPool | undefined;
  const recentCpuMs: number[] = [];
  const answer = async (batch: SimulationBatch): Promise<BatchAnswer> => {
    // Here the search cannot be interrupted inside a batch; between batches, a cancelled run stops.
    if (pool.signal?.aborted) throw new CancelledError();
    const system = batchSystem(batch);
    if (!system) return undefined;
    if (!workers) {
      const started = cpuUsage();
      const outcomes = answerHere(batch, system);
      recentCpuMs.push(cpuMs(started));
      if (recentCpuMs.length > RECENT_BATCHES) recentCpuMs.shift();
      const count = workerCount(batch.requests.length, pool.jobs);
      const script = count > 1 ? (pool.workerScript ?? defaultWorkerScript()) : undefined;
      if (script && recentCpuMs.length === RECENT_BATCHES && median(recentCpuMs) >= minCpuMs)
        workers = new WorkerPool(script, count, pool);
      return outcomes;
    }
    const tasks = batch.requests.map((request) => ({ kind: 'collective' as const, spec: batch.spec, request }));
    return workers.run(tasks);
  };
  try {
    let step = search.next(undefined);
    while (!step.done) step = search.next(await answer(step.value));
    return { result: step.value, workers: workers?.size ?? 0 };
  } finally {
    workers?.close();
  }
}

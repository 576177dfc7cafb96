// The CLI's worker pool (src/cli/parallel/pool.ts): results equal to the serial run's, byte for byte; as many workers
// as cores, tasks or --jobs allow and no more; errors that keep their type; cancelling (a signal or SIGINT) ends
// every worker thread. The workers load dist/cli-worker.js, so these tests need `npm run build`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import {
  asBytes,
  EngineError,
  parseSweep,
  presetSystem,
  resolveSystem,
  summariseTrainingSweep,
  sweepAllReduce,
  sweepTraining,
} from '../../../src/engine/index';
import { toyModel, toyRun } from '../training/helpers';
import { CancelledError, runParallel, workerCount } from '../../../src/cli/parallel/pool';
import { sweepInParallel } from '../../../src/cli/commands/sweep';
import type { Progress } from '../../../src/cli/progress';
import { ROOT } from './run-cli';

const WORKER = join(ROOT, 'dist', 'cli-worker.js');
const needsBuild = existsSync(WORKER) ? false : 'needs `npm run build` (dist/cli-worker.js)';
const silent: Progress = { update: () => undefined, finish: () => undefined };
const CORES = availableParallelism();

test('the worker count is bounded by the tasks, the cores and --jobs, one per two cores by default', () => {
  assert.equal(workerCount(31, undefined, 1), 1);
  assert.equal(workerCount(31, 8, 1), 1);
  assert.equal(workerCount(31, undefined, 16), 8);
  assert.equal(workerCount(31, undefined, 2), 1);
  assert.equal(workerCount(31, 2, 2), 2);
  assert.equal(workerCount(31, 4, 16), 4);
  assert.equal(workerCount(3, undefined, 16), 3);
  assert.equal(workerCount(0, undefined, 16), 1);
});

test("a sweep on worker threads prints the serial sweep's rows, byte for byte", { skip: needsBuild }, async () => {
  const system = resolveSystem(presetSystem('dgx-h100', { nodes: 4 })!);
  for (const options of [
    { minBytes: asBytes(8), maxBytes: asBytes(2 ** 30), factor: 4 },
    { minBytes: asBytes(3), maxBytes: asBytes(5000), factor: 1.7, dtype: 'fp16' as const, algorithm: 'ring' as const },
  ]) {
    const serial = sweepAllReduce(system, options);
    const parallel = await sweepInParallel(system, options, silent, { jobs: 2, workerScript: WORKER });
    assert.equal(parallel.workers, Math.min(2, CORES), 'the pool ran on worker threads');
    assert.equal(JSON.stringify(parallel.rows), JSON.stringify(serial));
    const oneByOne = await sweepInParallel(system, options, silent, { jobs: 1, workerScript: WORKER });
    assert.equal(oneByOne.workers, 0, '--jobs 1 runs on this thread');
    assert.equal(JSON.stringify(oneByOne.rows), JSON.stringify(serial));
  }
});

test('an engine error in a worker comes back as an EngineError', { skip: needsBuild }, async () => {
  const spec = presetSystem('dgx-h100', { nodes: 2 })!;
  const task = (minBytes: number) => ({
    kind: 'allreduce-size' as const,
    spec,
    options: { minBytes: asBytes(minBytes), maxBytes: asBytes(1024) },
  });
  await assert.rejects(
    runParallel([task(8), task(-1), task(16)], { jobs: 2, workerScript: WORKER }),
    (error: unknown) => error instanceof EngineError && /minBytes/.test(error.message),
  );
});

/** Tasks that keep two workers busy for a while: every size of a 128-node sweep, one by one. */
function longTasks() {
  const spec = presetSystem('dgx-h100', { nodes: 128 })!;
  return Array.from({ length: 40 }, (_, i) => ({
    kind: 'allreduce-size' as const,
    spec,
    options: { minBytes: asBytes(2 ** (3 + (i % 31))), maxBytes: asBytes(2 ** (3 + (i % 31))) },
  }));
}

/** Starts a long pool run, cancels it with `cancel` once a worker is up, and checks every worker thread ended. */
async function cancelled(cancel: (controller: AbortController) => void, stopOnSigint: boolean): Promise<void> {
  const controller = new AbortController();
  const workers: Worker[] = [];
  const exits: Promise<number>[] = [];
  const run = runParallel(longTasks(), {
    jobs: 2,
    workerScript: WORKER,
    signal: controller.signal,
    stopOnSigint,
    onWorker: (worker) => {
      workers.push(worker);
      exits.push(new Promise((resolve) => worker.once('exit', resolve)));
      if (workers.length === 1) setImmediate(() => cancel(controller));
    },
  });
  await assert.rejects(run, CancelledError);
  assert.ok(workers.length >= 1);
  // Every worker thread ends (terminate() makes it exit); a leaked one would keep this promise pending.
  await Promise.all(exits);
}

test('aborting the signal terminates every worker', { skip: needsBuild }, async () => {
  await cancelled((controller) => controller.abort(), false);
});

test(
  'SIGINT terminates every worker when the pool listens for it, and the listener is removed',
  {
    skip: needsBuild,
  },
  async () => {
    const before = process.listenerCount('SIGINT');
    await cancelled(() => process.emit('SIGINT'), true);
    assert.equal(process.listenerCount('SIGINT'), before);
  },
);

test("a node sweep's points on worker threads equal the serial sweep's", { skip: needsBuild }, async () => {
  const run = toyRun({ wrapper: 'fsdp' }, { nodes: 2 }, toyModel(4, 1024));
  const range = parseSweep('nodes=1..16');
  const serial = sweepTraining(run, range);
  const tasks = range.values.map((value) => ({ kind: 'training-point' as const, run, key: range.key, value }));
  const parallel = await runParallel(tasks, { jobs: 2, workerScript: WORKER });
  assert.equal(parallel.workers, Math.min(2, CORES));
  assert.equal(JSON.stringify(parallel.results), JSON.stringify(serial.points));
  assert.deepEqual(summariseTrainingSweep(run, range.key, parallel.results), serial);
});

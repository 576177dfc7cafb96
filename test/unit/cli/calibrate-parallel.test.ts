// `calibrate` on worker threads (src/cli/parallel/calibrate-pool.ts): the fitted result is the serial fit's, byte
// for byte, whether its rows ran here or on the workers; the pool starts only when batches are costly, never with
// --jobs 1; one set of workers serves every batch; cancelling (a signal or SIGINT) ends every worker thread. The
// workers load dist/cli-worker.js, so these tests need `npm run build`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { simulateCollective, type SystemSpec, asBytes, asGBps, asMicros } from '../../../src/engine/index';
import { calibrateSystem } from '../../../src/native/calibrate';
import type { Measurement } from '../../../src/native/import/model';
import { calibrateInParallel } from '../../../src/cli/parallel/calibrate-pool';
import { CancelledError } from '../../../src/cli/parallel/pool';
import { WorkerPool } from '../../../src/cli/parallel/worker-pool';
import { ROOT } from './run-cli';

const WORKER = join(ROOT, 'dist', 'cli-worker.js');
const needsBuild = existsSync(WORKER) ? false : 'needs `npm run build` (dist/cli-worker.js)';
const CORES = availableParallelism();
const MiB = 1 << 20;

const twoNodes: SystemSpec = {
  name: '2x4 H100 NDR',
  gpu: 'H100-SXM',
  nodes: 2,
  gpusPerNode: 4,
  intraNode: 'nvswitch',
  nic: { gbps: 400, perNode: 4 },
};

/** A run made by the simulator on `spec`, each size's time multiplied by `slowdown(bytes)`. */
function runOn(spec: SystemSpec, sizes: readonly number[], slowdown: (bytes: number) => number): Measurement {
  const ranks = spec.nodes * spec.gpusPerNode;
  return {
    kind: 'nccl-tests',
    collective: 'allreduce',
    ranks,
    rows: sizes.map((bytes) => {
      const timeUs = asMicros(simulateCollective(spec, { bytes: asBytes(bytes) }).timeUs * slowdown(bytes));
      const algbwGBps = asGBps(bytes / timeUs / 1e3);
      return { bytes: asBytes(bytes), timeUs, algbwGBps, busbwGBps: asGBps((algbwGBps * 2 * (ranks - 1)) / ranks) };
    }),
    meta: {},
  };
}

const SIZES = [64 * 1024, 4 * MiB, 256 * MiB];
/** A NIC at 0.85 of line rate (fitted), and a run three times slower than any healthy system (explained, not fitted). */
const CASES: readonly { name: string; measurement: Measurement; unexplained: boolean }[] = [
  {
    name: 'a slow NIC',
    measurement: runOn({ ...twoNodes, overrides: { nicGBps: asGBps(0.85 * 50) } }, SIZES, () => 1),
    unexplained: false,
  },
  {
    name: 'a run no bounded system explains',
    measurement: runOn(twoNodes, SIZES, (bytes) => (bytes >= MiB ? 3 : 1)),
    unexplained: true,
  },
];
/** The pool's workers: two where there are two cores, none on one core (the serial fallback). */
const WORKERS = CORES > 1 ? 2 : 0;
const needsCores = CORES > 1 ? needsBuild : 'one core: the pool never starts';

test(
  "calibrate's rows on worker threads fit the serial fit's system, byte for byte",
  { skip: needsBuild },
  async () => {
    for (const { name, measurement, unexplained } of CASES) {
      const serial = calibrateSystem(measurement, twoNodes);
      assert.equal(serial.unexplained !== undefined, unexplained, `${name}: the case takes the path it names`);
      const progress: string[] = [];
      const parallel = await calibrateInParallel(
        measurement,
        twoNodes,
        { onProgress: (done, total, label) => progress.push(`${done}/${total} ${label}`) },
        { jobs: 2, workerScript: WORKER, minBatchCpuMs: 0 },
      );
      assert.equal(parallel.workers, WORKERS, `${name}: the rows ran on worker threads`);
      assert.equal(JSON.stringify(parallel.result), JSON.stringify(serial), name);
      assert.equal(progress.length, 8, `${name}: every round reports progress`);
    }
  },
);

test('the pool starts only for costly batches and never with --jobs 1', { skip: needsBuild }, async () => {
  const measurement = CASES[0].measurement;
  const serial = JSON.stringify(calibrateSystem(measurement, twoNodes));
  for (const pool of [
    { jobs: 1, workerScript: WORKER, minBatchCpuMs: 0 },
    { jobs: 2, workerScript: WORKER, minBatchCpuMs: Infinity },
  ]) {
    const run = await calibrateInParallel(measurement, twoNodes, {}, pool);
    assert.equal(run.workers, 0, JSON.stringify(pool));
    assert.equal(JSON.stringify(run.result), serial);
  }
});

test('one set of worker threads serves every batch of a search', { skip: needsBuild }, async () => {
  const started: Worker[] = [];
  const pool = new WorkerPool(WORKER, 2, { onWorker: (worker) => started.push(worker) });
  try {
    const spec = twoNodes;
    for (const bytes of [1024, MiB, 64 * MiB]) {
      const tasks = [0, 1, 2].map((i) => ({
        kind: 'collective' as const,
        spec,
        request: { bytes: asBytes(bytes * (i + 1)) },
      }));
      const results = await pool.run(tasks);
      assert.deepEqual(
        results.map((r) => r.timeUs),
        tasks.map((t) => simulateCollective(spec, t.request).timeUs),
      );
    }
    assert.equal(started.length, 2);
  } finally {
    pool.close();
  }
  await assert.rejects(pool.run([]), /closed/);
});

/** Starts a search forced onto two workers, cancels it with `cancel` once a worker is up, checks every thread ends. */
async function cancelled(cancel: (controller: AbortController) => void, stopOnSigint: boolean): Promise<void> {
  const controller = new AbortController();
  const exits: Promise<number>[] = [];
  const run = calibrateInParallel(
    CASES[0].measurement,
    twoNodes,
    {},
    {
      jobs: 2,
      workerScript: WORKER,
      minBatchCpuMs: 0,
      signal: controller.signal,
      stopOnSigint,
      onWorker: (worker) => {
        exits.push(new Promise((resolve) => worker.once('exit', resolve)));
        if (exits.length === 1) setImmediate(() => cancel(controller));
      },
    },
  );
  await assert.rejects(run, CancelledError);
  assert.ok(exits.length >= 1, 'the workers started');
  // Every worker thread ends (terminate() makes it exit); a leaked one would keep this promise pending.
  await Promise.all(exits);
}

test('aborting the signal ends a parallel calibrate and every worker', { skip: needsCores }, async () => {
  await cancelled((controller) => controller.abort(), false);
});

test(
  'SIGINT ends a parallel calibrate and every worker, and the listener is removed',
  { skip: needsCores },
  async () => {
    const before = process.listenerCount('SIGINT');
    await cancelled(() => process.emit('SIGINT'), true);
    assert.equal(process.listenerCount('SIGINT'), before);
  },
);

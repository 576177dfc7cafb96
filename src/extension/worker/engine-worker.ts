// The engine's long jobs (a training step, a bucket sweep) run in this worker thread, bundled on its own as
// dist/extension-worker.js. The extension host stays responsive while it works, and cancelling terminates the
// thread, which stops the computation at once (a synchronous simulation cannot be interrupted otherwise).
import { parentPort } from 'node:worker_threads';
import { gunzipSync } from 'node:zlib';
import { parseSweep, resolveSystem, simulateTrainingStep, stepTrace, sweepTraining } from '../../engine/index';
import { importMeasurementBytes, isGzip } from '../../native/import/index';
import { MAX_MEASUREMENT_BYTES } from '../glue/file-limits';
import { ncclFactsOf } from '../glue/measurement-view';
import type { EngineTask, EngineTaskResult, WorkerReply } from './engine-tasks';

function run(task: EngineTask): EngineTaskResult {
  switch (task.kind) {
    case 'profileStep': {
      const step = simulateTrainingStep(task.run);
      const trace = stepTrace(step, { title: task.title });
      return { kind: 'profileStep', step, trace, systemLabel: resolveSystem(task.run.system).label };
    }
    case 'stepSummary': {
      const step = simulateTrainingStep(task.run);
      return {
        kind: 'stepSummary',
        stepTimeUs: step.stepTimeUs,
        computeUs: step.computeUs,
        exposedCommUs: step.exposedCommUs,
        overlapPct: step.overlapPct,
        collectives: step.collectives.length,
        systemLabel: resolveSystem(task.run.system).label,
      };
    }
    case 'sweep': {
      const sweep = sweepTraining(task.run, parseSweep(task.range));
      return { kind: 'sweep', sweep, systemLabel: resolveSystem(task.run.system).label };
    }
    case 'importMeasurement': {
      const result = importMeasurementBytes(task.bytes, {
        fileName: task.fileName,
        gunzip: (bytes) => gunzipSync(bytes, { maxOutputLength: MAX_MEASUREMENT_BYTES }),
      });
      // Only NCCL_DEBUG output (never gzipped) is read again, for the facts the charts panel lists.
      const facts = isGzip(task.bytes) ? undefined : ncclFactsOf(result, new TextDecoder('utf-8').decode(task.bytes));
      return { kind: 'importMeasurement', result, ...(facts ? { facts } : {}) };
    }
  }
}

parentPort?.on('message', (task: EngineTask) => {
  let reply: WorkerReply;
  try {
    reply = { ok: true, result: run(task) };
  } catch (error) {
    const where = error as { line?: unknown; column?: unknown; file?: unknown };
    reply = {
      ok: false,
      name: error instanceof Error ? error.name : 'Error',
      message: error instanceof Error ? error.message : String(error),
      ...(typeof where.line === 'number' && typeof where.column === 'number'
        ? { line: where.line, column: where.column, ...(typeof where.file === 'string' ? { file: where.file } : {}) }
        : {}),
    };
  }
  parentPort!.postMessage(reply);
});

// The engine worker (dist/extension-worker.js) answers training tasks off the extension host's thread, and
// cancelling terminates it at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runEngineTask } from '../../../src/extension/worker/engine-client';
import { CancelledError } from '../../../src/extension/glue/cancel';
import { readTrainingConfig } from '../../../src/config/training-config';
import { assembleTrainingRun } from '../../../src/config/training-run';
import { parseHfModelConfig } from '../../../src/config/hf-model';
import { presetSystem, type TrainingRun } from '../../../src/engine/index';
import { importMeasurementBytes } from '../../../src/native/import/index';
import { configFormatOf } from '../../../src/extension/glue/lens-sites';
import { profileTitle, stepTimeText } from '../../../src/extension/glue/lens-label';
import { trainingAssumptions } from '../../../src/extension/glue/training-assumptions';
import { MODEL_PRESETS } from '../../../src/config/model-presets';
import type { Worker } from 'node:worker_threads';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const WORKER = join(ROOT, 'dist', 'extension-worker.js');
const skip =
  existsSync(WORKER) && existsSync(join(ROOT, 'examples', 'llama2-7b-ddp.collective.yaml'))
    ? false
    : 'needs `npm run build` and examples/';

function exampleRun(): TrainingRun {
  const file = join(ROOT, 'examples', 'llama2-7b-ddp.collective.yaml');
  const { part } = readTrainingConfig(readFileSync(file, 'utf8'), file);
  const modelFile = join(ROOT, 'examples', 'models', 'llama-2-7b', 'config.json');
  return assembleTrainingRun([
    {
      source: { format: 'hf-model', file: modelFile },
      model: parseHfModelConfig(readFileSync(modelFile, 'utf8'), modelFile),
    },
    part,
  ]);
}

test('a training step runs in the worker and comes back with its trace', { skip }, async () => {
  const { step, trace, systemLabel } = await runEngineTask(WORKER, {
    kind: 'profileStep',
    run: exampleRun(),
    title: 'example',
  });
  assert.ok(step.stepTimeUs > 0 && step.collectives.length > 0);
  assert.equal(trace.metadata.title, 'example');
  assert.ok(trace.spans.length > 0);
  assert.match(systemLabel, /H100/);
});

test('engine errors come back with their message', { skip }, async () => {
  await assert.rejects(
    runEngineTask(WORKER, { kind: 'sweep', run: exampleRun(), range: 'bucket_cap_mb=banana' }),
    /bucket_cap_mb=banana/,
  );
});

test('cancelling a sweep terminates the worker at once', { skip }, async () => {
  const controller = new AbortController();
  const started = performance.now();
  let worker: Worker | undefined;
  // onStart runs synchronously as the task starts, so the worker is known right after the call.
  const pending = runEngineTask(
    WORKER,
    { kind: 'sweep', run: exampleRun(), range: 'bucket_cap_mb=1..1024' },
    controller.signal,
    (w) => {
      worker = w;
    },
  );
  const exited = new Promise((resolve) => worker!.once('exit', resolve));
  setTimeout(() => controller.abort(), 100);
  await assert.rejects(pending, (e: unknown) => e instanceof CancelledError);
  assert.ok(performance.now() - started < 1000, 'rejected soon after the abort, not when the sweep would have ended');
  await exited;
  assert.equal(worker!.threadId, -1, 'the worker thread has ended');
  await assert.rejects(
    runEngineTask(WORKER, { kind: 'sweep', run: exampleRun(), range: 'bucket_cap_mb=1..4' }, controller.signal),
    CancelledError,
  );
});

test(
  'a Hugging Face config.json: its Profile lens, the command and its panel give one step time',
  { skip },
  async () => {
    // As loadTrainingRun reads it in the editor: the model from the file, the selected system from the settings.
    const file = join(ROOT, 'examples', 'models', 'llama-2-7b', 'config.json');
    const { format, part } = readTrainingConfig(readFileSync(file, 'utf8'), file);
    assert.equal(format, 'hf-model');
    assert.equal(configFormatOf(file, readFileSync(file, 'utf8')), 'hf-model', 'the file gets the config lenses');
    const run = assembleTrainingRun([
      { source: { format: 'settings', file: 'collectiveProfiler.system' }, system: presetSystem('dgx-h100')! },
      part,
    ]);
    const lens = await runEngineTask(WORKER, { kind: 'stepSummary', run });
    const command = await runEngineTask(WORKER, { kind: 'profileStep', run, title: 'config.json' });
    assert.equal(lens.stepTimeUs, command.step.stepTimeUs);
    assert.equal(lens.exposedCommUs, command.step.exposedCommUs);
    const figure = stepTimeText(command.step);
    assert.ok(profileTitle(lens).includes(`step ≈ ${figure}`), profileTitle(lens));
    // The panel's Assumptions card says the model came from the file and what else was assumed.
    const card = trainingAssumptions(run, 'profile', 'config.json', {}, MODEL_PRESETS);
    assert.deepEqual(
      card.fields.map((f) => [f.key, f.origin]),
      [
        ['model', 'config'],
        ['sequenceLength', 'default'],
        ['microBatchSize', 'default'],
        ['computeEfficiencyPct', 'default'],
        ['bucketMiB', 'default'],
      ],
    );
  },
);
/** A Kineto-like trace of about `totalBytes`: compute kernels, and an NCCL AllReduce in every fifty. */
function syntheticKineto(totalBytes: number): Uint8Array {
  const events: string[] = [];
  let size = 0;
  for (let i = 0; size < totalBytes; i++) {
    const nccl = i % 50 === 0;
    const event = nccl
      ? `{"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)","pid":0,"tid":7,"ts":${1000 + i * 3},"dur":2.5,"args":{"In msg nelems":1048576,"Out msg nelems":1048576,"dtype":"Float","Group size":8,"stream":7}}`
      : `{"ph":"X","cat":"kernel","name":"elementwise_kernel","pid":0,"tid":7,"ts":${1000 + i * 3},"dur":2.5,"args":{"stream":7,"correlation":${i}}}`;
    events.push(event);
    size += event.length + 1;
  }
  return new TextEncoder().encode(`{"distributedInfo":{"rank":0,"world_size":8},"traceEvents":[${events.join(',')}]}`);
}

test(
  'a measurement parses in the worker exactly as on the host, with its parse errors positioned',
  { skip },
  async () => {
    const bytes = syntheticKineto(256 * 1024);
    const { result } = await runEngineTask(WORKER, { kind: 'importMeasurement', bytes, fileName: '/tmp/trace.json' });
    const host = importMeasurementBytes(bytes, { fileName: '/tmp/trace.json' });
    assert.equal(result.kind, 'kineto');
    assert.deepEqual(result.measurements, host.measurements);
    assert.equal(result.trace?.spans.length, host.trace?.spans.length);
    await assert.rejects(
      runEngineTask(WORKER, {
        kind: 'importMeasurement',
        bytes: new TextEncoder().encode('{"traceEvents": [ {"ph": "X",, } ]}'),
        fileName: '/tmp/broken.json',
      }),
      (error: Error & { line?: number; column?: number; file?: string }) =>
        error.name === 'MeasurementParseError' &&
        error.line === 1 &&
        error.column! > 1 &&
        error.file === '/tmp/broken.json',
    );
  },
);

test('cancelling a long parse terminates the worker at once, and nothing comes back', { skip }, async () => {
  const bytes = syntheticKineto(64 * 1024 * 1024);
  const controller = new AbortController();
  let worker: Worker | undefined;
  const started = performance.now();
  const pending = runEngineTask(
    WORKER,
    { kind: 'importMeasurement', bytes, fileName: 'big.json' },
    controller.signal,
    (w) => {
      worker = w;
    },
  );
  const exited = new Promise((resolve) => worker!.once('exit', resolve));
  setTimeout(() => controller.abort(), 200);
  await assert.rejects(pending, (e: unknown) => e instanceof CancelledError);
  assert.ok(performance.now() - started < 2000, 'rejected soon after the abort');
  await exited;
  assert.equal(worker!.threadId, -1, 'the worker thread has ended');
});

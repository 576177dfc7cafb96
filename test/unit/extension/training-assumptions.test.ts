// The charts panel's Assumptions card (issue 14): it names what a profile assumed and where every value came
// from, and a value changed there re-runs the same config with that value on top of every file, through the same
// checks as a file. The card's form reading is checked here too, and the protocol's bounds against the config
// limits, so a value the panel sends is held to what a config may say.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simulateTrainingStep } from '../../../src/engine/index';
import { readTrainingConfig } from '../../../src/config/training-config';
import { assembleTrainingRun } from '../../../src/config/training-run';
import { MODEL_PRESETS, modelPreset } from '../../../src/config/model-presets';
import { LIMITS } from '../../../src/config/limits';
import type { RunPart } from '../../../src/config/run-part';
import { changesPart, mergeChanges, trainingAssumptions } from '../../../src/extension/glue/training-assumptions';
import {
  ASSUMPTION_BOUNDS,
  isValidationError,
  validateWebviewMessage,
  type TrainingChanges,
} from '../../../src/protocol';
import { changedValues } from '../../../webview/charts/assumptions';

const EXAMPLES = join(import.meta.dirname, '..', '..', '..', 'examples');

/** The DeepSpeed example: it names no model and no sequence length, and states its batch arithmetic. */
function deepSpeedRun(changes: TrainingChanges = {}) {
  const file = join(EXAMPLES, 'ds_config.json');
  const { part } = readTrainingConfig(readFileSync(file, 'utf8'), file);
  const last = changesPart(changes, modelPreset, MODEL_PRESETS);
  return assembleTrainingRun(last ? [part, last] : [part]);
}

const field = (card: ReturnType<typeof trainingAssumptions>, key: string) => card.fields.find((f) => f.key === key)!;

test('the card shows each value the run used and whether a config, a default or the panel gave it', () => {
  const run = deepSpeedRun();
  const card = trainingAssumptions(run, 'profile', 'ds_config.json', {}, MODEL_PRESETS);
  assert.equal(card.command, 'profile');
  assert.deepEqual(
    card.fields.map((f) => [f.key, f.value, f.origin]),
    [
      ['model', 'llama-2-7b', 'default'],
      ['sequenceLength', 4096, 'default'],
      ['microBatchSize', 4, 'config'],
      ['computeEfficiencyPct', 45, 'default'],
      ['bucketMiB', 953.674, 'config'], // 5e8 bf16 elements, rounded to 1 KiB
    ],
  );
  assert.deepEqual(field(card, 'model').choices, MODEL_PRESETS);
  // What the fields show is not repeated in words; the rest of the defaults are, and none advises a CLI flag.
  assert.ok(!card.others.some((line) => /sequence length|^model |compute at/.test(line)), card.others.join('; '));
  assert.ok(card.others.length > 0 && card.others.length < run.assumed.length);
  assert.ok(!card.others.some((line) => /--\w/.test(line)), card.others.join('; '));
});

test('a changed value is applied over every file, shown as set in the panel, and changes the profile', () => {
  const before = deepSpeedRun();
  const changes: TrainingChanges = { sequenceLength: 1024, computeEfficiencyPct: 30, model: 'gpt2' };
  const after = deepSpeedRun(changes);
  assert.equal(after.training.sequenceLength, 1024);
  assert.equal(after.training.computeEfficiency, 0.3);
  assert.equal(after.model.name, 'gpt2');
  // Everything else is what the files said.
  assert.equal(after.training.microBatchSize, before.training.microBatchSize);
  assert.equal(after.training.bucketBytes, before.training.bucketBytes);
  const card = trainingAssumptions(after, 'profile', 'ds_config.json', changes, MODEL_PRESETS);
  assert.deepEqual(
    card.fields.map((f) => f.origin),
    ['panel', 'panel', 'config', 'panel', 'config'],
  );
  assert.ok(!after.assumed.some((line) => /sequence length|compute at|^model /.test(line)));
  // The re-run is a different step: a smaller model on shorter sequences computes for less time.
  assert.ok(simulateTrainingStep(after).computeUs < simulateTrainingStep(before).computeUs / 4);
});

test('a value the config contradicts is refused with the reason, as it would be in a file', () => {
  // The example states 512 = 4 × 8 × 16 GPUs; a micro-batch of 3 breaks that arithmetic.
  assert.throws(() => deepSpeedRun({ microBatchSize: 3 }), /global batch 512/);
  assert.throws(() => deepSpeedRun({ model: 'no-such-model' }), /unknown model preset 'no-such-model'.*llama-2-7b/);
});

test('a bucket in MiB becomes bytes; no changes make no part; later changes win', () => {
  const part = changesPart({ bucketMiB: 50 }, modelPreset, MODEL_PRESETS) as RunPart;
  assert.equal(part.training?.bucketBytes, 50 * 2 ** 20);
  assert.deepEqual(Object.keys(part.training ?? {}), ['bucketBytes'], 'absent keys stay absent');
  assert.equal(changesPart({}, modelPreset, MODEL_PRESETS), undefined);
  assert.deepEqual(mergeChanges({ bucketMiB: 50, sequenceLength: 10 }, { bucketMiB: 8 }), {
    bucketMiB: 8,
    sequenceLength: 10,
  });
});

test('FSDP has no gradient bucket to change, so its card has no bucket field', () => {
  const file = join(EXAMPLES, 'gpt2-fsdp.collective.json');
  const { part } = readTrainingConfig(readFileSync(file, 'utf8'), file);
  const parts: RunPart[] = (part.references ?? []).map((ref) => ({
    source: { format: 'hf-model', file: ref.path },
    model: modelPreset('gpt2'),
  }));
  const run = assembleTrainingRun([...parts, part]);
  assert.equal(run.training.wrapper, 'fsdp');
  const card = trainingAssumptions(run, 'sweep', 'gpt2-fsdp.collective.json', {}, MODEL_PRESETS);
  assert.ok(!card.fields.some((f) => f.key === 'bucketMiB'));
});

test('the form sends only edited values, within the bounds, and says what is wrong otherwise', () => {
  const card = trainingAssumptions(deepSpeedRun(), 'profile', 'ds_config.json', {}, MODEL_PRESETS);
  const entered = Object.fromEntries(card.fields.map((f) => [f.key, String(f.value)]));
  assert.deepEqual(changedValues(card.fields, entered), { error: 'Nothing changed: edit a value first.' });
  assert.deepEqual(changedValues(card.fields, { ...entered, sequenceLength: ' 2048 ', model: 'gpt2' }), {
    changes: { model: 'gpt2', sequenceLength: 2048 },
  });
  assert.deepEqual(changedValues(card.fields, { ...entered, computeEfficiencyPct: '45.0' }), {
    error: 'Nothing changed: edit a value first.',
  });
  assert.match((changedValues(card.fields, { ...entered, sequenceLength: '1.5' }) as { error: string }).error, /whole/);
  assert.match((changedValues(card.fields, { ...entered, microBatchSize: 'x' }) as { error: string }).error, /number/);
  assert.match(
    (changedValues(card.fields, { ...entered, computeEfficiencyPct: '140' }) as { error: string }).error,
    /between 0.1 and 100/,
  );
  // What the form accepts, the host accepts.
  const accepted = changedValues(card.fields, { ...entered, bucketMiB: '12.5', microBatchSize: '8' });
  assert.ok('changes' in accepted);
  assert.ok(!isValidationError(validateWebviewMessage({ type: 'rerunTraining', changes: accepted.changes })));
});

test('the host refuses a re-run message with unknown keys or values past the limits', () => {
  const refused: [unknown, RegExp][] = [
    [{ type: 'rerunTraining' }, /missing field "changes"/],
    [{ type: 'rerunTraining', changes: [] }, /must be an object/],
    [{ type: 'rerunTraining', changes: { system: 'x' } }, /unexpected field "system"/],
    [{ type: 'rerunTraining', changes: { sequenceLength: 0 } }, /sequenceLength must be between/],
    [{ type: 'rerunTraining', changes: { sequenceLength: 2 ** 23 } }, /sequenceLength must be between/],
    [{ type: 'rerunTraining', changes: { computeEfficiencyPct: Number.NaN } }, /finite/],
    [{ type: 'rerunTraining', changes: { model: '../../etc/passwd' } }, /preset name/],
    [{ type: 'rerunTraining', changes: { model: 'x'.repeat(65) } }, /at most 64/],
    [{ type: 'rerunTraining', changes: {}, extra: 1 }, /unexpected field "extra"/],
  ];
  for (const [message, reason] of refused) {
    const result = validateWebviewMessage(message);
    assert.ok(isValidationError(result), `accepted ${JSON.stringify(message)}`);
    assert.match(result.error, reason);
  }
  assert.deepEqual(validateWebviewMessage({ type: 'rerunTraining', changes: {} }), {
    type: 'rerunTraining',
    changes: {},
  });
});

test("the protocol's bounds are the config layer's limits", () => {
  assert.equal(ASSUMPTION_BOUNDS.sequenceLength.max, LIMITS.sequenceLength.max);
  assert.equal(ASSUMPTION_BOUNDS.microBatchSize.max, LIMITS.batch.max);
  assert.equal(ASSUMPTION_BOUNDS.bucketMiB.max, LIMITS.bucketMiB.max);
});

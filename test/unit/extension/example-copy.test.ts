// Profile Example's untitled copy must describe the same training run as the bundled file it was made from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EXAMPLE_CONFIG, untitledExampleText } from '../../../src/extension/glue/example-copy';
import { MODEL_PRESETS } from '../../../src/config/model-presets';
import { readTrainingConfig } from '../../../src/config/training-config';
import { parseHfModelConfig } from '../../../src/config/hf-model';
import { assembleTrainingRun } from '../../../src/config/training-run';
import { ROOT } from '../cli/run-cli';

test('the untitled example names no relative file and gives the same run as the bundled example', () => {
  const path = join(ROOT, EXAMPLE_CONFIG);
  const original = readFileSync(path, 'utf8');
  const copy = untitledExampleText(original, MODEL_PRESETS);
  assert.doesNotMatch(copy, /\$schema=|config:\s*models\//);
  const fromCopy = readTrainingConfig(copy, 'llama2-7b-ddp.collective.yaml').part;
  assert.deepEqual(fromCopy.references ?? [], []);
  // The bundled file reads its model from models/<name>/config.json next to it.
  const fromFile = readTrainingConfig(original, path).part;
  const [modelRef] = fromFile.references ?? [];
  assert.equal(modelRef?.kind, 'model');
  const modelText = readFileSync(join(path, '..', modelRef.path), 'utf8');
  const model = {
    source: { format: 'hf-model' as const, file: modelRef.path },
    model: parseHfModelConfig(modelText, modelRef.path),
  };
  const a = assembleTrainingRun([fromCopy]);
  const b = assembleTrainingRun([model, fromFile]);
  assert.deepEqual({ ...a.model, name: '' }, { ...b.model, name: '' });
  assert.deepEqual(a.training, b.training);
  assert.deepEqual(a.system, b.system);
});

test('a model that is not a preset is left for the loader to report at its line', () => {
  const text = 'model:\n  config: models/my-own-model/config.json\n';
  assert.match(untitledExampleText(text, MODEL_PRESETS), /config: models\/my-own-model\/config\.json/);
});

// CP007 on DeepSpeed JSON configs: positions, messages, fixes that keep the JSON valid, and bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeDeepSpeedConfig, applyEdits } from '../../../src/analysis/index';

const CONFIG = `{
  "train_batch_size": 256,
  "fp16": { "enabled": true },
  "prescale_gradients": true,
  "gradient_predivide_factor": 8.0,
  "zero_optimization": { "stage": 1 }
}
`;

test('prescale_gradients with a pre-divide factor: the factor is ignored, reported at its key', () => {
  const { findings } = analyzeDeepSpeedConfig(CONFIG);
  assert.equal(findings.length, 1);
  const f = findings[0];
  assert.equal(f.code, 'CP007');
  assert.deepEqual([f.range.startLine, f.range.startColumn], [4, 2]);
  assert.match(f.message, /gradient_predivide_factor 8 has no effect with prescale_gradients: true/);
  assert.deepEqual(
    f.related.map((r) => r.range.startLine),
    [3],
  );
  for (const fix of f.fixes) {
    const fixed = applyEdits(CONFIG, fix.edits);
    assert.doesNotThrow(() => JSON.parse(fixed));
    assert.deepEqual(analyzeDeepSpeedConfig(fixed).findings, [], fix.title);
  }
});

test('the default postscale path with a factor is fine; so is a config without either key', () => {
  assert.deepEqual(analyzeDeepSpeedConfig('{"gradient_predivide_factor": 4.0}').findings, []);
  assert.deepEqual(analyzeDeepSpeedConfig('{"train_batch_size": 8}').findings, []);
});

test('invalid factors and non-boolean prescale_gradients are errors', () => {
  const zero = analyzeDeepSpeedConfig('{"gradient_predivide_factor": 0}').findings;
  assert.equal(zero[0].severity, 'error');
  assert.match(zero[0].message, /must be a positive number/);
  const text = '{"prescale_gradients": "yes"}';
  const bad = analyzeDeepSpeedConfig(text).findings;
  assert.match(bad[0].message, /must be true or false/);
  assert.deepEqual(analyzeDeepSpeedConfig(applyEdits(text, bad[0].fixes[0].edits)).findings, []);
});

test('broken JSON gives a positioned note and no exception', () => {
  const r = analyzeDeepSpeedConfig('{\n  "prescale_gradients": true,\n}');
  assert.deepEqual(r.findings, []);
  assert.match(r.notes[0], /not valid JSON at line 2, column 29: trailing comma/);
  assert.deepEqual(analyzeDeepSpeedConfig('').findings, []);
  assert.deepEqual(analyzeDeepSpeedConfig('[1, 2]').findings, []);
});

// Hugging Face config.json → model: parameter counts against the published figures, layer shapes, and
// positioned errors for configs the reader cannot use.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseHfModelConfig } from '../../../src/config/hf-model';
import { modelPreset, MODEL_PRESETS } from '../../../src/config/model-presets';
import { ConfigError } from '../../../src/config/positioned';
import { modelParameters } from '../../../src/engine/training/types';

const MODELS = resolve(import.meta.dirname, '..', '..', '..', 'examples', 'models');

function load(name: string) {
  const file = join(MODELS, name, 'config.json');
  return parseHfModelConfig(readFileSync(file, 'utf8'), file);
}

function rejected(text: string, fileName = 'config.json'): ConfigError {
  try {
    parseHfModelConfig(text, fileName);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the config to be rejected');
}

// Published parameter counts: GPT-2 small 124 M, BERT-base 110 M, Llama-2-7B 6.74 B, Llama-3-8B 8.03 B,
// Mistral-7B 7.24 B, Mixtral-8x7B 46.7 B, Llama-2-70B 69.0 B.
const PUBLISHED: readonly [string, number][] = [
  ['gpt2', 124e6],
  ['bert-base-uncased', 110e6],
  ['llama-2-7b', 6.74e9],
  ['llama-3-8b', 8.03e9],
  ['mistral-7b', 7.24e9],
  ['mixtral-8x7b', 46.7e9],
  ['llama-2-70b', 69.0e9],
];

for (const [name, published] of PUBLISHED) {
  test(`${name}: parameter count within 1% of the published ${published / 1e9} B`, () => {
    const count = modelParameters(load(name));
    const error = Math.abs(count - published) / published;
    assert.ok(error < 0.01, `${name}: ${count} parameters is ${(error * 100).toFixed(2)}% off ${published}`);
  });
}

test('exact counts for the architectures whose published counts are exact', () => {
  assert.equal(modelParameters(load('gpt2')), 124_439_808);
  assert.equal(modelParameters(load('llama-2-7b')), 6_738_415_616);
  assert.equal(modelParameters(load('llama-3-8b')), 8_030_261_248);
  assert.equal(modelParameters(load('mistral-7b')), 7_241_732_096);
});

test('every built-in preset equals the model read from its example config.json', () => {
  for (const name of MODEL_PRESETS) {
    const preset = modelPreset(name)!;
    const file = load(name);
    assert.equal(modelParameters(preset), modelParameters(file), name);
    assert.deepEqual(preset.layers, file.layers, name);
  }
});

test('layer shapes: Llama-3-8B has grouped-query k/v projections and an untied head', () => {
  const model = load('llama-3-8b');
  assert.equal(model.family, 'llama');
  assert.equal(model.layers.length, 32 + 2);
  const block = model.layers[1];
  const k = block.tensors.find((t) => t.name === 'self_attn.k_proj')!;
  assert.equal(k.params, 4096 * 1024);
  assert.equal(k.forwardFlopsPerToken, 2 * 4096 * 1024);
  const head = model.layers[model.layers.length - 1].tensors.find((t) => t.name === 'lm_head')!;
  assert.equal(head.params, 128256 * 4096);
});

test('Mixtral pays FLOPs for 2 of its 8 experts but holds all their parameters', () => {
  const model = load('mixtral-8x7b');
  const experts = model.layers[1].tensors.filter((t) => t.name.includes('experts.'));
  assert.equal(experts.length, 24);
  for (const t of experts) assert.equal(t.forwardFlopsPerToken, (2 * t.params * 2) / 8);
});

test('GPT-2 ties its head to the embedding: FLOPs without parameters', () => {
  const head = load('gpt2')
    .layers.at(-1)!
    .tensors.find((t) => t.name.startsWith('lm_head'))!;
  assert.equal(head.params, 0);
  assert.equal(head.forwardFlopsPerToken, 2 * 768 * 50257);
});

test('a config.json with no known architecture is a positioned error naming the key', () => {
  const error = rejected(
    '{\n  "architectures": ["FalconForCausalLM"],\n  "model_type": "falcon",\n  "hidden_size": 4544\n}\n',
  );
  assert.equal(error.line, 3);
  assert.equal(error.column, 17);
  assert.match(error.message, /unknown architecture: model_type 'falcon'/);
  assert.match(error.message, /supported families: gpt2, bert, llama, mistral, mixtral/);
  assert.match(error.toString(), /^config\.json:3:17: /);
});

test('a config.json with neither model_type nor architectures says so', () => {
  const error = rejected('{"hidden_size": 4096}');
  assert.match(error.message, /no model_type or architectures/);
  assert.equal(error.line, 1);
});

test('a misspelt model_type gets a suggestion', () => {
  const error = rejected('{"model_type": "lama", "hidden_size": 4096}');
  assert.match(error.message, /did you mean 'llama'/);
});

test('a wrong type is reported at the value with the key named', () => {
  const error = rejected(
    '{\n  "model_type": "llama",\n  "hidden_size": "4096",\n  "intermediate_size": 11008,\n  "num_hidden_layers": 32,\n  "num_attention_heads": 32,\n  "vocab_size": 32000\n}\n',
  );
  assert.equal(error.line, 3);
  assert.equal(error.column, 18);
  assert.match(error.message, /hidden_size: must be an integer/);
});

test('a negative size is reported at the value', () => {
  const error = rejected('{"model_type": "gpt2", "n_embd": 768, "n_layer": -12, "vocab_size": 50257}');
  assert.match(error.message, /n_layer: must be at least 1/);
  assert.equal(error.column, 50);
});

test('a missing required dimension is named', () => {
  const error = rejected(
    '{"model_type": "mistral", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000}',
  );
  assert.match(error.message, /missing required key 'intermediate_size'/);
});

// Hostile and random training configs: whatever the text, reading it either succeeds or fails with a
// positioned ConfigError; nothing else escapes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { readTrainingConfig } from '../../../src/config/training-config';
import { assembleTrainingRun } from '../../../src/config/training-run';
import { ConfigError } from '../../../src/config/positioned';

const NAMES = ['x.collective.yaml', 'x.collective.json', 'ds_config.json', 'accelerate.yaml', 'config.json', 'run.sh'];
const KEYS = [
  'model',
  'training',
  'system',
  'engine',
  'preset',
  'config',
  'parameters',
  'micro_batch_size',
  'bucket_cap_mb',
  'wrapper',
  'nodes',
  'gpusPerNode',
  'gpu',
  'train_batch_size',
  'train_micro_batch_size_per_gpu',
  'gradient_accumulation_steps',
  'zero_optimization',
  'stage',
  'fp16',
  'bf16',
  'enabled',
  'reduce_bucket_size',
  'distributed_type',
  'num_processes',
  'num_machines',
  'mixed_precision',
  'model_type',
  'architectures',
  'hidden_size',
  'num_hidden_layers',
  'num_attention_heads',
  'intermediate_size',
  'vocab_size',
  'num_key_value_heads',
  'n_embd',
  'n_layer',
];

const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.integer({ min: -3, max: 70000 }),
    fc.double({ noNaN: false }),
    fc.boolean(),
    fc.constant(null),
    fc.constantFrom(
      'auto',
      'llama',
      'gpt2',
      'MULTI_GPU',
      'FSDP',
      'DEEPSPEED',
      'bf16',
      'ddp',
      'zero3',
      'dgx-h100',
      'H100-SXM',
      'LlamaForCausalLM',
      '',
    ),
    fc.string(),
  ),
  node: fc.oneof(
    { depthSize: 'small' },
    tie('leaf'),
    fc.array(tie('node'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('node'), { maxKeys: 6 }),
  ),
})).node;

function readsCleanly(text: string, name: string): void {
  try {
    assembleTrainingRun([readTrainingConfig(text, name).part]);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    assert.ok(error.line >= 1 && error.column >= 1 && error.message.length > 0, error.toString());
  }
}

test('random documents built from real keys: a run or a positioned ConfigError, never a crash', () => {
  let tried = 0;
  fc.assert(
    fc.property(
      fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 8 }),
      fc.constantFrom(...NAMES),
      (doc, name) => {
        tried++;
        readsCleanly(JSON.stringify(doc, null, 1), name);
      },
    ),
    { numRuns: 400 },
  );
  console.log(`# ${tried} generated training configs`);
});

test('random text, including shell-like lines: a run or a positioned ConfigError', () => {
  const line = fc.oneof(
    fc.string(),
    fc.constantFrom(
      'torchrun --nnodes=2 --nproc_per_node=8 train.py',
      'srun -N 4 python x.py',
      '#SBATCH --nodes=$N',
      'NNODES=',
      'torchrun --nnodes',
      '{',
      'a: [',
      'model: {preset: gpt2}',
    ),
  );
  fc.assert(
    fc.property(fc.array(line, { maxLength: 6 }), fc.constantFrom(...NAMES), (lines, name) =>
      readsCleanly(lines.join('\n'), name),
    ),
    { numRuns: 400 },
  );
});

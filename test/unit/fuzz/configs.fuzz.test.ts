// Fuzzes every config reader: system files (YAML and JSON), the extension's own *.collective.yaml, DeepSpeed and
// Accelerate configs, Hugging Face config.json and torchrun/srun launch scripts. Seeds are the repository's
// examples, mutated byte by byte, plus documents generated key by key from the schemas' vocabulary with values
// that are sometimes right and sometimes hostile.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { parseSystemFile } from '../../../src/config/system-file';
import { readTrainingConfig } from '../../../src/config/training-config';
import { assembleTrainingRun } from '../../../src/config/training-run';
import { parseDocument } from '../../../src/config/positioned';
import { analyzeDeepSpeedConfig } from '../../../src/analysis/index';
import { checkInput, fuzz, reportCounts } from './harness';
import { mutatedText } from './mutate';
import { systemFileSeeds, trainingConfigSeeds } from './seeds';
import { FUZZ_PLAN } from './plan';

after(() => reportCounts('configs'));

/** A value that is usually plausible for a config key and sometimes hostile. */
const value = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: -2, max: 5000 }) },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, Infinity, 2 ** 53, 65536, 0.5, 1e-9, Number.MAX_SAFE_INTEGER) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'H100-SXM',
      'A100-SXM',
      'h100',
      'RTX4090',
      'B200',
      'nvswitch',
      'pcie',
      'nvlink-mesh',
      'uniform-ring',
      'ring',
      'auto',
      'bf16',
      'zero3',
      'ddp',
      'gpt2',
      'llama-2-7b',
      'auto',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.array(fc.integer(), { maxLength: 3 }) },
);

function objectOf(keys: readonly string[], maxKeys = keys.length): fc.Arbitrary<Record<string, unknown>> {
  return fc.dictionary(
    fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...keys) }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }),
    value,
    { maxKeys },
  );
}

const SYSTEM_KEYS = [
  'name',
  'gpu',
  'nodes',
  'gpusPerNode',
  'intraNode',
  'nvls',
  'p2p',
  'pcieGen',
  'gpusPerSocket',
  'gpusPerPcieSwitch',
];
const NIC_KEYS = ['gbps', 'perNode', 'latencyUs'];
const OVERRIDE_KEYS = [
  'nvlinkGBpsPerLink',
  'nvlinkLinks',
  'pcieGBps',
  'interSocketGBps',
  'nicGBps',
  'hbmGBps',
  'linkGBps',
  'launchUs',
];

const systemDocument = fc
  .record({
    top: objectOf(SYSTEM_KEYS, 2),
    nic: fc.option(objectOf(NIC_KEYS, 1), { nil: undefined }),
    overrides: fc.option(objectOf(OVERRIDE_KEYS, 2), { nil: undefined }),
    json: fc.boolean(),
  })
  .map(({ top, nic, overrides, json }) => {
    // Starting from a valid system keeps most documents past the schema, into the catalogue and engine checks.
    const base = { gpu: 'H100-SXM', nodes: 2, gpusPerNode: 8, intraNode: 'nvswitch', nic: { gbps: 400, perNode: 8 } };
    const doc: Record<string, unknown> = {
      ...base,
      ...top,
      ...(nic ? { nic } : {}),
      ...(overrides ? { overrides } : {}),
    };
    // Building the topology of thousands of nodes takes the engine seconds (4096 nodes: about 5 s, the schema's
    // 100,000: minutes), a known cost outside the parsers; generated documents stay below it so CI times parsing.
    if (typeof doc.nodes === 'number' && doc.nodes > 256) doc.nodes = doc.nodes % 257;
    return json
      ? { name: 'gen.system.json', text: JSON.stringify(doc, null, 2) }
      : { name: 'gen.system.yaml', text: stringify(doc) };
  });

const TRAINING_KEYS = [
  'global_batch_size',
  'micro_batch_size',
  'gradient_accumulation_steps',
  'sequence_length',
  'grad_dtype',
  'bucket_cap_mb',
  'wrapper',
  'overlap_comm',
  'reduce_op',
  'lr_rule',
  'base_lr',
  'algorithm',
  'protocol',
];
const DEEPSPEED_KEYS = [
  'train_batch_size',
  'train_micro_batch_size_per_gpu',
  'gradient_accumulation_steps',
  'fp16',
  'bf16',
  'zero_optimization',
  'gradient_predivide_factor',
  'prescale_gradients',
  'communication_data_type',
];
const ZERO_KEYS = [
  'stage',
  'reduce_bucket_size',
  'allgather_bucket_size',
  'overlap_comm',
  'contiguous_gradients',
  'reduce_scatter',
];
const ACCELERATE_KEYS = [
  'compute_environment',
  'distributed_type',
  'num_machines',
  'num_processes',
  'mixed_precision',
  'machine_rank',
  'gpu_ids',
  'deepspeed_config',
  'fsdp_config',
];
const HF_KEYS = [
  'model_type',
  'architectures',
  'hidden_size',
  'num_hidden_layers',
  'num_attention_heads',
  'intermediate_size',
  'vocab_size',
  'max_position_embeddings',
  'num_key_value_heads',
  'n_embd',
  'n_layer',
  'num_local_experts',
];

const trainingDocument = fc.oneof(
  fc
    .record({
      model: objectOf(['preset', 'parameters', 'layers', 'hidden_size', 'vocab_size']),
      training: objectOf(TRAINING_KEYS),
      system: fc.oneof(value, objectOf(SYSTEM_KEYS)),
      engine: value,
    })
    .map((doc) => ({ name: 'gen.collective.yaml', text: stringify(doc) })),
  fc
    .record({ top: objectOf(DEEPSPEED_KEYS), zero: objectOf(ZERO_KEYS) })
    .map(({ top, zero }) => ({ name: 'ds_config.json', text: JSON.stringify({ ...top, zero_optimization: zero }) })),
  objectOf(ACCELERATE_KEYS).map((doc) => ({ name: 'accelerate_config.yaml', text: stringify(doc) })),
  objectOf(HF_KEYS).map((doc) => ({ name: 'config.json', text: JSON.stringify({ model_type: 'llama', ...doc }) })),
  fc
    .array(
      fc.constantFrom(
        'torchrun',
        'srun',
        '#SBATCH',
        '--nnodes=2',
        '--nproc_per_node=8',
        '--nproc-per-node',
        '$GPUS',
        '${N:-4}',
        '-N',
        '4',
        '--gres=gpu:h100:8',
        '2:4',
        '1-4',
        '-m',
        'torch.distributed.run',
        'train.py',
        '\\',
        '\n',
        'NNODES=3',
        'GPUS=${X}',
        '--ntasks-per-node=0',
        '#',
      ),
      { maxLength: 30 },
    )
    .map((words) => ({ name: 'train.sh', text: `#!/bin/bash\n${words.join(' ')}\n` })),
);

/** Reads a training config the way `profile` does: recognise it, then assemble a run from it alone. */
function readAndAssemble(text: string, name: string): unknown {
  const { part } = readTrainingConfig(text, name);
  return assembleTrainingRun([part]);
}

test('system files: mutated examples and generated documents', () => {
  const seeds = systemFileSeeds();
  assert.ok(seeds.length >= 3, 'examples/systems holds the seed system files');
  fuzz(mutatedText(seeds), FUZZ_PLAN.systemMutated, ({ name, text }) => {
    checkInput('system file (mutated)', text, () => parseSystemFile(text, name));
  });
  fuzz(systemDocument, FUZZ_PLAN.systemGenerated, ({ name, text }) => {
    checkInput('system file (generated)', text, () => parseSystemFile(text, name));
  });
});

test('training configs: collective, DeepSpeed, Accelerate, config.json and launch scripts', () => {
  const seeds = trainingConfigSeeds();
  assert.ok(seeds.length >= 8, 'examples/ holds collective, DeepSpeed, Accelerate, launcher and model configs');
  fuzz(mutatedText(seeds), FUZZ_PLAN.trainingMutated, ({ name, text }) => {
    checkInput('training config (mutated)', text, () => readAndAssemble(text, name));
  });
  fuzz(trainingDocument, FUZZ_PLAN.trainingGenerated, ({ name, text }) => {
    checkInput('training config (generated)', text, () => readAndAssemble(text, name));
  });
});

test('the DeepSpeed scaling rule survives any JSON-ish text', () => {
  const seeds = trainingConfigSeeds().filter((s) => /ds_config/.test(s.name));
  fuzz(mutatedText(seeds), FUZZ_PLAN.deepSpeedRule, ({ text }) => {
    checkInput(
      'DeepSpeed rule (CP007)',
      text,
      () => analyzeDeepSpeedConfig(text),
      (result) => {
        const bad = result.notes.find((n) => /stopped early/.test(n));
        return bad ? `an internal error was swallowed: ${bad}` : undefined;
      },
    );
  });
});

test('raw YAML and JSON: arbitrary strings and nested values never escape the positioned parser', () => {
  const text = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.string({ unit: 'binary', maxLength: 80 }),
    fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v) ?? 'null'),
  );
  fuzz(
    fc.tuple(text, fc.constantFrom('a.yaml', 'a.json', 'a.system.yaml', 'noext')),
    FUZZ_PLAN.rawDocuments,
    ([t, name]) => {
      checkInput('YAML/JSON document', t, () => parseDocument(t, name));
    },
  );
});

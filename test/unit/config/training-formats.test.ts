// Every training-config format read into one TrainingRun: DeepSpeed, Accelerate, torchrun/srun scripts and the
// extension's own *.collective.yaml, with the defaults they leave stated, and positioned errors for bad files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readTrainingConfig } from '../../../src/config/training-config';
import { assembleTrainingRun } from '../../../src/config/training-run';
import { parseLauncherScript } from '../../../src/config/launcher';
import { ConfigError } from '../../../src/config/positioned';
import type { RunPart } from '../../../src/config/run-part';

const EXAMPLES = resolve(import.meta.dirname, '..', '..', '..', 'examples');
const example = (name: string) => readTrainingConfig(readFileSync(join(EXAMPLES, name), 'utf8'), join(EXAMPLES, name));

function rejected(work: () => unknown): ConfigError {
  try {
    work();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the config to be rejected');
}

test('DeepSpeed: ZeRO-2 with overlap, bf16 communication, buckets in elements, world size from the batch', () => {
  const { format, part } = example('ds_config.json');
  assert.equal(format, 'deepspeed');
  const run = assembleTrainingRun([part]);
  assert.equal(run.training.wrapper, 'zero2');
  assert.equal(run.training.overlapComm, true);
  assert.equal(run.training.gradDtype, 'bf16');
  assert.equal(run.training.bucketBytes, 5e8 * 2);
  assert.equal(run.training.allgatherBucketBytes, 5e8 * 2);
  assert.equal(run.training.firstBucketBytes, 0);
  assert.equal(run.training.microBatchSize, 4);
  assert.equal(run.training.gradAccumulationSteps, 8);
  assert.equal(run.system.nodes * run.system.gpusPerNode, 16);
  assert.ok(
    run.assumed.some((a) => /world size 16/.test(a)),
    run.assumed.join('; '),
  );
  assert.ok(run.assumed.some((a) => /no model given/.test(a)));
});

test('DeepSpeed: stage 0 all-reduces after backward; fp16 sets 2-byte gradients; "auto" leaves a default', () => {
  const { part } = readTrainingConfig(
    '{"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": "auto", "fp16": {"enabled": true}}',
    'ds_config.json',
  );
  const run = assembleTrainingRun([part]);
  assert.equal(run.training.wrapper, 'ddp');
  assert.equal(run.training.overlapComm, false);
  assert.equal(run.training.gradDtype, 'fp16');
  assert.equal(run.training.bucketBytes, 5e8 * 2);
  assert.ok(run.notes.some((n) => /"auto"/.test(n)));
});

test('DeepSpeed: a batch that does not divide is an error at train_batch_size', () => {
  const text =
    '{\n  "train_batch_size": 100,\n  "train_micro_batch_size_per_gpu": 3,\n  "gradient_accumulation_steps": 1\n}';
  const error = rejected(() => assembleTrainingRun([readTrainingConfig(text, 'ds_config.json').part]));
  assert.equal(error.line, 2);
  assert.match(error.message, /global batch 100/);
});

test('Accelerate: 16 processes on 2 machines, bf16 autocast with fp32 DDP gradients', () => {
  const { format, part } = example('accelerate_config.yaml');
  assert.equal(format, 'accelerate');
  const run = assembleTrainingRun([part]);
  assert.equal(run.system.nodes, 2);
  assert.equal(run.system.gpusPerNode, 8);
  assert.equal(run.training.wrapper, 'ddp');
  assert.equal(run.training.computeDtype, 'bf16');
  assert.equal(run.training.gradDtype, 'fp32');
  assert.ok(run.notes.some((n) => /gradients reduced in fp32/.test(n)));
});

test('Accelerate: FSDP and DeepSpeed distributed types pick their wrappers', () => {
  const fsdp = readTrainingConfig(
    'distributed_type: FSDP\nnum_processes: 8\nmixed_precision: bf16\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n',
    'a.yaml',
  );
  assert.equal(fsdp.part.training?.wrapper, 'fsdp');
  const grad = readTrainingConfig(
    'distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  fsdp_sharding_strategy: SHARD_GRAD_OP\n',
    'a.yaml',
  );
  assert.equal(grad.part.training?.wrapper, 'zero2');
  const ds = readTrainingConfig(
    'distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  zero_stage: 3\n',
    'a.yaml',
  );
  assert.equal(ds.part.training?.wrapper, 'zero3');
});

test('torchrun script: nodes and processes per node, with shell variables expanded', () => {
  const { format, part } = example('train_torchrun.sh');
  assert.equal(format, 'launcher');
  assert.equal(part.nodes?.value, 2);
  assert.equal(part.gpusPerNode?.value, 8);
  const run = assembleTrainingRun([part]);
  assert.equal(run.system.nodes * run.system.gpusPerNode, 16);
});

test('srun/sbatch script: -N, --gpus-per-node and #SBATCH directives', () => {
  const { part } = example('train_srun.sbatch');
  assert.equal(part.source.format, 'srun');
  assert.equal(part.nodes?.value, 8);
  assert.equal(part.gpusPerNode?.value, 8);
  const glued = parseLauncherScript('srun -N4 --ntasks=32 python train.py\n', 'job.sh');
  assert.equal(glued.nodes?.value, 4);
  assert.equal(glued.gpusPerNode?.value, 8);
  const module = parseLauncherScript(
    'python -m torch.distributed.run --nnodes 1:4 --nproc-per-node ${GPUS:-4} train.py\n',
    'run.sh',
  );
  assert.equal(module.nodes?.value, 4);
  assert.equal(module.gpusPerNode?.value, 4);
});

test('launcher: a bad count is a positioned error at the value', () => {
  const error = rejected(() =>
    parseLauncherScript('#!/bin/bash\ntorchrun \\\n  --nnodes=2 \\\n  --nproc_per_node=eight train.py\n', 'run.sh'),
  );
  assert.equal(error.line, 4);
  assert.equal(error.column, 20);
  assert.match(error.message, /--nproc_per_node: expected a positive whole number, got 'eight'/);
  const none = rejected(() => parseLauncherScript('#!/bin/bash\npython train.py\n', 'run.sh'));
  assert.match(none.message, /no torchrun/);
});

test('*.collective.yaml: every training key lands in the run, and the model reference is left to the caller', () => {
  const { format, part } = example('llama2-7b-ddp.collective.yaml');
  assert.equal(format, 'collective');
  assert.equal(part.references?.[0]?.kind, 'model');
  assert.equal(part.references?.[0]?.path, 'models/llama-2-7b/config.json');
  assert.equal(part.training?.bucketBytes, 25 * 1024 * 1024);
  assert.equal(part.training?.lrRule, 'linear');
  assert.equal(part.nodes?.value, 4);
});

test('*.collective.yaml with a preset model and inline system assembles without assumptions about them', () => {
  const text =
    'model:\n  preset: gpt2\ntraining:\n  micro_batch_size: 8\nsystem:\n  gpu: A100-SXM\n  nodes: 1\n  gpusPerNode: 4\n  intraNode: nvswitch\n';
  const run = assembleTrainingRun([readTrainingConfig(text, 'x.collective.yaml').part]);
  assert.equal(run.model.name, 'gpt2');
  assert.equal(run.system.gpu, 'A100-SXM');
  assert.equal(run.system.gpusPerNode, 4);
  assert.ok(!run.assumed.some((a) => /model|system/.test(a)), run.assumed.join('; '));
  assert.ok(run.assumed.includes('bf16 gradients'));
  assert.ok(run.assumed.some((a) => /25 MiB buckets/.test(a)));
});

test('defaults are stated: an empty collective file assumes model, system, buckets and dtype', () => {
  const run = assembleTrainingRun([readTrainingConfig('{}', 'empty.collective.json').part]);
  const text = run.assumed.join('; ');
  for (const expected of [
    /model llama-2-7b/,
    /system dgx-h100/,
    /25 MiB buckets/,
    /bf16 gradients/,
    /micro-batch of 1/,
  ])
    assert.match(text, expected);
});

const BAD: readonly [string, string, string, RegExp, number, number][] = [
  [
    'unknown key with a suggestion',
    'bad.collective.yaml',
    'training:\n  bucket_cap_bm: 25\n',
    /training: unknown key 'bucket_cap_bm' \(did you mean 'bucket_cap_mb'\?\)/,
    2,
    3,
  ],
  [
    'wrong type',
    'bad.collective.yaml',
    'training:\n  micro_batch_size: two\n',
    /training\.micro_batch_size: must be an integer/,
    2,
    21,
  ],
  [
    'negative size',
    'bad.collective.yaml',
    'training:\n  bucket_cap_mb: -25\n',
    /training\.bucket_cap_mb: must be greater than 0/,
    2,
    18,
  ],
  [
    'unknown system key',
    'bad.collective.yaml',
    'system:\n  preset: dgx-h100\n  nodez: 2\n',
    /unknown key 'nodez' \(did you mean 'nodes'\?\)/,
    3,
    3,
  ],
  [
    'DeepSpeed unknown key',
    'ds_config.json',
    '{\n  "train_micro_batch_size_per_gpus": 4\n}',
    /did you mean 'train_micro_batch_size_per_gpu'/,
    2,
    3,
  ],
  [
    'DeepSpeed negative bucket',
    'ds_config.json',
    '{\n  "zero_optimization": {"stage": 2, "reduce_bucket_size": -5}\n}',
    /reduce_bucket_size: must be at least 1/,
    2,
    59,
  ],
  [
    'DeepSpeed wrong type',
    'ds_config.json',
    '{"train_batch_size": 512, "fp16": {"enabled": "yes"}}',
    /fp16\.enabled/,
    1,
    47,
  ],
  [
    'Accelerate unknown key',
    'accelerate.yaml',
    'distributed_type: MULTI_GPU\nnum_proceses: 8\n',
    /did you mean 'num_processes'/,
    2,
    1,
  ],
  [
    'Accelerate wrong type',
    'accelerate.yaml',
    'distributed_type: MULTI_GPU\nnum_machines: two\n',
    /num_machines: must be an integer/,
    2,
    15,
  ],
];

for (const [what, fileName, text, message, line, column] of BAD) {
  test(`bad config: ${what} → ${fileName}:${line}:${column}`, () => {
    const error = rejected(() => assembleTrainingRun([readTrainingConfig(text, fileName).part as RunPart]));
    assert.match(error.message, message);
    assert.deepEqual([error.line, error.column], [line, column], error.toString());
  });
}

test('loadTrainingRunFromText follows the model file a collective file names, through the reader it is given', async () => {
  const { loadTrainingRunFromText } = await import('../../../src/config/training-files');
  const read: string[] = [];
  const files = { read: (path: string) => (read.push(path), readFileSync(path, 'utf8')) };
  const path = join(EXAMPLES, 'llama2-7b-ddp.collective.yaml');
  const { run, format } = loadTrainingRunFromText(readFileSync(path, 'utf8'), path, files);
  assert.equal(format, 'collective');
  assert.deepEqual(read, [join(EXAMPLES, 'models/llama-2-7b/config.json')]);
  assert.match(run.model.name, /Llama-2-7b/);
  assert.equal(run.system.nodes, 4);
  const missing = rejected(() =>
    loadTrainingRunFromText('model:\n  config: gone.json\n', '/tmp/m.collective.yaml', {
      read: () => {
        throw new Error('no such file');
      },
    }),
  );
  assert.deepEqual([missing.line, missing.column], [2, 11]);
  assert.match(missing.message, /cannot read model config 'gone.json': no such file/);
});

test('an Accelerate config that names a DeepSpeed file takes its batch and ZeRO settings from it', async () => {
  const { loadTrainingRunFromText } = await import('../../../src/config/training-files');
  const accelerate =
    'distributed_type: DEEPSPEED\nnum_machines: 2\nnum_processes: 16\nmixed_precision: bf16\ndeepspeed_config:\n  deepspeed_config_file: ds_config.json\n';
  const files = { read: (path: string) => readFileSync(join(EXAMPLES, path.split('/').pop()!), 'utf8') };
  const { run } = loadTrainingRunFromText(accelerate, '/work/acc.yaml', files);
  assert.equal(run.training.wrapper, 'zero2');
  assert.equal(run.training.gradAccumulationSteps, 8);
  assert.equal(run.training.microBatchSize, 4);
  assert.deepEqual(
    run.sources.map((s) => s.format),
    ['accelerate', 'deepspeed'],
  );
});

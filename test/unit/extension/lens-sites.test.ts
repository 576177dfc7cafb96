import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  pythonLensSites,
  codeOnlyLines,
  configFormatOf,
  deepSpeedLensSites,
  measurementLensSites,
} from '../../../src/extension/glue/lens-sites';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readTrainingConfig } from '../../../src/config/training-config';
import { looksLikeDeepSpeed } from '../../../src/native/import/deepspeed';

const TRAIN = `import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
import horovod.torch as hvd
import deepspeed
from jax import lax

def all_reduce(t):  # a helper named like the call: no lens on the definition
    return t

def average_gradients(model):
    """Calls dist.all_reduce(p.grad) on every parameter."""
    for p in model.parameters():
        dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)  # summed
        # dist.all_reduce(p.grad) in a comment gets nothing
    dist.reduce_scatter_tensor(out, inp)
    torch.distributed.all_gather_into_tensor(out, inp)

model = DDP(model, device_ids=[rank],
            bucket_cap_mb=50)
fsdp = FullyShardedDataParallel(model)
opt = hvd.DistributedOptimizer(opt, named_parameters=model.named_parameters())
g = lax.psum(g, 'batch')
engine, opt, _, _ = deepspeed.initialize(model=model, config='ds.json')
s = "DDP(model)"
`;

test('Python lenses go on the calls and wrappers, not on imports, definitions, comments or strings', () => {
  const sites = pythonLensSites(TRAIN);
  const summary = sites.map((s) => `${s.line + 1}:${s.kind}:${s.callee}`);
  assert.deepEqual(summary, [
    '14:collective:dist.all_reduce',
    '16:collective:dist.reduce_scatter_tensor',
    '17:collective:torch.distributed.all_gather_into_tensor',
    '19:ddp:DDP',
    '20:bucket:bucket_cap_mb',
    '21:fsdp:FullyShardedDataParallel',
    '22:horovod:hvd.DistributedOptimizer',
    '23:jax:lax.psum',
    '24:deepspeed:deepspeed.initialize',
  ]);
});

test('the DDP lens reads bucket_cap_mb from its own call, across lines', () => {
  const ddp = pythonLensSites(TRAIN).find((s) => s.kind === 'ddp')!;
  assert.equal(ddp.bucketCapMb, 50);
  assert.deepEqual(ddp.collectives, ['allreduce']);
  const bucket = pythonLensSites(TRAIN).find((s) => s.kind === 'bucket')!;
  assert.equal(bucket.bucketCapMb, 50);
  assert.equal(TRAIN.split('\n')[bucket.line].slice(bucket.column, bucket.endColumn), 'bucket_cap_mb');
});

test('collective kinds follow the call: FSDP issues reduce-scatter then all-gather', () => {
  const sites = pythonLensSites(TRAIN);
  assert.deepEqual(sites.find((s) => s.kind === 'fsdp')!.collectives, ['reducescatter', 'allgather']);
  assert.deepEqual(sites.find((s) => s.callee === 'dist.reduce_scatter_tensor')!.collectives, ['reducescatter']);
  assert.deepEqual(sites.find((s) => s.callee.endsWith('all_gather_into_tensor'))!.collectives, ['allgather']);
});

test('columns point at the callee so the lens sits on the right token', () => {
  const site = pythonLensSites('x = 1\n    dist.all_reduce(t)\n')[0];
  assert.deepEqual([site.line, site.column, site.endColumn], [1, 4, 19]);
});

test('string and comment blanking keeps columns and spans triple-quoted blocks', () => {
  const lines = codeOnlyLines('a = "x#y"  # c\n"""doc\ndist.all_reduce(x)\n"""\nb = 1');
  assert.equal(lines[0], 'a = "   "     ');
  assert.equal(lines[2].trim(), '');
  assert.equal(lines[4], 'b = 1');
  assert.equal(pythonLensSites('"""\ndist.all_reduce(x)\n"""').length, 0);
});

test('a file without collectives gets no lenses, and a bare bucket_cap_mb without a number still gets its lens', () => {
  assert.deepEqual(pythonLensSites('print("hello")\nx = model(batch)\n'), []);
  const sites = pythonLensSites('ddp_kwargs = dict(bucket_cap_mb=args.bucket)\n');
  assert.equal(sites.length, 1);
  assert.equal(sites[0].bucketCapMb, undefined);
});

test('config formats are recognised by name and then by content', () => {
  assert.equal(configFormatOf('/w/run.collective.yaml', ''), 'collective');
  assert.equal(
    configFormatOf('ds_config.json', '{"train_batch_size": 32, "zero_optimization": {"stage": 2}}'),
    'deepspeed',
  );
  assert.equal(configFormatOf('package.json', '{"name": "x"}'), undefined);
  assert.equal(
    configFormatOf(
      'accelerate.yaml',
      'compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_processes: 8\n',
    ),
    'accelerate',
  );
  assert.equal(configFormatOf('docker-compose.yml', 'services:\n  a: {}\n'), undefined);
});

test('measurement lenses go on each nccl-tests run banner', () => {
  const text =
    '# nccl-tests version 2.17.8\n# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 1\n#\n  8 2 float sum -1 1 1 1 0\n\n# Collective test starting: sendrecv_perf\n# nThread 1\n';
  const sites = measurementLensSites('nccl-tests', text);
  assert.deepEqual(
    sites.map((s) => [s.line, s.test]),
    [
      [1, 'all_reduce_perf'],
      [6, 'sendrecv_perf'],
    ],
  );
  assert.ok(sites.every((s) => s.format === 'nccl-tests'));
});

test('an NCCL_DEBUG log without a table gets one lens at the top, marked as a log', () => {
  const sites = measurementLensSites(
    'nccl-log',
    'h:1:1 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\nh:1:1 [0] NCCL INFO Ring 00 : 0 1\n',
  );
  assert.deepEqual(sites, [{ line: 0, format: 'nccl-log' }]);
  assert.deepEqual(measurementLensSites('plaintext', 'hello\n'), []);
});

test('a Hugging Face config.json is a config with lenses; a JSON file that only names a model type is not', () => {
  const root = join(import.meta.dirname, '..', '..', '..', 'examples', 'models');
  for (const model of readdirSync(root)) {
    const file = join(root, model, 'config.json');
    assert.equal(configFormatOf(file, readFileSync(file, 'utf8')), 'hf-model', model);
  }
  assert.equal(configFormatOf('config.json', '{"model_type": "llama", "note": "no sizes"}'), undefined);
  assert.equal(configFormatOf('config.yaml', 'model_type: llama\nhidden_size: 8\nnum_hidden_layers: 2\n'), undefined);
  // The config layer reads the same files as model configs, which is what the lens's click profiles.
  const file = join(root, 'gpt2', 'config.json');
  assert.equal(readTrainingConfig(readFileSync(file, 'utf8'), file).format, 'hf-model');
});

const FIXTURES = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'fixtures-real');
const fixturesMissing = existsSync(FIXTURES) ? false : 'needs ../shared/fixtures-real';

test(
  'DeepSpeed comms logs get Import lenses on their first call line and each summary table',
  { skip: fixturesMissing },
  () => {
    const sites = (name: string) =>
      deepSpeedLensSites(readFileSync(join(FIXTURES, name), 'utf8')).map((s) => [s.line, s.format, s.test]);
    assert.deepEqual(sites('deepspeed-commslogger-verbose-2022.log'), [[0, 'deepspeed', 'comms log']]);
    assert.deepEqual(sites('deepspeed-commslogger-summary-2022.txt'), [[0, 'deepspeed', 'log_summary']]);
    assert.deepEqual(sites('deepspeed-commslogger-summary-debug-2022.txt'), [[0, 'deepspeed', 'log_summary']]);
    // Every file the lens is offered on is one the importer reads as DeepSpeed.
    for (const name of readdirSync(FIXTURES).filter((n) => !n.endsWith('.md') && !n.endsWith('.gz'))) {
      const text = readFileSync(join(FIXTURES, name), 'utf8');
      assert.equal(deepSpeedLensSites(text).length > 0, looksLikeDeepSpeed(text), name);
    }
    assert.deepEqual(deepSpeedLensSites('just some notes\nabout a comm op\n'), []);
  },
);

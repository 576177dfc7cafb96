// Per-call contexts (call-contexts.ts): an engine builds its optimizer in a helper nested in its constructor, and
// the group is the helper's parameter. Each call of the helper builds one object with the group that call passes;
// a helper whose name escapes, or whose call hides its arguments, may be called with anything and decides nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeProgram, py, summaryByPath } from './helpers';

/** Sums over `self.dp_process_group` and divides by that group's whole size. */
const OPTIMIZER = py`
  import torch
  import torch.distributed as dist

  class ZeroOptimizer:
      def __init__(self, optimizer, dp_process_group=None):
          self.optimizer = optimizer
          self.dp_process_group = dp_process_group

      def allreduce_bucket(self, bucket):
          tensor = self.flatten(bucket)
          tensor.div_(dist.get_world_size(group=self.dp_process_group))
          dist.all_reduce(tensor, group=self.dp_process_group)
          for buf, synced in zip(bucket, self.unflatten(tensor, bucket)):
              buf.copy_(synced)

      def step(self):
          self.allreduce_bucket([p.grad for p in self.params])
          self.optimizer.step()
`;
const OPTIMIZER_PATH = 'runtime/zero/optimizer.py';
const DIVIDE_LINE = 11;

/** The engine builds the optimizer through a nested helper; `CALLS` is replaced by the helper's calls. */
const ENGINE = py`
  from runtime.zero.optimizer import ZeroOptimizer
  from utils import groups

  class Engine:
      def __init__(self, model, optimizer):
          def build_optimizer(group, clip=0.0):
              return ZeroOptimizer(optimizer, dp_process_group=group)

          CALLS
`;

function engine(calls: string): string {
  return ENGINE.replace('CALLS', calls);
}

async function findings(engineText: string): Promise<string[]> {
  return summaryByPath(await analyzeProgram({ [OPTIMIZER_PATH]: OPTIMIZER, 'runtime/engine.py': engineText }));
}

const SEQUENCE_GROUP = 'groups._get_sequence_data_parallel_group()';
const DATA_GROUP = 'groups._get_data_parallel_group()';

test('call contexts: a group passed to a nested helper decides the divisor of the object it builds', async () => {
  assert.deepEqual(await findings(engine(`self.optimizer = build_optimizer(${SEQUENCE_GROUP})`)), [
    `${OPTIMIZER_PATH}:CP003@${DIVIDE_LINE}`,
  ]);
  assert.deepEqual(await findings(engine(`self.optimizer = build_optimizer(group=${SEQUENCE_GROUP})`)), [
    `${OPTIMIZER_PATH}:CP003@${DIVIDE_LINE}`,
  ]);
});

test('call contexts: the data-parallel group through the helper is clean', async () => {
  assert.deepEqual(await findings(engine(`self.optimizer = build_optimizer(${DATA_GROUP})`)), []);
});

test('call contexts: two calls build two objects, each judged with its own group', async () => {
  const two = `self.dense = build_optimizer(${DATA_GROUP})\n        self.sparse = build_optimizer(${SEQUENCE_GROUP})`;
  assert.deepEqual(await findings(engine(two)), [`${OPTIMIZER_PATH}:CP003@${DIVIDE_LINE}`]);
  const agreeing = `self.dense = build_optimizer(${DATA_GROUP})\n        self.sparse = build_optimizer(${DATA_GROUP})`;
  assert.deepEqual(await findings(engine(agreeing)), []);
});

test('call contexts: a helper that escapes, hides its arguments or rebinds its parameter decides nothing', async () => {
  const variants = [
    // Stored on the object: anyone may call it later with any group.
    `self.build = build_optimizer\n        self.optimizer = build_optimizer(${SEQUENCE_GROUP})`,
    // The arguments come from a tuple the analysis does not read.
    `args = (${SEQUENCE_GROUP},)\n        self.optimizer = build_optimizer(*args)`,
  ];
  for (const calls of variants) assert.deepEqual(await findings(engine(calls)), [], calls);
  const rebinding = engine(`self.optimizer = build_optimizer(${SEQUENCE_GROUP})`).replace(
    '            return ZeroOptimizer(',
    '            if clip > 0:\n                group = None\n            return ZeroOptimizer(',
  );
  assert.deepEqual(await findings(rebinding), []);
});

test('call contexts: a top-level helper may be called from other files and decides nothing', async () => {
  const topLevel = py`
    from runtime.zero.optimizer import ZeroOptimizer
    from utils import groups

    def build_optimizer(optimizer, group):
        return ZeroOptimizer(optimizer, dp_process_group=group)

    def main(optimizer):
        return build_optimizer(optimizer, ${SEQUENCE_GROUP})
  `;
  assert.deepEqual(await findings(topLevel), []);
});

/** A bucket sums over the group its buffer gave it and divides by that group's whole size. */
const BUCKET = py`
  import torch.distributed as dist

  class Bucket:
      def __init__(self, grad_data, data_parallel_group):
          self.grad_data = grad_data
          self.data_parallel_group = data_parallel_group

      def start_grad_sync(self):
          self.grad_data /= dist.get_world_size(group=self.data_parallel_group)
          dist.all_reduce(self.grad_data, group=self.data_parallel_group)
`;

/** A buffer builds its buckets with the group it was built with. */
const BUFFER = py`
  from runtime.bucket import Bucket

  class Buffer:
      def __init__(self, params, data_parallel_group):
          self.data_parallel_group = data_parallel_group
          self.buckets = [Bucket(p.grad, self.data_parallel_group) for p in params]

      def start_grad_sync(self):
          for bucket in self.buckets:
              bucket.start_grad_sync()
`;

/** The wrapper builds one buffer per kind of parameter: `FIRST` and `SECOND` are their groups. */
const WRAPPER = py`
  from runtime.buffer import Buffer
  from utils import groups

  class Wrapper:
      def __init__(self, dense, sparse):
          self.dense = Buffer(dense, FIRST)
          self.sparse = Buffer(sparse, SECOND)
`;

async function threeLevels(first: string, second: string): Promise<string[]> {
  const wrapper = WRAPPER.replace('FIRST', first).replace('SECOND', second);
  const files = { 'runtime/bucket.py': BUCKET, 'runtime/buffer.py': BUFFER, 'runtime/wrapper.py': wrapper };
  return summaryByPath(await analyzeProgram(files));
}

test('site variants: a class built by objects built with different groups gets each object its own group', async () => {
  assert.deepEqual(await threeLevels(DATA_GROUP, SEQUENCE_GROUP), ['runtime/bucket.py:CP003@9']);
  assert.deepEqual(await threeLevels(DATA_GROUP, DATA_GROUP), []);
});

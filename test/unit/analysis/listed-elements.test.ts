// Bucket groups built from the elements of a list of buffers, as Megatron's `partition_buckets` builds them: each
// group gets a bucket read through a loop over `buffer.buckets` (a list the buffer builds itself) and the group of
// the buffer read through a loop variable (`for buffer in buffers`) or an index (`buffers[0]`). The buffers are one
// construction appended in a loop, so a group read from any buffer pairs with a factor read from any other
// (listed-elements.ts). Here the buffers, buckets, bucket groups and the wrapper are in one file, and the groups are
// built in the wrapper's nested helper, whose calls are the contexts of its parameters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeProgram, py, summaryByPath } from './helpers';

const CLASSES = py`
  from typing import List
  import torch.distributed as dist
  from runtime import parallel_state

  class GradBucket:
      def __init__(self, grad_data, gradient_scaling_factor):
          self.grad_data = grad_data
          self.gradient_scaling_factor = gradient_scaling_factor

  class GradBuffer:
      def __init__(self, ddp_config, grads, data_parallel_group, gradient_scaling_factor):
          self.ddp_config = ddp_config
          self.data_parallel_group = data_parallel_group
          self.gradient_scaling_factor = gradient_scaling_factor
          self.buckets = []
          for grad in grads:
              self.buckets.append(self._new_bucket(grad))

      def _new_bucket(self, grad):
          bucket = GradBucket(grad, gradient_scaling_factor=self.gradient_scaling_factor)
          return bucket

  class GradBucketGroup:
      def __init__(self, buckets: List[GradBucket], ddp_config, collective_group):
          self.buckets = buckets
          self.ddp_config = ddp_config
          self.data_parallel_group = collective_group

      def start_grad_sync(self):
          for bucket in self.buckets:
              if bucket.gradient_scaling_factor != 1.0:
                  bucket.grad_data *= bucket.gradient_scaling_factor
          reduce_op = dist.ReduceOp.SUM
          if self.ddp_config.average_in_collective:
              reduce_op = dist.ReduceOp.AVG
          for bucket in self.buckets:
              dist.all_reduce(bucket.grad_data, op=reduce_op, group=self.data_parallel_group)

  class ExpertWrapper:
      def __init__(self, ddp_config, dense_params, expert_params):
          self.ddp_config = ddp_config

          def _allocate(input_params, data_parallel_group, gradient_scaling_factor):
              buffers = []
              for grads in input_params:
                  buffers.append(GradBuffer(self.ddp_config, grads, data_parallel_group, gradient_scaling_factor))
              PARTITION
              return bucket_groups

          if self.ddp_config.average_in_collective:
              factor = 1.0
              expert_factor = AVERAGE_FACTOR
          else:
              factor = 1.0 / parallel_state.get_data_parallel_world_size(with_context_parallel=True)
              expert_factor = factor
          self.dense = _allocate(
              dense_params, parallel_state.get_data_parallel_group(with_context_parallel=True), factor
          )
          self.experts = _allocate(expert_params, parallel_state.get_expert_data_parallel_group(), expert_factor)
`;

/** One group per bucket, with the group of the buffer the loop is on (Megatron's case 2). */
const PER_BUCKET = `bucket_groups = []
for buffer in buffers:
    for bucket in buffer.buckets:
        bucket_groups.append(GradBucketGroup([bucket], buffer.ddp_config, buffer.data_parallel_group))`;

/** Every bucket of every buffer in one group, with the first buffer's group (Megatron's case 1). */
const SINGLE_GROUP = `buckets = []
first_group = buffers[0].data_parallel_group
for buffer in buffers:
    buckets.extend(buffer.buckets)
bucket_groups = [GradBucketGroup(buckets, self.ddp_config, first_group)]`;

const STATE = py`
  def get_expert_tensor_parallel_world_size():
      return 1
`;

const EP = '1.0 / parallel_state.get_expert_model_parallel_world_size()';
const FIXED =
  'parallel_state.get_expert_data_parallel_world_size() / parallel_state.get_data_parallel_world_size(with_context_parallel=True)';

async function codes(averageFactor: string, partition: string, classes = CLASSES): Promise<string[]> {
  const text = classes
    .replace('AVERAGE_FACTOR', averageFactor)
    .replace('PARTITION', partition.replace(/\n/g, '\n            '));
  return summaryByPath(await analyzeProgram({ 'runtime/buffers.py': text, 'runtime/parallel_state.py': STATE }));
}

/** The finding at the line that chose `expert_factor`, where the partition is written into the helper. */
function at(partition: string): string {
  const lines = CLASSES.replace('PARTITION', partition).split('\n');
  return `runtime/buffers.py:CP003@${lines.findIndex((l) => l.includes('expert_factor = AVERAGE_FACTOR')) + 1}`;
}

test('listed elements: 1/ep in buckets read through `for buffer in buffers`, averaged over edp, is CP003', async () => {
  assert.deepEqual(await codes(EP, PER_BUCKET), [at(PER_BUCKET)]);
});

test('listed elements: a group read from `buffers[0]` pairs with the buckets of every buffer', async () => {
  assert.deepEqual(await codes(EP, SINGLE_GROUP), [at(SINGLE_GROUP)]);
});

test('listed elements: edp/(dp×cp) in the listed buckets leaves the mean and is clean', async () => {
  assert.deepEqual(await codes(FIXED, PER_BUCKET), []);
  assert.deepEqual(await codes(FIXED, SINGLE_GROUP), []);
});

test('listed elements: buffers from two constructions (mixed factors in one list) name no factor', async () => {
  const mixed = CLASSES.replace(
    '            PARTITION',
    '            buffers.append(GradBuffer(self.ddp_config, [], data_parallel_group, 1.0))\n            PARTITION',
  );
  assert.notEqual(mixed, CLASSES);
  assert.deepEqual(await codes(EP, PER_BUCKET, mixed), []);
  assert.deepEqual(await codes(EP, SINGLE_GROUP, mixed), []);
});

test('listed elements: a factor that changes between the loop iterations is not one construction', async () => {
  const varying = CLASSES.replace(
    '            for grads in input_params:\n',
    '            for grads in input_params:\n                gradient_scaling_factor = 1.0\n',
  );
  assert.notEqual(varying, CLASSES);
  assert.deepEqual(await codes(EP, PER_BUCKET, varying), []);
});

test('listed elements: a list of buffers from an unknown caller, or grown out of view, names nothing', async () => {
  // The buffers as the helper's own parameter, bound by no call in view; and the local list passed to a call that
  // may grow it.
  const unknown = CLASSES.replace(
    '            buffers = []\n            for grads in input_params:\n                buffers.append(GradBuffer(self.ddp_config, grads, data_parallel_group, gradient_scaling_factor))\n',
    '            buffers = input_params\n',
  );
  assert.notEqual(unknown, CLASSES);
  assert.deepEqual(await codes(EP, PER_BUCKET, unknown), []);
  const grown = CLASSES.replace('            PARTITION', '            register(buffers)\n            PARTITION');
  assert.deepEqual(await codes(EP, PER_BUCKET, grown), []);
});

test('listed elements: a buffer attribute written after construction is not the constructor argument', async () => {
  const written = `${PER_BUCKET}\n    buffer.data_parallel_group = None`;
  assert.deepEqual(await codes(EP, written), []);
});

// A free function's sites read with its calls in another file, as Megatron's `partition_buckets` (defined with the
// buffer and bucket-group classes in param_and_grad_buffer.py) is called from DDP's nested buffer helper with a local
// list of one `_ParamAndGradBuffer` construction: the defining file records each site's arguments as paths over the
// function's list parameter (parameter-paths.ts), and each call in view that passes a proven list gives the sites
// one more site each, read with that call's values (per-call-sites.ts, per-call-links.ts). The function's own sites
// stand for its callers out of view and name nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeProgram, py, summaryByPath } from './helpers';

const BUFFERS = py`
  from typing import List
  import torch.distributed as dist

  class _GradBucket:
      def __init__(self, grad_data, gradient_scaling_factor):
          self.grad_data = grad_data
          self.gradient_scaling_factor = gradient_scaling_factor

  class _GradBuffer:
      def __init__(self, ddp_config, grads, data_parallel_group, gradient_scaling_factor):
          self.ddp_config = ddp_config
          self.data_parallel_group = data_parallel_group
          self.gradient_scaling_factor = gradient_scaling_factor
          self.buckets = []
          for grad in grads:
              self.buckets.append(self._new_bucket(grad))

      def _new_bucket(self, grad):
          bucket = _GradBucket(grad, gradient_scaling_factor=self.gradient_scaling_factor)
          return bucket

  class _GradBucketGroup:
      def __init__(self, buckets: List[_GradBucket], ddp_config, collective_group):
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

  def partition_buckets(buffers, force_single_bucket_group=False):
      if len(buffers) == 0:
          return []
      if force_single_bucket_group:
          buckets = []
          ddp_config = buffers[0].ddp_config
          data_parallel_group = buffers[0].data_parallel_group
          for buffer in buffers:
              buckets.extend(buffer.buckets)
          return [_GradBucketGroup(buckets, ddp_config, data_parallel_group)]
      bucket_groups = []
      for buffer in buffers:
          for bucket in buffer.buckets:
              bucket_groups.append(_GradBucketGroup([bucket], buffer.ddp_config, buffer.data_parallel_group))
      return bucket_groups
`;

const WRAPPER = py`
  from runtime import parallel_state
  from runtime.buffers import _GradBuffer, partition_buckets

  class ExpertWrapper:
      def __init__(self, ddp_config, dense_params, expert_params, disable_bucketing):
          self.ddp_config = ddp_config

          def _allocate(input_params, data_parallel_group, gradient_scaling_factor):
              buffers = []
              for grads in input_params:
                  buffers.append(_GradBuffer(self.ddp_config, grads, data_parallel_group, gradient_scaling_factor))
              bucket_groups = partition_buckets(buffers, force_single_bucket_group=disable_bucketing)
              return buffers, bucket_groups

          if self.ddp_config.average_in_collective:
              factor = 1.0
              expert_factor = AVERAGE_FACTOR
          else:
              factor = 1.0 / parallel_state.get_data_parallel_world_size(with_context_parallel=True)
              expert_factor = factor
          self.buffers, self.groups = _allocate(
              dense_params, parallel_state.get_data_parallel_group(with_context_parallel=True), factor
          )
          self.expert_buffers, self.expert_groups = _allocate(
              expert_params, parallel_state.get_expert_data_parallel_group(), expert_factor
          )
`;

const STATE = py`
  def get_expert_tensor_parallel_world_size():
      return 1
`;

const EP = '1.0 / parallel_state.get_expert_model_parallel_world_size()';
const FIXED =
  'parallel_state.get_expert_data_parallel_world_size() / parallel_state.get_data_parallel_world_size(with_context_parallel=True)';

async function codes(averageFactor: string, wrapper = WRAPPER, buffers = BUFFERS): Promise<string[]> {
  const files: Record<string, string> = {
    'runtime/buffers.py': buffers,
    'runtime/ddp.py': wrapper.replace('AVERAGE_FACTOR', averageFactor),
    'runtime/parallel_state.py': STATE,
  };
  return summaryByPath(await analyzeProgram(files));
}

/** The finding at the caller's line that chose `expert_factor`. */
function at(wrapper = WRAPPER): string {
  return `runtime/ddp.py:CP003@${wrapper.split('\n').findIndex((l) => l.includes('expert_factor = AVERAGE_FACTOR')) + 1}`;
}

test('per-call sites: a free function partitions a caller-built list of buffers with 1/ep over edp, CP003', async () => {
  assert.deepEqual(await codes(EP), [at()]);
});

test('per-call sites: the list passed by keyword is read the same way', async () => {
  const keyword = WRAPPER.replace('partition_buckets(buffers,', 'partition_buckets(buffers=buffers,');
  assert.notEqual(keyword, WRAPPER);
  assert.deepEqual(await codes(EP, keyword), [at(keyword)]);
});

test('per-call sites: edp/(dp×cp) for the expert buffers leaves the mean and is clean', async () => {
  assert.deepEqual(await codes(FIXED), []);
});

test('per-call sites: a list the caller does not prove (unknown, or maybe another list) names nothing', async () => {
  const unknown = WRAPPER.replace(
    '                buffers.append(_GradBuffer(self.ddp_config, grads, data_parallel_group, gradient_scaling_factor))\n',
    '                pass\n            buffers = input_params\n',
  );
  assert.notEqual(unknown, WRAPPER);
  assert.deepEqual(await codes(EP, unknown), []);
  const either = WRAPPER.replace(
    '            bucket_groups = partition_buckets(',
    '            if self.ddp_config.reuse:\n                buffers = self.ddp_config.buffers\n            bucket_groups = partition_buckets(',
  );
  assert.notEqual(either, WRAPPER);
  assert.deepEqual(await codes(EP, either), []);
});

test('per-call sites: the function called with a proven list and an unknown one, from its unknown caller, is silent', async () => {
  // The second call passes a list out of view; the function's own sites stand for it and name nothing.
  const twoCalls = WRAPPER.replace(
    '        self.expert_buffers, self.expert_groups = _allocate(\n            expert_params, parallel_state.get_expert_data_parallel_group(), expert_factor\n        )\n',
    '        self.expert_groups = partition_buckets(expert_params)\n',
  );
  assert.notEqual(twoCalls, WRAPPER);
  assert.deepEqual(await codes(EP, twoCalls), []);
});

test('per-call sites: a caller that does not import the function, or defines its own, reads nothing', async () => {
  const notImported = WRAPPER.replace(', partition_buckets', '').replace(
    'partition_buckets(buffers,',
    'self.partition_buckets(buffers,',
  );
  assert.deepEqual(await codes(EP, notImported), []);
  const ownDefinition = WRAPPER.replace(', partition_buckets', '').replace(
    'class ExpertWrapper:',
    'def partition_buckets(buffers, force_single_bucket_group=False):\n    return []\n\nclass ExpertWrapper:',
  );
  assert.deepEqual(await codes(EP, ownDefinition), []);
});

test('per-call sites: a list whose elements are two constructions names no factor', async () => {
  const mixed = WRAPPER.replace(
    '            bucket_groups = partition_buckets(',
    '            buffers.append(_GradBuffer(self.ddp_config, [], data_parallel_group, 1.0))\n            bucket_groups = partition_buckets(',
  );
  assert.notEqual(mixed, WRAPPER);
  assert.deepEqual(await codes(EP, mixed), []);
});

test('per-call sites: a factor that changes between the list loop iterations is not read', async () => {
  const varying = WRAPPER.replace(
    '            for grads in input_params:\n',
    '            for grads in input_params:\n                gradient_scaling_factor = 1.0\n',
  );
  assert.notEqual(varying, WRAPPER);
  assert.deepEqual(await codes(EP, varying), []);
});

test('per-call sites: a function that grows its list parameter, or a buffer list, is not read', async () => {
  const grows = BUFFERS.replace('    if len(buffers) == 0:', '    buffers.append(None)\n    if len(buffers) == 0:');
  assert.notEqual(grows, BUFFERS);
  assert.deepEqual(await codes(EP, WRAPPER, grows), []);
  const growsBuckets = BUFFERS.replace(
    '        for bucket in buffer.buckets:\n',
    '        buffer.buckets.append(None)\n        for bucket in buffer.buckets:\n',
  );
  assert.notEqual(growsBuckets, BUFFERS);
  assert.deepEqual(await codes(EP, WRAPPER, growsBuckets), []);
});

test('per-call sites: the function and its caller in one file are read the same way', async () => {
  const wrapper = WRAPPER.replace('from runtime.buffers import _GradBuffer, partition_buckets\n', '');
  const joined = `${BUFFERS}\n${wrapper.replace('AVERAGE_FACTOR', EP)}`;
  const line = joined.split('\n').findIndex((l) => l.includes(`expert_factor = ${EP}`)) + 1;
  const results = await analyzeProgram({ 'runtime/buffers.py': joined, 'runtime/parallel_state.py': STATE });
  assert.deepEqual(summaryByPath(results), [`runtime/buffers.py:CP003@${line}`]);
});

test('per-call sites: a caller that writes an element attribute after construction reads nothing', async () => {
  const written = WRAPPER.replace(
    '            bucket_groups = partition_buckets(',
    '            for buffer in buffers:\n                buffer.data_parallel_group = None\n            bucket_groups = partition_buckets(',
  );
  assert.notEqual(written, WRAPPER);
  assert.deepEqual(await codes(EP, written), []);
  const indexed = WRAPPER.replace(
    '            bucket_groups = partition_buckets(',
    '            buffers[0].gradient_scaling_factor = 1.0\n            bucket_groups = partition_buckets(',
  );
  assert.deepEqual(await codes(EP, indexed), []);
});

test('per-call sites: a caller in test code judges nothing', async () => {
  const files: Record<string, string> = {
    'runtime/buffers.py': BUFFERS,
    'tests/test_ddp.py': WRAPPER.replace('AVERAGE_FACTOR', EP),
    'runtime/parallel_state.py': STATE,
  };
  assert.deepEqual(summaryByPath(await analyzeProgram(files)), []);
});

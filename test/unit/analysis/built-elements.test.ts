// A buffer that builds its own buckets in `__init__` (`self.buckets.append(self._new_bucket(...))`, the bucket built
// with `self.gradient_scaling_factor`), as Megatron's `_ParamAndGradBuffer` does, then scales each bucket by its
// factor and reduces it: the element attribute is the buffer's own constructor parameter (built-elements.ts), answered
// by the buffer's construction sites and paired per site with the group the same site passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeProgram, py, summaryByPath } from './helpers';

const BUFFER = py`
  import torch.distributed as dist

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
          GROWTH

      def _new_bucket(self, grad):
          bucket = GradBucket(grad, gradient_scaling_factor=self.gradient_scaling_factor)
          return bucket

      def start_grad_sync(self):
          for bucket in self.buckets:
              if bucket.gradient_scaling_factor != 1.0:
                  bucket.grad_data *= bucket.gradient_scaling_factor
          reduce_op = dist.ReduceOp.SUM
          if self.ddp_config.average_in_collective:
              reduce_op = dist.ReduceOp.AVG
          for bucket in self.buckets:
              dist.all_reduce(bucket.grad_data, op=reduce_op, group=self.data_parallel_group)
`;

const WRAPPER = py`
  from runtime.buffers import GradBuffer
  from runtime import parallel_state

  class ExpertWrapper:
      def __init__(self, ddp_config, dense_grads, expert_grads):
          self.ddp_config = ddp_config
          if self.ddp_config.average_in_collective:
              factor = 1.0
              expert_factor = AVERAGE_FACTOR
          else:
              factor = 1.0 / parallel_state.get_data_parallel_world_size(with_context_parallel=True)
              expert_factor = factor
          self.dense = GradBuffer(
              self.ddp_config, dense_grads, parallel_state.get_data_parallel_group(with_context_parallel=True), factor
          )
          self.experts = GradBuffer(
              self.ddp_config, expert_grads, parallel_state.get_expert_data_parallel_group(), expert_factor
          )
`;

const STATE = py`
  def get_expert_tensor_parallel_world_size():
      return 1
`;

const EP = '1.0 / parallel_state.get_expert_model_parallel_world_size()';
const FIXED =
  'parallel_state.get_expert_data_parallel_world_size() / parallel_state.get_data_parallel_world_size(with_context_parallel=True)';

async function codes(averageFactor: string, buffer = BUFFER, growth = 'pass'): Promise<string[]> {
  return summaryByPath(
    await analyzeProgram({
      'runtime/buffers.py': buffer.replace('GROWTH', growth),
      'runtime/wrapper.py': WRAPPER.replace('AVERAGE_FACTOR', averageFactor),
      'runtime/parallel_state.py': STATE,
    }),
  );
}

test('built elements: 1/ep in the buckets a buffer builds itself, averaged over edp, is a CP003 warning', async () => {
  assert.deepEqual(await codes(EP), ['runtime/wrapper.py:CP003@9']);
});

test('built elements: the factor passed positionally and returned directly is followed the same way', async () => {
  const direct = BUFFER.replace(
    '        bucket = GradBucket(grad, gradient_scaling_factor=self.gradient_scaling_factor)\n        return bucket',
    '        return GradBucket(grad, self.gradient_scaling_factor)',
  );
  assert.notEqual(direct, BUFFER);
  assert.deepEqual(await codes(EP, direct), ['runtime/wrapper.py:CP003@9']);
});

test('built elements: edp/(dp×cp) in the built buckets leaves the mean and is clean', async () => {
  assert.deepEqual(await codes(FIXED), []);
});

test('built elements: buckets built with another factor as well name no factor for the buffer', async () => {
  // A second construction with the literal 1.0 (mixed factors in one list), or a bucket appended that no method
  // of the class returns: the elements do not all carry the buffer's factor.
  for (const growth of [
    'self.buckets.append(GradBucket(None, 1.0))',
    'self.buckets.append(self._other_bucket())',
    'self.buckets.extend(grads)',
    'self.buckets[0] = None',
    'alias = self.buckets',
  ]) {
    const buffer = BUFFER.replace(
      '    def start_grad_sync(self):',
      '    def _other_bucket(self):\n        return GradBucket(None, 1.0)\n\n    def start_grad_sync(self):',
    );
    assert.notEqual(buffer, BUFFER);
    assert.deepEqual(await codes(EP, buffer, growth), [], growth);
  }
});

test('built elements: a list grown outside __init__, or a method overridden by a subclass, holds unknown buckets', async () => {
  const later = BUFFER.replace(
    '    def start_grad_sync(self):',
    '    def add(self, grad):\n        self.buckets.append(self._new_bucket(grad))\n\n    def start_grad_sync(self):',
  );
  assert.notEqual(later, BUFFER);
  assert.deepEqual(await codes(EP, later), []);
  const overridden = `${BUFFER}\n\nclass OtherBuffer(GradBuffer):\n    def _new_bucket(self, grad):\n        return GradBucket(grad, 1.0)\n`;
  assert.deepEqual(await codes(EP, overridden), []);
});

test('built elements: a factor attribute another related object writes is not the constructor argument', async () => {
  const rewritten = BUFFER.replace('        GROWTH', '        GROWTH\n        self.gradient_scaling_factor = 1.0');
  assert.notEqual(rewritten, BUFFER);
  assert.deepEqual(await codes(EP, rewritten), []);
});

test('built elements: a buffer class also built where the analysis cannot see the call names no factor', async () => {
  // Registered as a value, the class may be built by a caller not in view with any factor and group.
  const results = await analyzeProgram({
    'runtime/buffers.py': BUFFER.replace('GROWTH', 'pass'),
    'runtime/wrapper.py': `${WRAPPER.replace('AVERAGE_FACTOR', EP)}\nBUILDERS = {"buffer": GradBuffer}\n`,
    'runtime/parallel_state.py': STATE,
  });
  assert.deepEqual(summaryByPath(results), []);
});

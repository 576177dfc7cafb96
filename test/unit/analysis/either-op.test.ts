// A bucket whose reduction operation a flag chooses (either-op.ts, site-variants.ts): the wrapper picks the
// pre-scaling factor on an `if` of a configuration flag, and the bucket picks SUM or AVG on a flag of its own. The
// analysis cannot tell that the flags are one, so a factor is wrong only when it is wrong under both operations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Program } from '../../../src/analysis/index';
import { parser, py, summary } from './helpers';

const BUCKET = py`
  import torch
  import torch.distributed as dist

  class Bucket:
      def __init__(self, grad_data, data_parallel_group, gradient_scaling_factor, average):
          self.grad_data = grad_data
          self.data_parallel_group = data_parallel_group
          self.gradient_scaling_factor = gradient_scaling_factor
          self.average = average

      def start_grad_sync(self):
          self.grad_data *= self.gradient_scaling_factor
          reduce_op = dist.ReduceOp.SUM
          if self.average:
              reduce_op = dist.ReduceOp.AVG
          dist.all_reduce(self.grad_data, op=reduce_op, group=self.data_parallel_group)
`;

/** `SUM_FACTOR` is the factor chosen when the bucket sums. */
const WRAPPER = py`
  from runtime.bucket import Bucket
  from megatron.core import parallel_state

  class Wrapper:
      def __init__(self, grad_data, config):
          if config.per_token_loss:
              factor = 1.0
          elif config.average:
              factor = 1.0
          else:
              factor = SUM_FACTOR
          self.bucket = Bucket(
              grad_data,
              parallel_state.get_data_parallel_group(with_context_parallel=True),
              factor,
              config.average,
          )
`;

async function findings(sumFactor: string): Promise<{ codes: string[]; messages: string[] }> {
  const program = new Program(await parser());
  program.setFile('runtime/bucket.py', BUCKET);
  program.setFile('runtime/wrapper.py', WRAPPER.replace('SUM_FACTOR', sumFactor));
  const all = [...program.analyzeAll()].flatMap(([path, r]) => r.findings.map((f) => ({ path, f })));
  return {
    codes: all.flatMap(({ path, f }) => summary([f]).map((c) => `${path}:${c}`)),
    messages: all.map(({ f }) => f.message),
  };
}

test('either op: a factor wrong whether the bucket sums or averages is CP003 where it was chosen', async () => {
  const { codes, messages } = await findings('1.0 / parallel_state.get_data_parallel_world_size()');
  assert.deepEqual(codes, ['runtime/wrapper.py:CP003@11'], messages.join('\n'));
  assert.match(messages[0], /effective learning rate is cp× the configured one/);
  assert.match(messages[0], /averaging instead leaves 1\/dp× the mean/);
});

test('either op: the factor that counts the whole group is clean, whichever flag is set', async () => {
  const { codes } = await findings('1.0 / parallel_state.get_data_parallel_world_size(with_context_parallel=True)');
  assert.deepEqual(codes, []);
});

test('either op: an expert-data-parallel group is not judged under both operations', async () => {
  const program = new Program(await parser());
  program.setFile('runtime/bucket.py', BUCKET);
  program.setFile(
    'runtime/wrapper.py',
    WRAPPER.replace('SUM_FACTOR', '1.0 / parallel_state.get_expert_model_parallel_world_size()').replace(
      'parallel_state.get_data_parallel_group(with_context_parallel=True)',
      'parallel_state.get_expert_data_parallel_group()',
    ),
  );
  assert.deepEqual(
    [...program.analyzeAll().values()].flatMap((r) => summary(r.findings)),
    [],
  );
});

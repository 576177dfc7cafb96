// Expert gradients pre-scaled under a configuration flag that also makes the bucket average (flag-choice.ts,
// dim-relations.ts): over the expert-data-parallel group, a factor of 1/ep leaves etp/tp of the mean, which is wrong
// only where the framework lets the expert tensor-parallel size differ from the dense one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Program } from '../../../src/analysis/index';
import { parser, py, summary } from './helpers';

const BUCKET = py`
  import torch
  import torch.distributed as dist

  class GradBucket:
      def __init__(self, ddp_config, grad_data, group, gradient_scaling_factor):
          self.ddp_config = ddp_config
          self.grad_data = grad_data
          self.group = group
          self.gradient_scaling_factor = gradient_scaling_factor

      def start_grad_sync(self):
          self.grad_data *= self.gradient_scaling_factor
          reduce_op = dist.ReduceOp.SUM
          if self.ddp_config.BUCKET_FLAG:
              reduce_op = dist.ReduceOp.AVG
          dist.all_reduce(self.grad_data, op=reduce_op, group=self.group)
`;

const WRAPPER = py`
  from runtime.bucket import GradBucket
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
          self.dense = GradBucket(
              self.ddp_config,
              dense_grads,
              parallel_state.get_data_parallel_group(with_context_parallel=True),
              factor,
          )
          self.experts = GradBucket(
              self.ddp_config,
              expert_grads,
              parallel_state.get_expert_data_parallel_group(),
              expert_factor,
          )
`;

const STATE_WITH_ETP = py`
  def get_expert_tensor_parallel_world_size():
      return 1
`;

const EP = '1.0 / parallel_state.get_expert_model_parallel_world_size()';

async function findings(
  averageFactor: string,
  state: string | undefined = STATE_WITH_ETP,
  bucketFlag = 'average_in_collective',
): Promise<{ codes: string[]; messages: string[]; severities: string[] }> {
  const program = new Program(await parser());
  program.setFile('runtime/bucket.py', BUCKET.replace('BUCKET_FLAG', bucketFlag));
  program.setFile('runtime/wrapper.py', WRAPPER.replace('AVERAGE_FACTOR', averageFactor));
  if (state) program.setFile('runtime/parallel_state.py', state);
  const all = [...program.analyzeAll()].flatMap(([path, r]) => r.findings.map((f) => ({ path, f })));
  return {
    codes: all.flatMap(({ path, f }) => summary([f]).map((c) => `${path}:${c}`)),
    messages: all.map(({ f }) => f.message),
    severities: all.map(({ f }) => f.severity),
  };
}

test('flag choice: 1/ep before an average over the expert-data-parallel group is a CP003 warning for etp/tp', async () => {
  const { codes, messages, severities } = await findings(EP);
  assert.deepEqual(codes, ['runtime/wrapper.py:CP003@9'], messages.join('\n'));
  assert.deepEqual(severities, ['warning']);
  assert.match(messages[0], /averages the gradients over `self.group` \(edp ranks/);
  assert.match(messages[0], /effective learning rate is etp\/tp× the configured one/);
  assert.match(messages[0], /`self.ddp_config.average_in_collective` chose both the operation and the factor/);
});

test('flag choice: edp/(dp×cp) before the average leaves the mean and is clean', async () => {
  const fixed =
    'parallel_state.get_expert_data_parallel_world_size() / parallel_state.get_data_parallel_world_size(with_context_parallel=True)';
  const { codes } = await findings(fixed);
  assert.deepEqual(codes, []);
});

test('flag choice: without an expert tensor-parallel size in the program, 1/ep is right (etp = tp)', async () => {
  const { codes } = await findings(
    EP,
    py`
    def get_expert_model_parallel_world_size():
        return 1
  `,
  );
  assert.deepEqual(codes, []);
});

test('flag choice: a bucket whose operation another flag chooses is not linked to the factor', async () => {
  const { codes } = await findings(EP, STATE_WITH_ETP, 'average_in_reduce');
  assert.deepEqual(codes, []);
});

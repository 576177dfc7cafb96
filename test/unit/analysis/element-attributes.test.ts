// A bucket group that reads its factor from the buckets it was built with (`for bucket in self.buckets:
// bucket.grad_data *= bucket.gradient_scaling_factor`), as Megatron's `_ParamAndGradBucketGroup` does: the factor is
// an attribute of the elements of a constructor list, answered by what each construction site puts in the list
// (class-summaries.ts, group-sizes.ts), and paired per site with the group the same site passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Program } from '../../../src/analysis/index';
import { parser, py, summary } from './helpers';

const BUCKETS = py`
  from typing import List
  import torch.distributed as dist

  class GradBucket:
      def __init__(self, grad_data, gradient_scaling_factor):
          self.grad_data = grad_data
          self.gradient_scaling_factor = gradient_scaling_factor

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
`;

const WRAPPER = py`
  from runtime.buckets import GradBucket, GradBucketGroup
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
          PRELUDE
          self.dense = GradBucketGroup(
              [GradBucket(dense_grads, factor)],
              self.ddp_config,
              parallel_state.get_data_parallel_group(with_context_parallel=True),
          )
          self.experts = GradBucketGroup(
              EXPERT_BUCKETS,
              self.ddp_config,
              parallel_state.get_expert_data_parallel_group(),
          )
`;

const STATE = py`
  def get_expert_tensor_parallel_world_size():
      return 1
`;

const EP = '1.0 / parallel_state.get_expert_model_parallel_world_size()';
const ONE_BUCKET = '[GradBucket(expert_grads, expert_factor)]';

async function findings(
  averageFactor: string,
  expertBuckets = ONE_BUCKET,
  buckets = BUCKETS,
  prelude = 'pass',
): Promise<{ codes: string[]; messages: string[] }> {
  const program = new Program(await parser());
  program.setFile('runtime/buckets.py', buckets);
  program.setFile(
    'runtime/wrapper.py',
    WRAPPER.replace('AVERAGE_FACTOR', averageFactor)
      .replace('EXPERT_BUCKETS', expertBuckets)
      .replace('PRELUDE', prelude.replace(/\n/g, '\n        ')),
  );
  program.setFile('runtime/parallel_state.py', STATE);
  const all = [...program.analyzeAll()].flatMap(([path, r]) => r.findings.map((f) => ({ path, f })));
  return {
    codes: all.flatMap(({ path, f }) => summary([f]).map((c) => `${path}:${c}`)),
    messages: all.map(({ f }) => f.message),
  };
}

test('element attributes: 1/ep in the buckets of the group that averages over edp is a CP003 warning', async () => {
  const { codes, messages } = await findings(EP);
  assert.deepEqual(codes, ['runtime/wrapper.py:CP003@9'], messages.join('\n'));
  assert.match(messages[0], /averages the gradients over `self.data_parallel_group` \(edp ranks/);
  assert.match(messages[0], /effective learning rate is etp\/tp× the configured one/);
});

test('element attributes: edp/(dp×cp) in the expert buckets leaves the mean and is clean', async () => {
  const fixed =
    'parallel_state.get_expert_data_parallel_world_size() / parallel_state.get_data_parallel_world_size(with_context_parallel=True)';
  const { codes } = await findings(fixed);
  assert.deepEqual(codes, []);
});

test('element attributes: buckets with different factors in one list name no factor for the group', async () => {
  const { codes } = await findings(EP, '[GradBucket(expert_grads, expert_factor), GradBucket(dense_grads, factor)]');
  assert.deepEqual(codes, []);
});

test('element attributes: a list the group extends after construction holds buckets no site shows', async () => {
  const extended = BUCKETS.replace(
    '        self.buckets = buckets\n',
    '        self.buckets = buckets\n        self.buckets.append(GradBucket(None, 1.0))\n',
  );
  assert.notEqual(extended, BUCKETS);
  const { codes } = await findings(EP, ONE_BUCKET, extended);
  assert.deepEqual(codes, []);
});

test('element attributes: a factor is paired with the group of the site that built its bucket', async () => {
  // The expert factor goes to the dense group's buckets and the dense factor to the expert group's: no object
  // averages 1/ep over the expert-data-parallel group.
  const swapped = WRAPPER.replace('[GradBucket(dense_grads, factor)]', '[GradBucket(dense_grads, expert_factor)]');
  const program = new Program(await parser());
  program.setFile('runtime/buckets.py', BUCKETS);
  program.setFile(
    'runtime/wrapper.py',
    swapped
      .replace('AVERAGE_FACTOR', EP)
      .replace('EXPERT_BUCKETS', '[GradBucket(expert_grads, factor)]')
      .replace('PRELUDE', 'pass'),
  );
  program.setFile('runtime/parallel_state.py', STATE);
  const messages = [...program.analyzeAll()].flatMap(([, r]) => r.findings.map((f) => f.message));
  assert.deepEqual(
    messages.filter((m) => /edp ranks/.test(m)),
    [],
  );
});

// The list is gathered before the site (list-origins.ts): bound once, grown by `append` and `extend`, or joined with
// `+`. Each positive below is silent without that reading; each twin changes one step the proof needs.
const GATHERED = 'experts = []\nfor grads in expert_grads:\n    experts.append(GradBucket(grads, expert_factor))';

test('list origins: buckets appended to a local list carry 1/ep to the edp average (CP003)', async () => {
  const { codes } = await findings(EP, 'experts', BUCKETS, GATHERED);
  assert.deepEqual(codes, ['runtime/wrapper.py:CP003@9']);
});

test('list origins: a list extended with another local list and joined with + is followed', async () => {
  const prelude = `${GATHERED}\nlast = [GradBucket(None, expert_factor)]\nlast.extend(experts)`;
  const { codes } = await findings(EP, '[GradBucket(None, expert_factor)] + last', BUCKETS, prelude);
  assert.deepEqual(codes, ['runtime/wrapper.py:CP003@9']);
});

test('list origins: the fixed factor gathered the same way is clean', async () => {
  const fixed =
    'parallel_state.get_expert_data_parallel_world_size() / parallel_state.get_data_parallel_world_size(with_context_parallel=True)';
  const { codes } = await findings(fixed, 'experts', BUCKETS, GATHERED);
  assert.deepEqual(codes, []);
});

test('list origins: a bucket with another factor appended later makes the factors disagree', async () => {
  const prelude = `${GATHERED}\nexperts.append(GradBucket(None, factor))`;
  const { codes } = await findings(EP, 'experts', BUCKETS, prelude);
  assert.deepEqual(codes, []);
});

test('list origins: a list passed to a helper, written by index or bound twice holds buckets no site shows', async () => {
  for (const more of ['register(experts)', 'experts[0] = None', 'experts = list(experts)', 'alias = experts']) {
    const { codes } = await findings(EP, 'experts', BUCKETS, `${GATHERED}\n${more}`);
    assert.deepEqual(codes, [], more);
  }
});

test('list origins: a factor name bound twice in the function names no value, whichever binding the bucket saw', async () => {
  const fixed =
    'parallel_state.get_expert_data_parallel_world_size() / parallel_state.get_data_parallel_world_size(with_context_parallel=True)';
  for (const [first, second] of [
    [fixed, EP],
    [EP, fixed],
  ]) {
    const prelude = `chosen = ${first}\nexperts = []\nexperts.append(GradBucket(None, chosen))\nchosen = ${second}`;
    assert.deepEqual((await findings(EP, 'experts', BUCKETS, prelude)).codes, []);
  }
});

// "Nothing else in the file writes the attribute" counts the writes an element can see: another class of the file that
// keeps an attribute of the same name (Megatron's buffer and its buckets both keep `self.gradient_scaling_factor`)
// writes another object's, while a subclass of the element class writes the element's own.
const UNRELATED =
  '\nclass GradBuffer:\n    def __init__(self, gradient_scaling_factor):\n        self.gradient_scaling_factor = gradient_scaling_factor\n';
const SUBCLASS = '\nclass OneBucket(GradBucket):\n    def reset(self):\n        self.gradient_scaling_factor = 1.0\n';

test('element attributes: the same attribute kept by an unrelated class does not hide the stored parameter', async () => {
  const { codes } = await findings(EP, ONE_BUCKET, BUCKETS + UNRELATED);
  assert.deepEqual(codes, ['runtime/wrapper.py:CP003@9']);
});

test('element attributes: a subclass of the element class that writes the attribute leaves it unknown', async () => {
  const { codes } = await findings(EP, ONE_BUCKET, BUCKETS + SUBCLASS);
  assert.deepEqual(codes, []);
});

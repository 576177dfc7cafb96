// Model-parallel groups with symbolic sizes (group-sizes.ts, group-divisor.ts): a sum over a named group counts
// its replicas, and a divisor named by the frameworks' size helpers must divide exactly that count. A trailing `#!`
// marks the line of the expected CP003; cases without a marker must give nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, py, summary } from './helpers';
import { formatDims, multiplyDims, replicaDims } from '../../../src/analysis/group-sizes';

interface Case {
  readonly name: string;
  /** The expected rule at the marked line (CP003 unless said). */
  readonly code?: string;
  readonly text: string;
}

/** Gradients appended to buckets by a helper that returns a tuple, unpacked, flattened by a method of the class. */
const BUCKETS = py`
  import torch
  import torch.distributed as dist
  from parallel import state

  def split_by_dtype(tensors):
      halves, others = [], []
      for t in tensors:
          if t.dtype == torch.half:
              halves.append(t)
          else:
              others.append(t)
      return halves, others

  class Trainer:
      def _reduce(self, bucket, group):
          flat = self.flatten(bucket)
          dist.all_reduce(flat, group=group)
          flat.div_(DIVISOR)  # mark
          for buf, synced in zip(bucket, self.unflatten(flat, bucket)):
              buf.copy_(synced)

      def sync(self):
          grads = [p.grad for p in self.module.parameters()]
          halves, others = split_by_dtype(grads)
          group = state.get_sequence_data_parallel_group()
          for bucket in (halves, others):
              self._reduce(bucket, group)
          self.optimizer.step()
`;

const CASES: Case[] = [
  {
    name: 'sum over the sequence-data-parallel group divided by its whole size (dp x sp)',
    text: py`
      import torch.distributed as dist
      from parallel import state

      def sync_gradients(model):
          group = state.get_sequence_data_parallel_group()
          size = dist.get_world_size(group=group)
          for p in model.parameters():
              dist.all_reduce(p.grad, group=group)
              p.grad.div_(size)  #!
    `,
  },
  {
    name: 'sum over the sequence-data-parallel group divided by dp = its size / sp',
    text: py`
      import torch.distributed as dist
      from parallel import state

      def sync_gradients(model):
          group = state.get_sequence_data_parallel_group()
          size = dist.get_world_size(group=group) / float(state.get_sequence_parallel_world_size())
          for p in model.parameters():
              dist.all_reduce(p.grad, group=group)
              p.grad.div_(size)
    `,
  },
  {
    name: 'sum over data x context ranks divided by the data-parallel size alone',
    text: py`
      import torch
      from core import parallel_state

      def finish_grad_sync(params):
          group = parallel_state.get_data_parallel_group(with_context_parallel=True)
          for p in params:
              torch.distributed.all_reduce(p.grad, group=group)
              p.grad.mul_(1.0 / parallel_state.get_data_parallel_world_size())  #!
    `,
  },
  {
    name: 'sum over data x context ranks divided by the size with context parallelism',
    text: py`
      import torch
      from core import parallel_state

      def finish_grad_sync(params):
          group = parallel_state.get_data_parallel_group(with_context_parallel=True)
          for p in params:
              torch.distributed.all_reduce(p.grad, group=group)
              p.grad.mul_(1.0 / parallel_state.get_data_parallel_world_size(with_context_parallel=True))
    `,
  },
  {
    name: 'expert gradients summed over the expert-data-parallel group divided by that group size',
    text: py`
      import torch.distributed as dist
      from moe import groups

      def reduce_expert_grads(expert_params, name):
          edp = groups._get_expert_data_parallel_group(name)
          for p in expert_params:
              dist.all_reduce(p.grad, group=edp)
              p.grad.div_(dist.get_world_size(group=edp))  #!
    `,
  },
  {
    name: 'expert gradients summed over the expert-data-parallel group divided by the data-parallel size',
    text: py`
      import torch.distributed as dist
      from moe import groups

      def reduce_expert_grads(expert_params, name):
          edp = groups._get_expert_data_parallel_group(name)
          for p in expert_params:
              dist.all_reduce(p.grad, group=edp)
              p.grad.div_(dist.get_world_size(group=groups._get_data_parallel_group()))
    `,
  },
  {
    name: 'expert gradients pre-scaled by edp/dp and averaged over the expert-data-parallel group',
    text: py`
      import torch
      from core import parallel_state as ps

      def reduce_expert_grads(params):
          group = ps.get_expert_data_parallel_group()
          scale = ps.get_expert_data_parallel_world_size() / ps.get_data_parallel_world_size(with_context_parallel=True)
          for p in params:
              p.grad.mul_(scale)
              torch.distributed.all_reduce(p.grad, op=torch.distributed.ReduceOp.AVG, group=group)
    `,
  },
  {
    name: 'expert gradients pre-scaled by 1/ep and averaged over the expert-data-parallel group',
    text: py`
      import torch
      from core import parallel_state as ps

      def reduce_expert_grads(params):
          group = ps.get_expert_data_parallel_group()
          scale = 1.0 / ps.get_expert_model_parallel_world_size()
          for p in params:
              p.grad.mul_(scale)  #!
              torch.distributed.all_reduce(p.grad, op=torch.distributed.ReduceOp.AVG, group=group)
    `,
  },
  {
    name: 'group and divisor chosen together on each branch: both branches right',
    text: py`
      import torch.distributed as dist
      from parallel import state

      def sync_gradients(model, pipeline):
          if pipeline:
              group = state.get_data_parallel_group()
              size = dist.get_world_size(group)
          else:
              group = state.get_sequence_data_parallel_group()
              size = dist.get_world_size(group) / float(state.get_sequence_parallel_world_size())
          for p in model.parameters():
              dist.all_reduce(p.grad, group=group)
              p.grad.div_(size)
    `,
  },
  {
    name: 'group and divisor chosen together on each branch: the sequence branch forgets sp',
    text: py`
      import torch.distributed as dist
      from parallel import state

      def sync_gradients(model, pipeline):
          if pipeline:
              group = state.get_data_parallel_group()
          else:
              group = state.get_sequence_data_parallel_group()
          size = dist.get_world_size(group)
          for p in model.parameters():
              dist.all_reduce(p.grad, group=group)
              p.grad.div_(size)  #!
    `,
  },
  {
    name: 'a default None divisor filled in from the group, through a helper method',
    text: py`
      import torch.distributed as dist
      from parallel import state

      class Engine:
          def _bucket(self, grads, group, size=None):
              if size is None:
                  size = dist.get_world_size(group=group)
              for g in grads:
                  g.mul_(1.0 / self.predivide)
                  dist.all_reduce(g, group=group)
                  g.mul_(self.predivide / size)  #!

          def sync(self):
              grads = [p.grad for p in self.module.parameters()]
              group = state.get_sequence_data_parallel_group()
              self._bucket(grads, group)
              self.optimizer.step()
    `,
  },
  {
    name: 'the same helper given dp = seq-dp size / sp by its caller',
    text: py`
      import torch.distributed as dist
      from parallel import state

      class Engine:
          def _bucket(self, grads, group, size=None):
              if size is None:
                  size = dist.get_world_size(group=group)
              for g in grads:
                  g.mul_(1.0 / self.predivide)
                  dist.all_reduce(g, group=group)
                  g.mul_(self.predivide / size)

          def sync(self):
              grads = [p.grad for p in self.module.parameters()]
              group = state.get_sequence_data_parallel_group()
              self._bucket(grads, group, size=dist.get_world_size(group) / state.get_sequence_parallel_world_size())
              self.optimizer.step()
    `,
  },
  {
    name: 'gradients gathered into per-dtype buckets by a helper, flattened, reduced and divided by the whole group',
    text: BUCKETS.replace('DIVISOR', 'dist.get_world_size(group=group)').replace('# mark', '#!'),
  },
  {
    name: 'the same buckets divided by dp = the sequence-data-parallel size / sp',
    text: BUCKETS.replace(
      'DIVISOR',
      'dist.get_world_size(group=group) / state.get_sequence_parallel_world_size()',
    ).replace('  # mark', ''),
  },
  {
    name: 'an average over the data-parallel group divided again by its size is a double division, not a wrong divisor',
    code: 'CP002',
    text: py`
      import torch.distributed as dist
      from parallel import state

      def sync_gradients(model):
          group = state.get_data_parallel_group()
          for p in model.parameters():
              dist.all_reduce(p.grad, op=dist.ReduceOp.AVG, group=group)
              p.grad.div_(state.get_data_parallel_world_size())  #!
    `,
  },
  {
    name: 'a group the analysis cannot name keeps it silent, whatever the divisor',
    text: py`
      import torch.distributed as dist
      from parallel import state

      class Reducer:
          def __init__(self, group):
              self.group = group

          def sync(self, model):
              for p in model.parameters():
                  dist.all_reduce(p.grad, group=self.group)
                  p.grad.div_(state.get_data_parallel_world_size())
    `,
  },
  {
    name: 'an unknown extra factor keeps it silent',
    text: py`
      import torch.distributed as dist
      from parallel import state

      def sync_gradients(model, cfg):
          group = state.get_sequence_data_parallel_group()
          for p in model.parameters():
              dist.all_reduce(p.grad, group=group)
              p.grad.div_(dist.get_world_size(group=group) * cfg.factor)
    `,
  },
  {
    name: 'a tensor-parallel sum is not a replica count, whatever follows',
    text: py`
      import torch.distributed as dist
      from parallel import state

      def sync_layernorm(params):
          group = state.get_tensor_model_parallel_group()
          for p in params:
              dist.all_reduce(p.grad, group=group)
    `,
  },
];

for (const c of CASES) {
  test(`group sizes: ${c.name}`, async () => {
    const expected = c.text
      .split('\n')
      .flatMap((line, i) => (/#!\s*$/.test(line) ? [`${c.code ?? 'CP003'}@${i + 1}`] : []));
    const findings = await analyze(c.text);
    assert.deepEqual(summary(findings), expected, findings.map((f) => f.message).join('\n'));
  });
}

test('group sizes: a finding says what was summed, over which group, the divisor and the effective factor', async () => {
  const [finding] = await analyze(CASES[0].text);
  assert.ok(finding, 'expected a finding');
  assert.match(finding.message, /sums the gradients over `group` \(dp×sp ranks\), of which dp hold replicas/);
  assert.match(finding.message, /divided by `size` \(dp×sp\) instead of dp/);
  assert.match(finding.message, /effective learning rate is 1\/sp× the configured one/);
  assert.ok(finding.related.length > 0, 'the reduction is a related location');
  assert.deepEqual(finding.fixes, []);
});

test('group sizes: dimension arithmetic', () => {
  assert.equal(
    formatDims(
      multiplyDims(
        new Map([
          ['dp', 1],
          ['sp', 1],
        ]),
        new Map([['sp', 1]]),
        -1,
      ),
    ),
    'dp',
  );
  assert.equal(formatDims(new Map([['sp', -1]])), '1/sp');
  assert.equal(
    formatDims(
      replicaDims(
        new Map([
          ['dp', 1],
          ['sp', 1],
        ]),
      ),
    ),
    'dp',
  );
  assert.equal(formatDims(replicaDims(new Map([['edp', 1]]))), 'dp×cp');
});

// CP002 for gradients averaged twice through a bucket: each parameter's gradient is divided by its group's size in
// a loop over the bucket's parameters, and the bucket's slices (kept in a dict of lists keyed by group, or a list)
// are then handed to a helper that divides by the group's size again before its SUM all-reduce, on a path where the
// flags of both divisions hold together. The correct twins (the helper told not to divide, the two divisions on
// exclusive branches, a copy divided, another buffer bucketed, a flag never set) stay silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, py, summary } from './helpers';

interface Shape {
  readonly average: string;
  readonly perParamGuard: string;
  readonly gradient: string;
  readonly averaged: string;
  readonly setsFlag: boolean;
  readonly helperDivides: boolean;
  readonly after: string;
}

const BUG: Shape = {
  average: 'average=self.bucket_has_experts',
  perParamGuard: 'if self.bucket_has_experts:',
  gradient: 'self.grad_of(p)',
  averaged: 'self.flat',
  setsFlag: true,
  helperDivides: true,
  after: 'pass',
};

function reducer(shape: Shape): string {
  return py`
    import torch
    import torch.distributed as dist


    class BucketReducer:
        def __init__(self, group, expert_groups):
            self.group = group
            self.expert_groups = expert_groups
            self.pending = []
            self.flat = torch.zeros(1 << 20)
            self.other_flat = torch.zeros(1 << 20)
            self.bucket_has_experts = False

        def grad_of(self, p):
            return p.grad

        def add(self, p, offset):
            g = self.grad_of(p)
            view = self.flat.narrow(0, offset, p.numel())
            view.copy_(g.view(-1))
            g.data = view.view_as(g)
            self.pending.append((p, offset))
            if getattr(p, "expert", False):
                self.bucket_has_experts = ${shape.setsFlag ? 'True' : 'False'}

        def reduce_flat(self, chunks, average=True, group=None):
            flat = torch.cat(chunks)
            if average:
                flat.${shape.helperDivides ? 'div_' : 'add_'}(dist.get_world_size(group=group))
            dist.all_reduce(flat, group=group)
            for c, s in zip(chunks, flat.split([c.numel() for c in chunks])):
                c.copy_(s)

        def reduce_chunks(self, chunks, average=True, group=None):
            batch = []
            for c in chunks:
                batch.append(c)
            self.reduce_flat(batch, average=average, group=group)

        def average(self, flat):
            per_group = {}
            for p, offset in self.pending:
                group = self.group
                g = ${shape.gradient}
                ${shape.perParamGuard}
                    group = self.expert_groups[p.group_name] if getattr(p, "expert", False) else self.group
                    g.data.div_(dist.get_world_size(group=group))
                piece = flat.narrow(0, offset, p.numel())
                per_group.setdefault(group, []).append(piece)
            if not self.bucket_has_experts:
                flat.div_(dist.get_world_size(group=self.group))
            for key in per_group:
                self.reduce_chunks(per_group[key], ${shape.average}, group=key)
            ${shape.after}

        def step(self):
            self.average(${shape.averaged})
            self.pending = []
            self.bucket_has_experts = False
  `;
}

function lineOf(text: string, snippet: string): number {
  return text.split('\n').findIndex((l) => l.includes(snippet)) + 1;
}

test('CP002: gradients divided per parameter and again by the bucket helper, under one flag', async () => {
  const text = reducer(BUG);
  const findings = await analyze(text);
  assert.deepEqual(summary(findings), [`CP002@${lineOf(text, 'average=self.bucket_has_experts')}`]);
  const f = findings[0];
  assert.match(f.message, /averaged twice/);
  assert.match(f.message, /`self\.bucket_has_experts` is true/);
  assert.match(f.message, /1\/N×/);
  assert.doesNotMatch(f.message, /\$\{|undefined/);
  assert.deepEqual(
    f.related.map((r) => r.range.startLine + 1),
    [
      lineOf(text, 'g.data.div_('),
      lineOf(text, 'flat.div_(dist.get_world_size(group=group))'),
      lineOf(text, 'dist.all_reduce(flat'),
      lineOf(text, 'g.data = view'),
      lineOf(text, 'self.average(self.flat)'),
    ],
  );
});

test('CP002: a list bucket, an unconditional per-parameter division and the helper dividing by default', async () => {
  const text = py`
    import torch.distributed as dist

    class Flat:
        def __init__(self):
            self.params = []
            self.buffers = [None, None]

        def place(self, p, start):
            p.grad.data = self.buffers[0][start:start + p.numel()].view_as(p.grad)
            self.params.append(p)

        def average_bucket(self, bucket, group=None):
            flat = torch.cat(bucket)
            flat /= dist.get_world_size(group=group)
            dist.all_reduce(flat, group=group)

        def sync(self, buffer):
            chunks = []
            start = 0
            for p in self.params:
                grad = p.grad
                grad.div_(dist.get_world_size())
                chunks.append(buffer[start:start + p.numel()])
                start += p.numel()
            self.average_bucket(chunks)

        def finish(self):
            self.sync(self.buffers[0])
  `;
  const findings = await analyze(text);
  assert.deepEqual(summary(findings), [`CP002@${lineOf(text, 'self.average_bucket(chunks)')}`]);
});

const TWINS: [string, Partial<Shape>][] = [
  ['the helper is told not to divide (the fix)', { average: 'average=False' }],
  [
    'the per-parameter division and the helper division are on exclusive branches of one flag',
    { perParamGuard: 'if not self.bucket_has_experts:' },
  ],
  ['the divided gradient is a copy', { gradient: 'self.grad_of(p).clone()' }],
  ['another buffer than the gradients\u2019 is bucketed', { averaged: 'self.other_flat' }],
  ['the flag is never set', { setsFlag: false }],
  ['the helper sums without dividing', { helperDivides: false }],
  ['the buffer is scaled back after the reduction', { after: 'flat.mul_(dist.get_world_size(group=self.group))' }],
];

for (const [name, change] of TWINS) {
  test(`clean: ${name}`, async () => {
    assert.deepEqual(summary(await analyze(reducer({ ...BUG, ...change }))), []);
  });
}

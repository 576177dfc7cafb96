// CP003 for gradients divided one by one by the size of their own group and then summed, in buckets keyed by that
// group, without another division: an expert gradient divided by the expert-data-parallel size and summed over
// that group is ep times the data-parallel mean the dense gradients get. The group is proven to be the bucket's
// through a list of groups recorded beside the spans and read back by the same index as the dict's key, and the
// dict of expert groups reaches the reducer through a constructor argument given as `d if flag else None` in
// another file. The correct twins (no per-parameter division, a division by the dense size, another group
// recorded, a group rebound before it is recorded, a rescaled buffer, no dict of groups) stay silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeProgram, py, summary } from './helpers';

interface Shape {
  /** The per-parameter division, or `pass`. */
  readonly divide: string;
  /** What the span's group list records. */
  readonly recorded: string;
  /** A statement between the division and the record. */
  readonly between: string;
  /** The dict's key for a span, and how the reduction reads the group out of it. */
  readonly key: string;
  readonly unpack: string;
  readonly groupArg: string;
  /** A statement before the spans are bucketed, and one after the reduction. */
  readonly before: string;
  readonly after: string;
}

const BUG: Shape = {
  divide: 'g.div_(dist.get_world_size(group=group))',
  recorded: 'group',
  between: 'pass',
  key: 'span_groups[i]',
  unpack: 'pass',
  groupArg: 'key',
  before: 'pass',
  after: 'pass',
};

function reducer(shape: Shape): string {
  return py`
    import torch
    import torch.distributed as dist


    class ShardedReducer:
        def __init__(self, dense_group, expert_groups=None, by_rank=False):
            self.dense_group = dense_group
            self.expert_groups = expert_groups
            self.by_rank = by_rank
            self.members = []
            self.store = torch.zeros(1 << 20)

        def register(self, p, offset):
            view = self.store.narrow(0, offset, p.numel())
            view.copy_(p.grad.view(-1))
            p.grad.data = view.view_as(p.grad)
            self.members.append((p, offset))

        def sum_pieces(self, pieces, scale=True, group=None):
            flat = torch.cat(pieces)
            if scale:
                flat.div_(dist.get_world_size(group=group))
            dist.all_reduce(flat, group=group)
            for piece, synced in zip(pieces, flat.split([x.numel() for x in pieces])):
                piece.copy_(synced)

        def reduce(self, flat):
            spans = []
            span_groups = []
            for p, offset in self.members:
                g = p.grad
                group = self.expert_groups[p.group_name] if getattr(p, "expert", False) else self.dense_group
                ${shape.divide}
                ${shape.between}
                spans.append((offset, p.numel()))
                span_groups.append(${shape.recorded})
            ${shape.before}
            by_group = {}
            for i, (offset, n) in enumerate(spans):
                key = ${shape.key}
                by_group.setdefault(key, []).append(flat.narrow(0, offset, n))
            for key in by_group:
                ${shape.unpack}
                self.sum_pieces(by_group[key], scale=False, group=${shape.groupArg})
            ${shape.after}

        def finish(self):
            self.reduce(self.store)
  `;
}

function runner(expertGroups: string): string {
  return py`
    from trainer.sharded import ShardedReducer
    from utils import groups


    class Runner:
        def __init__(self, model, uses_experts):
            self.uses_experts = uses_experts
            self.expert_groups = groups._get_expert_data_parallel_group_dict()
            self.reducer = ShardedReducer(groups._get_data_parallel_group(), expert_groups=${expertGroups})
  `;
}

const FLAGGED = 'self.expert_groups if self.uses_experts else None';

async function reducerFindings(shape: Shape, expertGroups = FLAGGED) {
  const results = await analyzeProgram({
    'trainer/sharded.py': reducer(shape),
    'trainer/runner.py': runner(expertGroups),
  });
  assert.deepEqual(summary(results.get('trainer/runner.py')?.findings ?? []), []);
  return results.get('trainer/sharded.py')?.findings ?? [];
}

function lineOf(text: string, snippet: string): number {
  return text.split('\n').findIndex((l) => l.includes(snippet)) + 1;
}

test('CP003: expert gradients divided by the expert-data-parallel size, summed in buckets keyed by that group', async () => {
  const text = reducer(BUG);
  const findings = await reducerFindings(BUG);
  assert.deepEqual(summary(findings), [`CP003@${lineOf(text, 'g.div_(')}`]);
  const f = findings[0];
  assert.match(f.message, /sums the gradients over `group` \(edp ranks\), of which dp hold replicas/);
  assert.match(f.message, /divided by `dist\.get_world_size\(group=group\)` \(edp\) instead of dp/);
  assert.match(f.message, /the effective learning rate is dp\/edp× the configured one/);
  assert.match(f.message, /`divide=False`|`scale=False`|divide=False/);
  assert.doesNotMatch(f.message, /\$\{|undefined/);
  assert.deepEqual(
    f.related.map((r) => r.range.startLine + 1),
    [
      lineOf(text, 'span_groups.append('),
      lineOf(text, 'self.sum_pieces(by_group[key]'),
      lineOf(text, 'dist.all_reduce(flat'),
      lineOf(text, 'p.grad.data = view'),
      lineOf(text, 'self.reduce(self.store)'),
    ],
  );
});

test('CP003: the group is one part of a tuple key, unpacked before the reduction', async () => {
  const shape = {
    ...BUG,
    key: 'span_groups[i] if self.by_rank else (offset, span_groups[i])',
    unpack: '_, grp = key',
    groupArg: 'grp',
  };
  const text = reducer(shape);
  assert.deepEqual(summary(await reducerFindings(shape)), [`CP003@${lineOf(text, 'g.div_(')}`]);
});

test('CP003: the dict of groups passed without a condition, and the expression in the other order', async () => {
  const text = reducer(BUG);
  const expected = [`CP003@${lineOf(text, 'g.div_(')}`];
  assert.deepEqual(summary(await reducerFindings(BUG, 'self.expert_groups')), expected);
  assert.deepEqual(
    summary(await reducerFindings(BUG, 'None if not self.uses_experts else self.expert_groups')),
    expected,
  );
});

const TWINS: [string, Partial<Shape>, string?][] = [
  [
    'no per-parameter division, the buffer divided by the dense size (the fix)',
    { divide: 'pass', before: 'flat.div_(dist.get_world_size(group=self.dense_group))' },
  ],
  [
    'each gradient divided by the dense data-parallel size',
    { divide: 'g.div_(dist.get_world_size(group=self.dense_group))' },
  ],
  ['the list records another group than the one divided by', { recorded: 'self.dense_group' }],
  ['the group is rebound between the division and the record', { between: 'group = self.dense_group' }],
  ['the buffer is scaled back after the reduction', { after: 'flat.mul_(2.0)' }],
  ['the key is a tuple but the whole key is read as the group', { key: '(offset, span_groups[i])' }],
  ['no dict of groups is passed', {}, 'None'],
  ['the dict of groups is not named', {}, 'make_groups()'],
];

for (const [name, change, expertGroups] of TWINS) {
  test(`clean: ${name}`, async () => {
    assert.deepEqual(summary(await reducerFindings({ ...BUG, ...change }, expertGroups ?? FLAGGED)), []);
  });
}

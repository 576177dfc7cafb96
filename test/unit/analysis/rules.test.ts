// Messages state the effective factor, ignore comments silence findings, and the file-wide rules CP005 (linear
// learning-rate scaling on a sum) and CP006 (AVG on gloo) with their fixes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyEdits, RULES } from '../../../src/analysis/index';
import { analyze, parsesCleanly, py, summary } from './helpers';

const SUM = py`
  import torch.distributed as dist

  def sync(model):
      for p in model.parameters():
          dist.all_reduce(p.grad)
`;

test('messages give N× (world size) when the world size is unknown and a number when it is known', async () => {
  const [unknown] = await analyze(SUM);
  assert.match(unknown.message, /N× \(world size\)/);
  const [known] = await analyze(SUM, { worldSize: 8 });
  assert.equal(
    known.message,
    "`dist.all_reduce` sums `p.grad` over all ranks (the default group); no division by that group's size follows. The effective learning rate is 8× the configured one.",
  );
});

test('averaging twice states 1/N, a wrong divisor states the ratio', async () => {
  const twice = await analyze(
    py`
    import torch.distributed as dist
    def sync(model):
        for p in model.parameters():
            dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
            p.grad /= dist.get_world_size()
  `,
    { worldSize: 4 },
  );
  assert.match(twice[0].message, /1\/4 of the configured one/);
  const wrong = await analyze(
    py`
    import torch.distributed as dist
    def sync(model):
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= 8
  `,
    { worldSize: 16 },
  );
  assert.equal(wrong[0].code, 'CP003');
  assert.match(wrong[0].message, /hard-coded 8.*2×/);
});

test('ignore comments silence the named code on that line only', async () => {
  const silenced = SUM.replace(
    'dist.all_reduce(p.grad)',
    'dist.all_reduce(p.grad)  # collective-profiler: ignore[CP001]',
  );
  assert.deepEqual(await analyze(silenced), []);
  const other = SUM.replace('dist.all_reduce(p.grad)', 'dist.all_reduce(p.grad)  # collective-profiler: ignore[CP002]');
  assert.deepEqual(summary(await analyze(other)), ['CP001@5']);
  const bare = SUM.replace('dist.all_reduce(p.grad)', 'dist.all_reduce(p.grad)  # collective-profiler: ignore');
  assert.deepEqual(await analyze(bare), []);
});

test('CP005: a learning rate scaled by the world size on top of a sum is reported with its N² factor, and the fix removes the scaling', async () => {
  const text = py`
    import torch
    import horovod.torch as hvd
    def build(model, base_lr):
        opt = torch.optim.SGD(model.parameters(), lr=base_lr * hvd.size())
        return hvd.DistributedOptimizer(opt, named_parameters=model.named_parameters(), op=hvd.Sum)
  `;
  const findings = await analyze(text);
  assert.deepEqual(summary(findings), ['CP005@4', 'CP001@5']);
  const lr = findings[0];
  assert.match(lr.message, /N²× \(world size squared\)/);
  const fixed = applyEdits(text, lr.fixes[0].edits);
  assert.ok(fixed.includes('lr=base_lr)'));
  assert.ok(await parsesCleanly(fixed));
  assert.deepEqual(summary(await analyze(fixed)), ['CP001@5']);
});

test('CP006: ReduceOp.AVG with the gloo backend; the fix sums and divides, and the result is clean', async () => {
  const text = py`
    import torch.distributed as dist
    def setup():
        dist.init_process_group(backend="gloo")
    def sync(model):
        for p in model.parameters():
            dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
  `;
  const findings = await analyze(text);
  assert.deepEqual(summary(findings), ['CP006@6']);
  const fixed = applyEdits(text, findings[0].fixes[0].edits);
  assert.ok(await parsesCleanly(fixed));
  assert.match(fixed, /op=dist\.ReduceOp\.SUM\)\n {8}p\.grad\.div_\(dist\.get_world_size\(\)\)/);
  assert.deepEqual(await analyze(fixed), []);
});

test('on gloo the divide fix comes first for a sum bug and the AVG fix carries a note', async () => {
  const text = SUM.replace('def sync', 'dist.init_process_group("gloo")\n\ndef sync');
  const [f] = await analyze(text);
  assert.match(f.fixes[0].title, /^Divide by dist\.get_world_size\(\)/);
  assert.match(f.fixes[1].title, /gloo does not implement AVG/);
});

test('every rule has a stable code, a name and a docs page', async () => {
  const { existsSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { REPO } = await import('./helpers');
  assert.deepEqual(
    RULES.map((r) => r.code),
    ['CP001', 'CP002', 'CP003', 'CP004', 'CP005', 'CP006', 'CP007', 'CP008'],
  );
  for (const r of RULES) {
    assert.match(r.name, /^[a-z0-9-]+$/);
    assert.ok(existsSync(join(REPO, 'docs', 'rules', `${r.code}.md`)), `docs/rules/${r.code}.md`);
  }
});

test('CP006 stays silent where AVG is feature-detected', async () => {
  const text = py`
    import torch.distributed as dist
    def setup():
        dist.init_process_group("gloo")
    def average(data, features, world):
        if features["avg"]:
            dist.all_reduce(data, op=dist.ReduceOp.AVG)
        else:
            dist.all_reduce(data)
            data.div_(world)
  `;
  assert.deepEqual(await analyze(text), []);
});

test('CP006 speaks only for a group proven to run on gloo, not for the word gloo elsewhere in the file', async () => {
  const avg = `
def sync(model):
    for p in model.parameters():
        dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
`;
  // The backend is chosen at run time, or gloo names a side group the reduction does not use.
  const chosen = `import torch.distributed as dist\ndef setup(cuda):\n    dist.init_process_group("nccl" if cuda else "gloo")\n${avg}`;
  const sideGroup = `import torch.distributed as dist\ncpu_group = dist.new_group(backend="gloo")\ndef setup():\n    dist.init_process_group("nccl")\n${avg}`;
  const mention = `import torch.distributed as dist\nBACKENDS = ["nccl", "gloo"]\n${avg}`;
  for (const text of [chosen, sideGroup, mention]) assert.deepEqual(summary(await analyze(text)), [], text);
  // A reduction over a group created with the gloo backend is proven.
  const glooGroup = `import torch.distributed as dist\ncpu_group = dist.new_group(backend="gloo")\ndef sync(model):\n    for p in model.parameters():\n        dist.all_reduce(p.grad, op=dist.ReduceOp.AVG, group=cpu_group)\n`;
  assert.deepEqual(summary(await analyze(glooGroup)), ['CP006@5']);
});

test('a hard-coded divisor is a hint without a world size, CP003 for a different known one, and right for the same', async () => {
  const text = py`
    import torch.distributed as dist
    def all_reduce_grads(params):
        for p in params:
            dist.all_reduce(p.grad)
            p.grad.mul_(1.0 / 8)
  `;
  assert.deepEqual(summary(await analyze(text)), []);
  assert.deepEqual(summary(await analyze(text, { hints: true })), ['CP003@5']);
  assert.deepEqual(summary(await analyze(text, { worldSize: 16 })), ['CP003@5']);
  assert.deepEqual(summary(await analyze(text, { worldSize: 8 })), []);
});

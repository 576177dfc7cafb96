// DTensor redistribution as a reduction (dtensor-reductions.ts): a gradient wrapped as a `Partial` DTensor over a
// mesh and redistributed to `Replicate()` or `Shard(d)` is reduced over that mesh, and the rules judge it like
// `dist.all_reduce(grad, op, group=mesh_group)`. Cases written for this project, after the pattern of torch's
// DTensor users and torchtitan's SimpleFSDP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, py, summary } from './helpers';

const HEAD = py`
  import torch
  import torch.distributed as dist
  from torch.distributed.tensor import DTensor, Partial, Replicate, Shard
`;

/** A training step whose gradient synchronisation is `SYNC` (indented for the loop over the parameters). */
function step(sync: string, args = 'mesh'): string {
  const body = sync
    .trim()
    .split('\n')
    .map((l) => `        ${l.trim()}`)
    .join('\n');
  return (
    HEAD +
    py`
      def train(model, opt, batch, ${args}):
          loss = model(batch).mean()
          loss.backward()
          for p in model.parameters():
    ` +
    `${body}\n    opt.step()\n`
  );
}

test('CP001: a Partial("sum") gradient over the data-parallel mesh dimension, replicated and never divided', async () => {
  const code = step('p.grad = DTensor.from_local(p.grad, mesh["dp"], [Partial()]).full_tensor()');
  const findings = await analyze(code);
  assert.deepEqual(summary(findings), ['CP001@8']);
  assert.match(findings[0].message, /sums `p\.grad` over the data-parallel group `mesh\["dp"\]`/);
});

test('CP001: the partial DTensor held in a local and reduce-scattered over a dp mesh', async () => {
  const code = step(
    `
    d = DTensor.from_local(p.grad, dp_mesh, (Partial(reduce_op="sum"),))
    p.grad = d.redistribute(dp_mesh, (Shard(0),)).to_local()
    `,
    'dp_mesh',
  );
  // Reported where the operation is written (the placement), with the redistribution as related evidence.
  assert.deepEqual(summary(await analyze(code)), ['CP001@8']);
});

test('CP003: a Partial sum over the dp mesh divided by the GPUs of one node', async () => {
  const code = step(`
    p.grad = DTensor.from_local(p.grad, mesh["dp"], [Partial("sum")]).full_tensor()
    p.grad /= torch.cuda.device_count()
  `);
  assert.deepEqual(summary(await analyze(code)), ['CP003@9']);
});

test('silent: a Partial("avg") over the data-parallel mesh, and Partial sums over tp and ep meshes', async () => {
  for (const sync of [
    'p.grad = DTensor.from_local(p.grad, mesh["dp"], [Partial("avg")]).full_tensor()',
    'p.grad = DTensor.from_local(p.grad, mesh["dp"], [Partial(reduce_op="avg")]).redistribute(mesh["dp"], [Replicate()]).to_local()',
    'p.grad = DTensor.from_local(p.grad, mesh["tp"], [Partial("sum")]).full_tensor()',
    'p.grad = DTensor.from_local(p.grad, mesh["ep"], [Partial()]).redistribute(mesh["ep"], [Replicate()]).to_local()',
  ])
    assert.deepEqual(summary(await analyze(step(sync))), [], sync);
});

test('silent: a reduced copy kept apart, a partial target, another mesh, and several mesh dimensions', async () => {
  for (const sync of [
    // The redistribution returns a new tensor: a norm of it does not change the gradient the step applies.
    'g = DTensor.from_local(p.grad, mesh["dp"], [Partial()]).full_tensor()\nprint(g.norm())',
    // Partial to Partial moves nothing.
    'p.grad = DTensor.from_local(p.grad, mesh["dp"], [Partial()]).redistribute(mesh["dp"], [Partial()]).to_local()',
    'p.grad = DTensor.from_local(p.grad, mesh["dp"], [Partial()]).redistribute(mesh["tp"], [Replicate()]).to_local()',
    'p.grad = DTensor.from_local(p.grad, mesh, [Partial(), Partial()]).full_tensor()',
  ])
    assert.deepEqual(summary(await analyze(step(sync))), [], sync);
});

test('silent: the fixed SimpleFSDP shape, a Partial subclass that divides before it sums', async () => {
  const code =
    HEAD +
    py`
      class _ScaledPartial(Partial):
          def __init__(self, reduction_divide_factor):
              self.reduction_divide_factor = reduction_divide_factor
              super().__init__(reduce_op="sum")

      def train(model, opt, batch, mesh):
          loss = model(batch).mean()
          loss.backward()
          for p in model.parameters():
              p.grad = DTensor.from_local(p.grad, mesh["dp"], [_ScaledPartial(8.0)]).full_tensor()
          opt.step()
    `;
  assert.deepEqual(summary(await analyze(code)), []);
  // The same step with the plain placement is reported: the subclass is what keeps it silent.
  assert.deepEqual(summary(await analyze(code.replace('_ScaledPartial(8.0)', 'Partial()'))), ['CP001@13']);
});

test('silent: a sum over the dp mesh divided by its size', async () => {
  const code = step(`
    dp = mesh["dp"]
    p.grad = DTensor.from_local(p.grad, dp, [Partial()]).redistribute(dp, [Replicate()]).to_local()
    p.grad /= dp.size()
  `);
  assert.deepEqual(summary(await analyze(code)), []);
});

// A sum over a named dimension of a device mesh divided by the default group's size (mesh-shapes.ts): CP003 only
// where the mesh has another dimension whose size is not 1, so the dimension is proven smaller than the job; silent
// for a one-dimensional mesh (the dimension is the job) and for a mesh whose shape is not in view. Cases written for
// this project.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, py, summary } from './helpers';

/** A training step that builds its mesh with `MESH` (or takes it as a parameter when MESH is empty). */
function step(mesh: string, group: string, divisor = 'p.grad /= dist.get_world_size()'): string {
  return [
    'import torch',
    'import torch.distributed as dist',
    'from torch.distributed.device_mesh import init_device_mesh',
    '',
    '',
    `def train(model, opt, data, n, t${mesh ? '' : ', mesh'}):`,
    mesh ? `    mesh = ${mesh}` : '    pass',
    '    for x in data:',
    '        loss = model(x).sum()',
    '        loss.backward()',
    '        for p in model.parameters():',
    `            dist.all_reduce(p.grad, group=${group})`,
    `            ${divisor}`,
    '        opt.step()',
    '',
  ].join('\n');
}

const ONE_D = 'init_device_mesh("cuda", (n,), mesh_dim_names=("dp",))';
const TWO_D = 'init_device_mesh("cuda", (n, t), mesh_dim_names=("dp", "tp"))';

test('CP003: mesh["dp"] of a mesh with a tp dimension of unknown size, divided by the default group size', async () => {
  const findings = await analyze(step(TWO_D, 'mesh["dp"].get_group()'));
  assert.deepEqual(summary(findings), ['CP003@13']);
});

test('CP003: mesh.get_group(mesh_dim="dp") of a (n, 4) mesh divided by the default group size', async () => {
  const code = step(TWO_D.replace('(n, t)', '(n, 4)'), 'mesh.get_group(mesh_dim="dp")');
  assert.deepEqual(summary(await analyze(code)), ['CP003@13']);
});

test('twin: mesh["dp"] of a one-dimensional mesh is the whole job, so the default group size is right', async () => {
  assert.deepEqual(summary(await analyze(step(ONE_D, 'mesh["dp"].get_group()'))), []);
  assert.deepEqual(summary(await analyze(step(ONE_D, 'mesh.get_group("dp")'))), []);
});

test('twin: the other dimensions written as 1 leave the dp dimension the whole job', async () => {
  const code = step(TWO_D.replace('(n, t)', '(n, 1)'), 'mesh["dp"].get_group()');
  assert.deepEqual(summary(await analyze(code)), []);
});

test('twin: a mesh passed in (shape not in view) proves nothing about the default group size', async () => {
  assert.deepEqual(summary(await analyze(step('', 'mesh["dp"]'))), []);
});

test('twin: a mesh held in self and built one-dimensional in __init__', async () => {
  const code = py`
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh


    class Trainer:
        def __init__(self, n):
            self.mesh = init_device_mesh("cuda", (n,), mesh_dim_names=("dp",))

        def step(self, model, opt, x):
            loss = model(x).sum()
            loss.backward()
            for p in model.parameters():
                dist.all_reduce(p.grad, group=self.mesh["dp"].get_group())
                p.grad /= dist.get_world_size()
            opt.step()
  `;
  assert.deepEqual(summary(await analyze(code)), []);
  const twoD = code.replace('(n,), mesh_dim_names=("dp",)', '(n, 2), mesh_dim_names=("dp", "tp")');
  assert.deepEqual(summary(await analyze(twoD)), ['CP003@15']);
});

test('the sum itself is still read: an undivided sum over the dp dimension of any mesh is CP001', async () => {
  for (const mesh of [ONE_D, TWO_D, '']) {
    const findings = await analyze(step(mesh, 'mesh["dp"].get_group()', 'pass'));
    assert.deepEqual(
      findings.map((f) => f.code),
      ['CP001'],
      mesh || 'a mesh parameter',
    );
  }
});

test('twin: a sum over group=dist.group.WORLD divided by the default group size is the average', async () => {
  const code = step('', 'dist.group.WORLD');
  assert.deepEqual(summary(await analyze(code)), []);
});

test('twin: the divisor names the same mesh dimension in another spelling (the average)', async () => {
  for (const divisor of [
    'p.grad /= dist.get_world_size(group=mesh.get_group("dp"))',
    'p.grad /= dist.get_world_size(mesh.get_group(mesh_dim="dp"))',
    'p.grad /= dist.get_world_size(group=mesh["dp"].get_group())',
  ]) {
    assert.deepEqual(summary(await analyze(step(TWO_D, 'mesh["dp"].get_group()', divisor))), [], divisor);
  }
});

test('CP003: the divisor is the size of another mesh dimension than the one summed over', async () => {
  const code = step(TWO_D, 'mesh["dp"].get_group()', 'p.grad /= dist.get_world_size(group=mesh.get_group("tp"))');
  assert.deepEqual(summary(await analyze(code)), ['CP003@13']);
});

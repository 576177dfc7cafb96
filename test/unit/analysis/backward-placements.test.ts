// The backward reduction of a DTensor parametrization (contracts/backward-placements.ts): a function that distributes
// a module's parameters on the mesh it is given and registers a module handing them on as
// `redistribute([Replicate()] * n).to_local(grad_placements=[Partial("avg")] * n)` averages their gradients over that
// mesh in the backward. Cases written for this project after the shape of torch's DTensor users (SimpleFSDP).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseModule } from '../../../src/analysis/parse';
import { FileSyntax } from '../../../src/analysis/contracts/placement-syntax';
import { readBackwardAveragers } from '../../../src/analysis/contracts/backward-placements';
import { parser, py } from './helpers';

async function averagers(text: string): Promise<string[]> {
  const parsed = parseModule(await parser(), text, 5_000, Number.POSITIVE_INFINITY);
  assert.ok('module' in parsed);
  return readBackwardAveragers(new FileSyntax(parsed.module, parsed.source)).map(
    (a) => `${a.fn}(${a.meshParam}#${a.meshIndex}) ${a.cls} @${a.placement.line + 1}`,
  );
}

/** A parametrization class whose gradient placements are `GRAD` and a function binding it (`BIND`, `DIST`). */
function wrapper(
  grad: string,
  options: { source?: string; bind?: string; dist?: string; repeat?: string; ret?: string } = {},
): string {
  const source = options.source ?? 'x';
  return py`
    import torch
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor


    class Gathered(torch.nn.Module):
        def __init__(self, mesh, sharding):
            super().__init__()
            self.mesh = mesh
            self.sharding = sharding
            self.compute = [Replicate()] * self.mesh.ndim
            self.grads = ${grad}

        def forward(self, x):
            local = DTensor.from_local(x.to_local(), self.mesh, self.sharding)
            return ${source}.redistribute(placements=self.compute).to_local(grad_placements=self.grads)


    def shard_model(model, mesh, dim=0):
        for mod in list(model.modules()):
            if isinstance(mod, Gathered):
                continue
            for name, p in list(mod.named_parameters(recurse=False)):
                mod.register_parameter(name, torch.nn.Parameter(distribute_tensor(p, ${options.dist ?? 'mesh'}, (Shard(dim),))))
            register(mod, ${options.bind ?? 'Gathered(mesh, (Shard(dim),))'})
        return ${options.ret ?? 'model'}
  `;
}

test('an avg partial over every dimension of the stored mesh: the binding function averages over its mesh', async () => {
  assert.deepEqual(await averagers(wrapper('[Partial(reduce_op="avg")] * self.mesh.ndim')), [
    'shard_model(mesh#1) Gathered @11',
  ]);
});

test('the tensor re-wrapped on the stored mesh with from_local, and a one-element placement list', async () => {
  assert.deepEqual(await averagers(wrapper('[Partial("avg")]', { source: 'local' })), [
    'shard_model(mesh#1) Gathered @11',
  ]);
});

test('the mesh passed by keyword, and distribute_tensor chosen by a condition', async () => {
  const text = wrapper('(Partial("avg"),)', {
    source: 'local',
    bind: 'Gathered(sharding=(Shard(dim),), mesh=mesh)',
  }).replace(
    'torch.nn.Parameter(distribute_tensor(',
    'torch.nn.Parameter((own if isinstance(p, DTensor) else distribute_tensor)(',
  );
  // A call through a parenthesised choice is not a local: only the named local form is read.
  assert.deepEqual(await averagers(text), []);
  const local = text
    .replace('(own if isinstance(p, DTensor) else distribute_tensor)(', 'fn(')
    .replace(
      '        for name, p',
      '        fn = own if isinstance(mod, DTensor) else distribute_tensor\n        for name, p',
    );
  assert.deepEqual(await averagers(local), ['shard_model(mesh#1) Gathered @11']);
});

test('silent: a sum partial, a Partial subclass, a placement chosen by a condition, a computed op', async () => {
  assert.deepEqual(await averagers(wrapper('[Partial()] * self.mesh.ndim')), []);
  const scaled = wrapper('[ScaledPartial(8)] * self.mesh.ndim').replace(
    'class Gathered',
    'class ScaledPartial(Partial):\n    pass\n\n\nclass Gathered',
  );
  assert.deepEqual(await averagers(scaled), []);
  assert.deepEqual(await averagers(wrapper('[ScaledPartial(f) if f else Partial("avg")] * self.mesh.ndim')), []);
  assert.deepEqual(await averagers(wrapper('[Partial(reduce_op=op)] * self.mesh.ndim')), []);
});

test('silent: placements repeated over another mesh, parameters on another mesh, the module not returned, no skip', async () => {
  assert.deepEqual(await averagers(wrapper('[Partial("avg")] * self.other.ndim')), []);
  assert.deepEqual(await averagers(wrapper('[Partial("avg")] * self.mesh.ndim', { dist: 'world' })), []);
  assert.deepEqual(
    await averagers(wrapper('[Partial("avg")] * self.mesh.ndim', { bind: 'Gathered(world, (Shard(dim),))' })),
    [],
  );
  assert.deepEqual(await averagers(wrapper('[Partial("avg")] * self.mesh.ndim', { ret: 'None' })), []);
  // A function that wraps every module again, already wrapped ones too, does not decide their gradients' mesh.
  const again = wrapper('[Partial("avg")] * self.mesh.ndim').replace(
    /\n\s*if isinstance\(mod, Gathered\):\n\s*continue/,
    '',
  );
  assert.doesNotMatch(again, /continue/);
  assert.deepEqual(await averagers(again), []);
});

test('silent: a Partial that is not torch`s, and a redistribution to a shard', async () => {
  const own = wrapper('[Partial("avg")] * self.mesh.ndim').replace(
    'from torch.distributed.tensor import DTensor, Partial,',
    'from mylib import Partial\nfrom torch.distributed.tensor import DTensor,',
  );
  assert.deepEqual(await averagers(own), []);
  const shard = wrapper('[Partial("avg")] * self.mesh.ndim').replace(
    '[Replicate()] * self.mesh.ndim',
    '[Shard(0)] * self.mesh.ndim',
  );
  assert.deepEqual(await averagers(shard), []);
});

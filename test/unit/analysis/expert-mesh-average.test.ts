// Expert gradients averaged over a mesh smaller than the data-parallel one (contracts/expert-mesh-*.ts, CP003). A
// program whose backward averager (a parametrization handing parameters on with `grad_placements=[Partial("avg")]`)
// wraps every layer's experts with a mesh that lacks some data-parallel dimensions, while the experts' inputs come
// through a token dispatch over exactly those dimensions, gives the experts |ep| times the gradient the rest of the
// model gets. Program cases written for this project (their own names, after the shape of SimpleFSDP with expert
// parallelism); each twin removes or changes one step of the proof and stays silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeProgram, py, summaryByPath } from './helpers';

const AVERAGER = (grads: string) => py`
  import torch
  from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor


  class GatherOnUse(torch.nn.Module):
      def __init__(self, mesh, sharding, factor=None):
          super().__init__()
          self.mesh = mesh
          self.sharding = sharding
          self.compute = [Replicate()] * self.mesh.ndim
          self.grads = ${grads}

      def forward(self, x):
          return x.redistribute(placements=self.compute).to_local(grad_placements=self.grads)


  def shard_params(model, mesh, factor=None):
      for mod in list(model.modules()):
          if getattr(mod, "_gathered", False):
              continue
          for name, p in list(mod.named_parameters(recurse=False)):
              mod.register_parameter(name, torch.nn.Parameter(distribute_tensor(p, mesh, (Shard(0),))))
          attach(mod, GatherOnUse(mesh, (Shard(0),), factor))
      return model
`;

const MESHES = py`
  from torch.distributed.device_mesh import init_device_mesh


  class Layout:
      def build(self):
          sizes, names = [], []
          for size, name in zip([self.replica, self.rest, self.inner, self.seq], ["replica", "rest", "inner", "seq"]):
              if size > 1 or name == "rest":
                  sizes.append(size)
                  names.append(name)
          mesh = init_device_mesh("cuda", sizes, mesh_dim_names=names)
          data, moe = [], []
          data.append("rest")
          if "inner" in names:
              data.append("inner")
              moe.append("inner")
          if self.seq > 1:
              data.append("seq")
              moe.append("seq")
          mesh[tuple(data)]._flatten(mesh_dim_name="data")
          mesh[tuple(moe)]._flatten(mesh_dim_name="moe")
          return mesh
`;

const STYLE = (hook: string) => py`
  from torch.distributed._functional_collectives import all_to_all_single_autograd
  from torch.distributed.tensor import distribute_module
  from torch.distributed.tensor.parallel import ParallelStyle


  class RouteTokens(ParallelStyle):
      def _send(self, module, inputs, mesh):
          tokens, counts = inputs
          return ${hook}, counts

      def _apply(self, module, mesh):
          return distribute_module(module, mesh, None, input_fn=self._send)


  class RouteSplit(RouteTokens):
      def __init__(self, moe_mesh, split_mesh):
          super().__init__()
          self.moe_mesh = moe_mesh

      def _send(self, module, inputs, mesh):
          return super()._send(module, inputs, self.moe_mesh)
`;

const APPLY = py`
  from torch.distributed.tensor.parallel import parallelize_module
  from route import RouteSplit, RouteTokens


  def apply_moe(model, moe_mesh, split_mesh, split):
      for block in model.blocks.values():
          plan, mesh = None, None
          if moe_mesh is None:
              plan, mesh = Dense(), split_mesh
          elif split:
              plan, mesh = RouteSplit(moe_mesh, split_mesh), split_mesh
          else:
              plan, mesh = RouteTokens(), moe_mesh
          parallelize_module(module=block.ffn.experts, device_mesh=mesh, parallelize_plan=plan)
`;

const SETUP = (options: { expert?: string; root?: string; experts?: string } = {}) => py`
  from fsdp_lite import shard_params
  from moe_setup import apply_moe


  def setup(model, layout, cfg):
      world = layout.mesh
      apply_moe(model, moe_mesh=world["moe"] if cfg.moe else None, split_mesh=None, split=cfg.split)
      names = []
      if cfg.moe:
          names.append("rest")
      expert_mesh = world[tuple(names)]
      for _, block in model.blocks.items():
          if cfg.moe:
              block.${options.experts ?? 'ffn.experts'} = shard_params(block.${options.experts ?? 'ffn.experts'}, ${options.expert ?? 'expert_mesh'})
      model = shard_params(model, ${options.root ?? 'world["data"]'})
      return model
`;

const AVG = '[Partial(reduce_op="avg")] * self.mesh.ndim';
const DISPATCH = 'all_to_all_single_autograd(tokens, self.recv, self.send, mesh.get_group())';

function program(parts: { grads?: string; hook?: string; setup?: string } = {}): Record<string, string> {
  return {
    'fsdp_lite.py': AVERAGER(parts.grads ?? AVG),
    'layout.py': MESHES,
    'route.py': STYLE(parts.hook ?? DISPATCH),
    'moe_setup.py': APPLY,
    'setup.py': parts.setup ?? SETUP(),
  };
}

test('CP003: experts averaged over a mesh without the dispatch dimensions, at the placement', async () => {
  const results = await analyzeProgram(program());
  assert.deepEqual(summaryByPath(results), ['fsdp_lite.py:CP003@11']);
  const finding = results.get('fsdp_lite.py')!.findings[0];
  assert.match(finding.message, /`shard_params\(block\.ffn\.experts, expert_mesh, …\)` wraps the experts/);
  assert.match(finding.message, /lacks `inner` × `seq` of the data-parallel mesh `world\["data"\]`/);
  assert.match(finding.message, /token dispatch \(`RouteTokens`\) over `world\["moe"\]`/);
  assert.match(finding.message, /\|ep\|× \(the size of `world\["moe"\]`/);
  assert.deepEqual(
    finding.related.map((r) => `${r.file}:${r.range.startLine + 1}`),
    ['setup.py:14', 'setup.py:15', 'moe_setup.py:14', 'route.py:9'],
  );
});

test('CP003: the data mesh held in a local', async () => {
  const setup = SETUP({ root: 'data_mesh' }).replace(
    '    world = layout.mesh\n',
    '    world = layout.mesh\n    data_mesh = world["data"]\n',
  );
  assert.deepEqual(summaryByPath(await analyzeProgram(program({ setup }))), ['fsdp_lite.py:CP003@11']);
});

test('silent: the fixed placement (a Partial subclass that divides by the whole factor) and a sum', async () => {
  const fixed = '[ScaledPartial(factor) if factor is not None else Partial(reduce_op="avg")] * self.mesh.ndim';
  assert.deepEqual(summaryByPath(await analyzeProgram(program({ grads: fixed }))), []);
  assert.deepEqual(summaryByPath(await analyzeProgram(program({ grads: '[Partial()] * self.mesh.ndim' }))), []);
});

test('silent: a module that gets no dispatch (the router) on the smaller mesh', async () => {
  assert.deepEqual(summaryByPath(await analyzeProgram(program({ setup: SETUP({ experts: 'ffn.router' }) }))), []);
});

test('silent: an experts mesh whose size is not known (a parameter), and the same mesh for both', async () => {
  const param = SETUP({ expert: 'cfg.expert_mesh' });
  assert.deepEqual(summaryByPath(await analyzeProgram(program({ setup: param }))), []);
  const same = SETUP({ expert: 'world["data"]' });
  assert.deepEqual(summaryByPath(await analyzeProgram(program({ setup: same }))), []);
});

test('silent: experts whose input hook moves no tokens over its mesh', async () => {
  const none = program({ hook: 'tokens' });
  assert.deepEqual(summaryByPath(await analyzeProgram(none)), []);
  const other = program({ hook: 'all_to_all_single_autograd(tokens, self.recv, self.send, world_group)' });
  assert.deepEqual(summaryByPath(await analyzeProgram(other)), []);
});

test('silent: the data mesh holds a dimension the dispatch does not (replicas), or the experts mesh is chosen late', async () => {
  const replicas = MESHES.replace('data.append("rest")', 'data.append("rest")\n        data.append("replica")');
  assert.deepEqual(summaryByPath(await analyzeProgram({ ...program(), 'layout.py': replicas })), []);
  // The experts' mesh names depend on a branch the wrap does not decide.
  const undecided = SETUP().replace(
    'if cfg.moe:\n        names.append("rest")',
    'if cfg.other:\n        names.append("rest")',
  );
  assert.deepEqual(summaryByPath(await analyzeProgram(program({ setup: undecided }))), []);
});

test('silent: FSDP2 with set_gradient_divide_factor on the experts', async () => {
  const fsdp2 = py`
    from torch.distributed.fsdp import fully_shard
    from moe_setup import apply_moe


    def setup(model, layout, cfg):
        world = layout.mesh
        apply_moe(model, moe_mesh=world["moe"] if cfg.moe else None, split_mesh=None, split=cfg.split)
        for _, block in model.blocks.items():
            block.ffn.experts = fully_shard(block.ffn.experts, mesh=world["rest"])
            block.ffn.experts.set_gradient_divide_factor(cfg.data_size)
        model = fully_shard(model, mesh=world["data"])
        return model
  `;
  assert.deepEqual(summaryByPath(await analyzeProgram(program({ setup: fsdp2 }))), []);
});

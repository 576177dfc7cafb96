// The expert-parallel token dispatch read from torch's parallel-style contract (contracts/token-dispatch.ts): a
// `ParallelStyle` whose `_apply` registers an input hook with `distribute_module`, the hook moving the inputs with
// `all_to_all_single_autograd` over the style's mesh, and `parallelize_module` applying a style to a module. Cases
// written for this project after the shape of torch's expert-parallel users.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseModule } from '../../../src/analysis/parse';
import { FileSyntax } from '../../../src/analysis/contracts/placement-syntax';
import { readDispatchStyles, readStyleApplications } from '../../../src/analysis/contracts/token-dispatch';
import { parser, py } from './helpers';

async function syntaxOf(text: string): Promise<FileSyntax> {
  const parsed = parseModule(await parser(), text, 5_000, Number.POSITIVE_INFINITY);
  assert.ok('module' in parsed);
  return new FileSyntax(parsed.module, parsed.source);
}

async function styles(text: string): Promise<string[]> {
  return readDispatchStyles(await syntaxOf(text)).map((s) => `${s.cls}@${s.dispatch.line + 1}`);
}

function style(options: { group?: string; input?: string; base?: string; mesh?: string } = {}): string {
  return py`
    from torch.distributed._functional_collectives import all_to_all_single_autograd
    from torch.distributed.tensor import distribute_module
    from torch.distributed.tensor.parallel import ParallelStyle


    class RouteTokens(${options.base ?? 'ParallelStyle'}):
        def _send(self, module, inputs, mesh):
            tokens, counts = inputs
            return all_to_all_single_autograd(tokens, self.recv, self.send, ${options.group ?? 'mesh.get_group()'}), counts

        def _apply(self, module, mesh):
            return distribute_module(module, ${options.mesh ?? 'mesh'}, None, input_fn=${options.input ?? 'self._send'})
  `;
}

test('a parallel style whose input hook all-to-alls the tokens over its mesh is a dispatch', async () => {
  assert.deepEqual(await styles(style()), ['RouteTokens@9']);
  assert.deepEqual(await styles(style({ group: 'group=mesh' })), ['RouteTokens@9']);
});

test('silent: another group, the hook as output, a class that is not a ParallelStyle, another mesh', async () => {
  assert.deepEqual(await styles(style({ group: 'world_group' })), []);
  assert.deepEqual(await styles(style({ input: 'None, output_fn=self._send' })), []);
  assert.deepEqual(await styles(style({ base: 'object' })), []);
  assert.deepEqual(await styles(style({ mesh: 'other_mesh' })), []);
});

test('applications of a style list the plan or every value of the local that holds it', async () => {
  const text = py`
    from torch.distributed.tensor.parallel import parallelize_module


    def apply(model, ep_mesh, tp_mesh, split):
        for block in model.layers.values():
            plan, mesh = None, None
            if split:
                plan, mesh = Colwise(), tp_mesh
            else:
                plan = RouteTokens()
                mesh = ep_mesh
            parallelize_module(module=block.moe.experts, device_mesh=mesh, parallelize_plan=plan)
            parallelize_module(block.router, tp_mesh, Colwise())
  `;
  const found = readStyleApplications(await syntaxOf(text)).map(
    (a) => `${a.fn}: ${a.module} on ${a.mesh} by ${a.plans.map(String).join('|')} @${a.site.line + 1}`,
  );
  assert.deepEqual(found, [
    'apply: block.moe.experts on mesh by null|Colwise|RouteTokens @12',
    'apply: block.router on tp_mesh by Colwise @13',
  ]);
});

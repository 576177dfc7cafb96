// Expert weights scaled for the ranks twice: a gradient scaler (an autograd Function whose backward returns `grad *
// ctx.scale`) applied to a weight marked `allreduce=False` for expert parallelism, with a scale of one over a
// parallel group's size, while the data-parallel wrapper divides the marked weights' gradients by the data-parallel
// size after the sync (with the dispatch's sum over the expert-parallel ranks, the mean). CP002 at the application;
// every twin that lacks a piece of the proof stays silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeProgram, py, summary } from './helpers';

const SCALER = py`
  import torch
  from state import get_tensor_and_expert_parallel_world_size


  class GradScale(torch.autograd.Function):
      @staticmethod
      def forward(ctx, x, factor):
          ctx.factor = factor
          return x

      @staticmethod
      def backward(ctx, grad):
          return grad * ctx.factor, None


  grad_scale = GradScale.apply
`;

const LAYER_BODY = py`
  class ExpertMLP(torch.nn.Module):
      def __init__(self, size, expert_parallel):
          super().__init__()
          self.expert_parallel = expert_parallel
          self.factor = 1 / get_tensor_and_expert_parallel_world_size()
          self.fc1 = torch.nn.Parameter(torch.empty(size, size))
          self.fc2 = torch.nn.Parameter(torch.empty(size, size))
          setattr(self.fc1, 'allreduce', not self.expert_parallel)
          setattr(self.fc2, 'allreduce', not self.expert_parallel)

      def scaled(self, w):
          if self.factor is None:
              return w
          return grad_scale(w, self.factor)

      def forward(self, tokens):
          w1, w2 = (self.scaled(self.fc1), self.scaled(self.fc2))
          return torch.relu(tokens @ w1) @ w2
`;

/** The layer file: the scaler and the module, with the module's text replaced as a case needs. */
function layer(edit: (body: string) => string = (b) => b): string {
  return `${SCALER.trimEnd()}\n\n\n${edit(LAYER_BODY)}`;
}

const DISPATCH = py`
  import torch
  from state import get_expert_model_parallel_group


  def dispatch_tokens(tokens, sizes):
      output = tokens.new_empty(sum(sizes), tokens.size(1))
      torch.distributed.all_to_all_single(output, tokens, sizes, sizes, group=get_expert_model_parallel_group())
      return output
`;

const WRAPPER = py`
  import torch


  class DataParallel(torch.nn.Module):
      def __init__(self, module, data_parallel_group):
          super().__init__()
          self.module = module
          self.expert_grads = []
          self.data_parallel_world_size = torch.distributed.get_world_size(group=data_parallel_group)
          for param in self.module.parameters():
              if param.requires_grad and not getattr(param, 'allreduce', True):
                  param.main_grad = torch.zeros(param.data.shape, dtype=torch.float)
                  self.expert_grads.append(param.main_grad)

      def hook(self, param):
          param.main_grad.add_(param.grad.data)
          param.grad = None

      def finish_grad_sync(self):
          for expert_grad in self.expert_grads:
              expert_grad /= self.data_parallel_world_size
`;

async function codesOf(layerText: string, wrapper = WRAPPER, more: Record<string, string> = {}): Promise<string[]> {
  const results = await analyzeProgram({ 'moe.py': layerText, 'dispatch.py': DISPATCH, 'ddp.py': wrapper, ...more });
  return summary(results.get('moe.py')?.findings ?? []);
}

test('a 1/(tp×ep) gradient scaler on expert weights the wrapper divides by dp is CP002 at each application', async () => {
  const results = await analyzeProgram({ 'moe.py': layer(), 'dispatch.py': DISPATCH, 'ddp.py': WRAPPER });
  assert.deepEqual(summary(results.get('moe.py')!.findings), ['CP002@35', 'CP002@35']);
  assert.deepEqual(summary(results.get('ddp.py')!.findings), []);
  const finding = results.get('moe.py')!.findings[0];
  assert.match(finding.message, /`self\.fc1`.*tensor-and-expert-parallel group.*twice/);
  assert.deepEqual(
    finding.related.map((r) => `${r.file ?? 'moe.py'}:${r.range.startLine + 1}`),
    ['moe.py:13', 'moe.py:23', 'moe.py:26', 'ddp.py:20', 'dispatch.py:7'],
  );
});

test('the scaler applied directly, with the scale written inline, is CP002 too', async () => {
  const direct = layer((b) =>
    b.replace(
      'w1, w2 = (self.scaled(self.fc1), self.scaled(self.fc2))',
      'w1, w2 = GradScale.apply(self.fc1, 1 / get_tensor_and_expert_parallel_world_size()), self.fc2',
    ),
  );
  assert.deepEqual(await codesOf(direct), ['CP002@35']);
});

test('the fixed layer, which uses its weights unscaled, is silent', async () => {
  const fixed = layer((b) => b.replace('(self.scaled(self.fc1), self.scaled(self.fc2))', '(self.fc1, self.fc2)'));
  assert.deepEqual(await codesOf(fixed), []);
});

test('without the wrapper’s division by the data-parallel size there is nothing to be doubled: no CP002', async () => {
  const undivided = WRAPPER.replace('expert_grad /= self.data_parallel_world_size', 'expert_grad.zero_()');
  assert.deepEqual(await codesOf(layer(), undivided), []);
  const expertSize = WRAPPER.replace('group=data_parallel_group', 'group=expert_data_parallel_group');
  assert.deepEqual(await codesOf(layer(), expertSize), []);
  const handedOn = `${WRAPPER.trimEnd()}\n\n    def grads(self):\n        return self.expert_grads\n`;
  assert.deepEqual(await codesOf(layer(), handedOn), []);
});

test('another function that selects the expert weights and scales keeps it silent', async () => {
  const finalize = py`
    def finalize(model, size):
        for p in model.parameters():
            if not getattr(p, 'allreduce', True):
                p.main_grad.mul_(size)
  `;
  assert.deepEqual(await codesOf(layer(), WRAPPER, { 'finalize.py': finalize }), []);
});

test('an unmarked weight, a scale that is not one over a group size, or a dropped result is silent', async () => {
  const unmarked = layer((b) => b.replace(/setattr\(self\.fc\d, 'allreduce', not self\.expert_parallel\)/g, 'pass'));
  assert.deepEqual(await codesOf(unmarked), []);
  const learned = layer((b) =>
    b.replace('1 / get_tensor_and_expert_parallel_world_size()', 'config.expert_grad_scale'),
  );
  assert.deepEqual(await codesOf(learned), []);
  const dropped = layer((b) =>
    b.replace(
      'w1, w2 = (self.scaled(self.fc1), self.scaled(self.fc2))',
      'self.scaled(self.fc1)\n        w1, w2 = self.fc1, self.fc2',
    ),
  );
  assert.deepEqual(await codesOf(dropped), []);
  const twice = layer((b) => b.replace('self.fc1 = torch.nn', 'self.factor = 1.0\n        self.fc1 = torch.nn'));
  assert.deepEqual(await codesOf(twice), []);
});

test('a Function that is not a pure gradient scaler, or a method that may skip the scale, is silent', async () => {
  const notIdentity = layer().replace('        return x\n', '        return x * 2\n');
  assert.deepEqual(await codesOf(notIdentity), []);
  const plus = layer().replace('return grad * ctx.factor, None', 'return grad * ctx.factor + grad, None');
  assert.deepEqual(await codesOf(plus), []);
  const skipped = layer((b) => b.replace('if self.factor is None:', 'if not self.training:'));
  assert.deepEqual(await codesOf(skipped), []);
});

test('the layer in test code, or the wrapper only in tests, is not reported', async () => {
  const inTests = await analyzeProgram({ 'tests/moe.py': layer(), 'dispatch.py': DISPATCH, 'ddp.py': WRAPPER });
  assert.deepEqual(summary(inTests.get('tests/moe.py')!.findings), []);
  const wrapperInTests = await analyzeProgram({ 'moe.py': layer(), 'dispatch.py': DISPATCH, 'tests/ddp.py': WRAPPER });
  assert.deepEqual(summary(wrapperInTests.get('moe.py')!.findings), []);
});

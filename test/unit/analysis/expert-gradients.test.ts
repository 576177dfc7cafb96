// Megatron's expert-parallel gradients: the MoE dispatch over the expert-parallel group sums into each expert's
// gradient the contributions of every rank of the group, so a wrapper that keeps the expert weights'
// (`allreduce=False`) gradients apart from the averaged buffers must divide them. CP001 at the append that collects
// them when the program marks expert weights, dispatches tokens over an expert group, and nothing divides them;
// every twin that divides, averages, hands the list on or lacks a piece of the proof stays silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type AnalysisResult } from '../../../src/analysis/index';
import { analyzeProgram, py, summary } from './helpers';

const LAYERS = py`
  import torch


  class ColumnLinear(torch.nn.Module):
      def __init__(self, size, is_expert=False, expert_parallel=False):
          super().__init__()
          self.weight = torch.nn.Parameter(torch.empty(size, size))
          setattr(self.weight, 'allreduce', not (is_expert and expert_parallel))
`;

const DISPATCH = py`
  import torch
  from state import get_expert_model_parallel_group


  def dispatch_tokens(tokens, send_counts, recv_counts):
      group = get_expert_model_parallel_group()
      output = tokens.new_empty(sum(recv_counts), tokens.size(1))
      torch.distributed.all_to_all_single(output, tokens, recv_counts, send_counts, group=group)
      return output
`;

const WRAPPER = py`
  import torch


  class DataParallel(torch.nn.Module):
      def __init__(self, module, buffers):
          super().__init__()
          self.module = module
          self.buffers = buffers
          self.expert_grads = []
          for param in self.module.parameters():
              if param.requires_grad and not getattr(param, 'allreduce', True):
                  param.main_grad = torch.zeros(param.data.shape, dtype=torch.float)
                  self.expert_grads.append(param.main_grad)
          for param in self.module.parameters():
              param.register_post_accumulate_grad_hook(self._hook(param))

      def _hook(self, param):
          def hook(*unused):
              param.main_grad.add_(param.grad.data)
              param.grad = None
          return hook

      def finish_grad_sync(self):
          for buffer in self.buffers:
              buffer.finish_grad_sync()

      def zero_grad_buffer(self):
          for expert_grad in self.expert_grads:
              expert_grad.zero_()
`;

/** The wrapper with more methods (written at the class body's indent of four spaces). */
function wrapper(methods: string): string {
  return `${WRAPPER.trimEnd()}\n\n${methods}`;
}

const UNDIVIDED = WRAPPER;
const DIVIDED = wrapper(
  [
    '    def scale_expert_grads(self, data_parallel_size):',
    '        for expert_grad in self.expert_grads:',
    '            expert_grad /= data_parallel_size',
    '',
  ].join('\n'),
);

const SUMMING_FINALIZE = py`
  import torch
  from state import get_data_modulo_expert_parallel_group


  def allreduce_expert_grads(model):
      grads = [p.main_grad for p in model.parameters() if not getattr(p, 'allreduce', True)]
      for grad in grads:
          torch.distributed.all_reduce(grad, group=get_data_modulo_expert_parallel_group())
`;

const AVERAGING_FINALIZE = py`
  import torch
  from state import get_data_parallel_world_size


  def allreduce_expert_grads(model):
      for p in model.parameters():
          if not getattr(p, 'allreduce', True):
              p.main_grad.div_(get_data_parallel_world_size())
`;

function codes(results: Map<string, AnalysisResult>, path: string): string[] {
  return summary(results.get(path)!.findings);
}

test('expert gradients kept apart from the averaged buffers and never divided are CP001 at the append', async () => {
  const results = await analyzeProgram({ 'layers.py': LAYERS, 'dispatch.py': DISPATCH, 'ddp.py': UNDIVIDED });
  assert.deepEqual(codes(results, 'ddp.py'), ['CP001@13']);
  assert.deepEqual(codes(results, 'layers.py'), []);
  const finding = results.get('ddp.py')!.findings[0];
  assert.match(finding.message, /\|EP\|×/);
  assert.deepEqual(
    finding.related.map((r) => r.file),
    ['layers.py', 'dispatch.py'],
  );
});

test('a sum over the expert-data-parallel group adds no division: still CP001', async () => {
  const results = await analyzeProgram({
    'layers.py': LAYERS,
    'dispatch.py': DISPATCH,
    'ddp.py': UNDIVIDED,
    'finalize.py': SUMMING_FINALIZE,
  });
  assert.deepEqual(codes(results, 'ddp.py'), ['CP001@13']);
});

test('the fixed wrapper divides the expert gradients: silent', async () => {
  const results = await analyzeProgram({ 'layers.py': LAYERS, 'dispatch.py': DISPATCH, 'ddp.py': DIVIDED });
  assert.deepEqual(codes(results, 'ddp.py'), []);
});

test('another file that selects the expert parameters and divides them keeps it silent', async () => {
  const results = await analyzeProgram({
    'layers.py': LAYERS,
    'dispatch.py': DISPATCH,
    'ddp.py': UNDIVIDED,
    'finalize.py': AVERAGING_FINALIZE,
  });
  assert.deepEqual(codes(results, 'ddp.py'), []);
});

test('without the marker or without a dispatch over an expert group nothing is proven', async () => {
  const noMarker = await analyzeProgram({ 'dispatch.py': DISPATCH, 'ddp.py': UNDIVIDED });
  assert.deepEqual(codes(noMarker, 'ddp.py'), []);
  const dataGroup = DISPATCH.replace(/get_expert_model_parallel_group/g, 'get_data_parallel_group');
  const noDispatch = await analyzeProgram({ 'layers.py': LAYERS, 'dispatch.py': dataGroup, 'ddp.py': UNDIVIDED });
  assert.deepEqual(codes(noDispatch, 'ddp.py'), []);
  const markerWithoutExpert = LAYERS.replace('not (is_expert and expert_parallel)', 'not skip_sync');
  const unmarked = await analyzeProgram({
    'layers.py': markerWithoutExpert,
    'dispatch.py': DISPATCH,
    'ddp.py': UNDIVIDED,
  });
  assert.deepEqual(codes(unmarked, 'ddp.py'), []);
});

test('a list handed on, a filter under `or`, or a main_grad nothing accumulates into stays silent', async () => {
  const handed = wrapper('    def reducer_inputs(self):\n        return self.expert_grads\n');
  assert.deepEqual(
    codes(await analyzeProgram({ 'layers.py': LAYERS, 'dispatch.py': DISPATCH, 'ddp.py': handed }), 'ddp.py'),
    [],
  );
  const either = UNDIVIDED.replace('param.requires_grad and not', 'param.requires_grad or not');
  assert.deepEqual(
    codes(await analyzeProgram({ 'layers.py': LAYERS, 'dispatch.py': DISPATCH, 'ddp.py': either }), 'ddp.py'),
    [],
  );
  const noHook = UNDIVIDED.replace('param.main_grad.add_(param.grad.data)', 'pass');
  assert.deepEqual(
    codes(await analyzeProgram({ 'layers.py': LAYERS, 'dispatch.py': DISPATCH, 'ddp.py': noHook }), 'ddp.py'),
    [],
  );
});

test('the same wrapper in test code, or with the marker only in tests, is not reported', async () => {
  const inTests = await analyzeProgram({
    'layers.py': LAYERS,
    'dispatch.py': DISPATCH,
    'tests/test_ddp.py': UNDIVIDED,
  });
  assert.deepEqual(codes(inTests, 'tests/test_ddp.py'), []);
  const markerInTests = await analyzeProgram({
    'tests/layers.py': LAYERS,
    'dispatch.py': DISPATCH,
    'ddp.py': UNDIVIDED,
  });
  assert.deepEqual(codes(markerInTests, 'ddp.py'), []);
});

test('the list named by another file or another object may be divided there: silent', async () => {
  const elsewhere = py`
    def scale(model, size):
        for grad in model.expert_grads:
            grad /= size
  `;
  const results = await analyzeProgram({
    'layers.py': LAYERS,
    'dispatch.py': DISPATCH,
    'ddp.py': UNDIVIDED,
    'scale.py': elsewhere,
  });
  assert.deepEqual(codes(results, 'ddp.py'), []);
  const sameFile = `${UNDIVIDED.trimEnd()}\n\n\ndef scale(model, size):\n    for grad in model.expert_grads:\n        grad /= size\n`;
  assert.deepEqual(
    codes(await analyzeProgram({ 'layers.py': LAYERS, 'dispatch.py': DISPATCH, 'ddp.py': sameFile }), 'ddp.py'),
    [],
  );
});

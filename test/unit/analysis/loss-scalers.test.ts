// Autograd loss scalers (Megatron's `MoEAuxLossAutoScaler` shape): backward hands the attached loss a gradient equal
// to a class attribute, which a schedule that runs backward once per micro-batch must set to a value over the
// window's count. A scaler whose scale nothing sets while a backward loop sets its siblings' to `… / num_microbatches`
// is CP008 at the last sibling's setter; a setter call, a loss never attached to a returned activation, or a
// schedule with no backward loop stays silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeProgram, py, summaryByPath } from './helpers';

const SCALERS = py`
  import torch


  class AuxLossScaler(torch.autograd.Function):
      main_loss_backward_scale = None

      @staticmethod
      def forward(ctx, output, aux_loss):
          ctx.save_for_backward(aux_loss)
          return output

      @staticmethod
      def backward(ctx, grad_output):
          (aux_loss,) = ctx.saved_tensors
          if AuxLossScaler.main_loss_backward_scale is None:
              AuxLossScaler.main_loss_backward_scale = torch.tensor(1.0, device=aux_loss.device)
          scale = AuxLossScaler.main_loss_backward_scale
          scaled_grad = torch.ones_like(aux_loss) * scale
          return grad_output, scaled_grad

      @staticmethod
      def set_loss_scale(scale):
          if AuxLossScaler.main_loss_backward_scale is None:
              AuxLossScaler.main_loss_backward_scale = scale
          else:
              AuxLossScaler.main_loss_backward_scale.copy_(scale)


  class IndexerLossScaler(torch.autograd.Function):
      main_loss_backward_scale = torch.tensor(1.0)

      @staticmethod
      def forward(ctx, output, indexer_loss):
          ctx.save_for_backward(indexer_loss)
          return output

      @staticmethod
      def backward(ctx, grad_output):
          (indexer_loss,) = ctx.saved_tensors
          return grad_output, torch.ones_like(indexer_loss) * IndexerLossScaler.main_loss_backward_scale

      @staticmethod
      def set_loss_scale(scale):
          IndexerLossScaler.main_loss_backward_scale = scale
`;

const LAYERS = py`
  import torch
  from scalers import AuxLossScaler, IndexerLossScaler


  class Router(torch.nn.Module):
      def forward(self, logits):
          aux_loss = logits.softmax(-1).var()
          logits = AuxLossScaler.apply(logits, aux_loss)
          return logits


  class SparseAttention(torch.nn.Module):
      def forward(self, query, key):
          output = query @ key.transpose(-1, -2)
          if self.training:
              indexer_loss = (output - output.detach()).pow(2).mean()
              output = IndexerLossScaler.apply(output, indexer_loss)
          else:
              output = output.softmax(-1)
          return output
`;

const SCHEDULES = py`
  import torch
  from scalers import AuxLossScaler


  def forward_step_calc_loss(model, batch, loss_func, num_microbatches):
      output_tensor = loss_func(model(batch))
      output_tensor /= num_microbatches
      loss_scale = torch.ones(1)
      AuxLossScaler.set_loss_scale(loss_scale / num_microbatches)
      return output_tensor


  def forward_step(model, batch, loss_func, num_microbatches):
      return forward_step_calc_loss(model, batch, loss_func, num_microbatches)


  def backward_step(output_tensor):
      torch.autograd.backward(output_tensor)


  def forward_backward_no_pipelining(model, batches, loss_func, num_microbatches):
      for i in range(num_microbatches):
          output_tensor = forward_step(model, batches[i], loss_func, num_microbatches)
          backward_step(output_tensor)
`;

const PROGRAM = { 'scalers.py': SCALERS, 'layers.py': LAYERS, 'schedules.py': SCHEDULES };

test('a scaler whose scale nothing sets, beside a sibling set to scale / num_microbatches in a backward loop, is CP008', async () => {
  const results = await analyzeProgram(PROGRAM);
  assert.deepEqual(summaryByPath(results), ['schedules.py:CP008@9']);
  const finding = results.get('schedules.py')!.findings[0];
  assert.match(finding.message, /sets the loss scale of `AuxLossScaler` to a value divided by `num_microbatches`/);
  assert.match(finding.message, /nothing sets `IndexerLossScaler`'s/);
  assert.deepEqual(
    finding.related.map((r) => `${r.file ?? 'schedules.py'}:${r.range.startLine + 1}`),
    ['scalers.py:40', 'layers.py:17'],
  );
});

test('the same program is silent when the scaler is set, its loss never reaches backward, or no loop repeats backward', async () => {
  const setTwin = SCHEDULES.replace(
    'from scalers import AuxLossScaler',
    'from scalers import AuxLossScaler, IndexerLossScaler',
  ).replace(
    '    return output_tensor\n',
    '    IndexerLossScaler.set_loss_scale(loss_scale / num_microbatches)\n    return output_tensor\n',
  );
  const twins: Record<string, string>[] = [
    // The fix: the scaler's setter is called with the scale over the window's count.
    { ...PROGRAM, 'schedules.py': setTwin },
    // The loss is attached to a value the function drops: it never joins the graph that runs backward.
    {
      ...PROGRAM,
      'layers.py': LAYERS.replace(
        'output = IndexerLossScaler.apply(output, indexer_loss)',
        'probe = IndexerLossScaler.apply(output, indexer_loss)',
      ),
    },
    // The attached loss is divided by the window's count already: a scale of one is the mean.
    {
      ...PROGRAM,
      'layers.py': LAYERS.replace(
        'output = IndexerLossScaler.apply(output, indexer_loss)',
        'output = IndexerLossScaler.apply(output, indexer_loss / self.num_microbatches)',
      ),
    },
    // One forward and one backward per step (K == 1): no loop repeats backward before the scales matter.
    {
      ...PROGRAM,
      'schedules.py': SCHEDULES.replace(
        '    for i in range(num_microbatches):\n        output_tensor = forward_step(model, batches[i], loss_func, num_microbatches)\n        backward_step(output_tensor)',
        '    output_tensor = forward_step(model, batches[0], loss_func, 1)\n    backward_step(output_tensor)',
      ),
    },
    // The siblings' scale is not divided by a micro-batch count: no window is stated.
    { ...PROGRAM, 'schedules.py': SCHEDULES.replace('loss_scale / num_microbatches', 'loss_scale') },
    // The scaler's forward stores a scale each `apply` passes: it is set on every micro-batch.
    {
      ...PROGRAM,
      'scalers.py': SCALERS.replace(
        '    def forward(ctx, output, indexer_loss):\n        ctx.save_for_backward(indexer_loss)',
        '    def forward(ctx, output, indexer_loss, scale):\n        IndexerLossScaler.main_loss_backward_scale = scale\n        ctx.save_for_backward(indexer_loss)',
      ),
    },
    // The scale is set through a name this rule does not follow: nothing is proven unset.
    {
      ...PROGRAM,
      'setup_scales.py': py`
        from scalers import IndexerLossScaler
        SCALERS = [IndexerLossScaler]
      `,
    },
  ];
  for (const files of twins) assert.deepEqual(summaryByPath(await analyzeProgram(files)), []);
});

test('a setter call in test code does not set the scale of training', async () => {
  const withTest = {
    ...PROGRAM,
    'tests/test_scalers.py': py`
      from scalers import IndexerLossScaler
      def test_scale():
          IndexerLossScaler.set_loss_scale(2.0)
    `,
  };
  assert.deepEqual(summaryByPath(await analyzeProgram(withTest)), ['schedules.py:CP008@9']);
});

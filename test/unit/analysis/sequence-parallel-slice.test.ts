// A per-slice mean under sequence parallelism: a router weight marked `sequence_parallel` (its gradient summed over
// the tensor-parallel group by the finalisation), a loss that is a mean over this rank's tokens of the router's
// output, attached with a gradient of one by an autograd Function. CP001 at the mean; the twins that divide by the
// tensor-parallel size, leave the weight unmarked (SP off), or lack a piece of the proof stay silent, and so does the
// main loss's TP sum itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeProgram, py, summaryByPath } from './helpers';

const UTILS = py`
  import torch


  def logit_penalty(logits, coeff):
      penalty = torch.mean(torch.square(torch.logsumexp(logits, dim=-1))) * coeff
      return penalty


  def balance_penalty(probs, counts, coeff):
      probs_mean = probs.mean(dim=0)
      share = counts.float() / counts.sum()
      loss = torch.sum(probs_mean * share) * probs.size(1)
      loss *= coeff
      return loss


  class AttachLoss(torch.autograd.Function):
      scale = torch.tensor(1.0)

      @staticmethod
      def forward(ctx, output, loss):
          ctx.save_for_backward(loss)
          return output

      @staticmethod
      def backward(ctx, grad_output):
          (loss,) = ctx.saved_tensors
          loss_grad = torch.ones_like(loss) * AttachLoss.scale
          return grad_output, loss_grad
`;

const FINALIZE = py`
  import torch
  from state import get_tp_group


  def sync_sequence_parallel_grads(model):
      grads = []
      for param in model.parameters():
          if getattr(param, 'sequence_parallel', False):
              grads.append(param.main_grad)
      for g in grads:
          torch.distributed.all_reduce(g, group=get_tp_group())
`;

const ROUTER = py`
  import torch
  from utils import AttachLoss, balance_penalty, logit_penalty


  class Gate(torch.nn.Module):
      def __init__(self, config):
          super().__init__()
          self.config = config
          self.weight = torch.nn.Parameter(torch.empty(config.experts, config.hidden))
          setattr(self.weight, 'sequence_parallel', config.sequence_parallel)

      def scores(self, hidden):
          return torch.nn.functional.linear(hidden, self.weight)


  class TopGate(Gate):
      def add_logit_penalty(self, logits):
          penalty = logit_penalty(logits, self.config.penalty_coeff)
          return AttachLoss.apply(logits, penalty)

      def add_balance_penalty(self, probs, counts):
          loss = balance_penalty(probs, counts, self.config.balance_coeff)
          return AttachLoss.apply(probs, loss)

      def forward(self, hidden):
          logits = self.scores(hidden)
          logits = self.add_logit_penalty(logits)
          probs = torch.softmax(logits, dim=-1)
          counts = (probs > 0.5).sum(dim=0)
          return self.add_balance_penalty(probs, counts)
`;

async function run(router: string, others: Record<string, string> = {}): Promise<string[]> {
  return summaryByPath(
    await analyzeProgram({ 'utils.py': UTILS, 'finalize.py': FINALIZE, 'router.py': router, ...others }),
  );
}

test('a per-slice mean attached to a weight summed over the TP group is CP001, at each mean', async () => {
  assert.deepEqual(await run(ROUTER), ['router.py:CP001@18', 'router.py:CP001@22']);
});

test('the coefficient divided by the tensor-parallel size (the fix) is silent', async () => {
  const fixed = ROUTER.replace(
    '        penalty = logit_penalty(logits, self.config.penalty_coeff)',
    '        coeff = self.config.penalty_coeff / get_tensor_model_parallel_world_size()\n' +
      '        penalty = logit_penalty(logits, coeff)',
  ).replace(
    '        loss = balance_penalty(probs, counts, self.config.balance_coeff)',
    '        loss = balance_penalty(probs, counts, self.config.balance_coeff) / get_tensor_model_parallel_world_size()',
  );
  assert.deepEqual(await run(fixed), []);
});

test('a weight not marked (SP off) or marked False is silent', async () => {
  assert.deepEqual(
    await run(ROUTER.replace("        setattr(self.weight, 'sequence_parallel', config.sequence_parallel)\n", '')),
    [],
  );
  assert.deepEqual(await run(ROUTER.replace('config.sequence_parallel)', 'False)')), []);
});

test('without the TP sum of the marked gradients, or with a scaled one, it is silent', async () => {
  assert.deepEqual(await run(ROUTER, { 'finalize.py': 'import torch\n' }), []);
  const averaged = FINALIZE.replace('group=get_tp_group())', 'group=get_tp_group())\n          g /= 2');
  assert.deepEqual(await run(ROUTER, { 'finalize.py': averaged }), []);
  const otherGroup = FINALIZE.replace('get_tp_group()', 'get_embedding_group()');
  assert.deepEqual(await run(ROUTER, { 'finalize.py': otherGroup }), []);
});

test('a sum over tokens, a mean over experts, or a scaler without a unit gradient is silent', async () => {
  const summed = UTILS.replace('torch.mean(torch.square', 'torch.sum(torch.square').replace(
    'probs.mean(dim=0)',
    'probs.sum(dim=0)',
  );
  assert.deepEqual(await run(ROUTER, { 'utils.py': summed }), []);
  const perToken = UTILS.replace('probs.mean(dim=0)', 'probs.mean(dim=1)').replace(
    'torch.mean(torch.square(torch.logsumexp(logits, dim=-1)))',
    'torch.square(logits).mean(dim=-1).sum()',
  );
  assert.deepEqual(await run(ROUTER, { 'utils.py': perToken }), []);
  const scaled = UTILS.replace('torch.ones_like(loss) * AttachLoss.scale', 'loss * AttachLoss.scale');
  assert.deepEqual(await run(ROUTER, { 'utils.py': scaled }), []);
});

test('the main loss, and a loss not derived from the marked weight, are silent', async () => {
  const main = py`
    import torch


    def train_step(model, batch, optimizer):
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
  `;
  const unrelated = ROUTER.replace('logits = self.scores(hidden)', 'logits = hidden.clone()');
  assert.deepEqual(await run(unrelated, { 'train.py': main }), []);
});

test('a collective on the path from the weight to the loss keeps it silent', async () => {
  const reduced = ROUTER.replace(
    '        logits = self.scores(hidden)\n',
    '        logits = self.scores(hidden)\n        logits = reduce_from_tensor_model_parallel_region(logits)\n',
  );
  assert.deepEqual(await run(reduced), []);
});

test('the helper and the scaler in test code do not prove anything', async () => {
  const results = await analyzeProgram({
    'tests/utils.py': UTILS,
    'finalize.py': FINALIZE,
    'router.py': ROUTER.replace('from utils import', 'from tests.utils import'),
  });
  assert.deepEqual(summaryByPath(results), []);
});

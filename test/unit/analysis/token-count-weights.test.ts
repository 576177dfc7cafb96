// Token counts per group: a loss whose coefficient is divided by the size of the TP×CP group (a share in a sum over
// those ranks), attached times the count of this rank's sequence-parallel slice when the per-token flag is set,
// while the finaliser divides every gradient by the count summed over the data-parallel (with context-parallel)
// ranks, handed to it under the same flag. The count weighting already averages over tp × cp × dp, so the division
// averages a second time: CP003, 1/(tp × cp). The twins lack one fact of the proof, or are the fix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeProgram, py, summaryByPath } from './helpers';

const UTILS = py`
  import torch


  def logit_penalty(logits: torch.Tensor, coeff: float, mask=None):
      penalty = torch.mean(torch.square(torch.logsumexp(logits, dim=-1))) * coeff
      return penalty


  class AttachLoss(torch.autograd.Function):
      scale = torch.tensor(1.0)

      @staticmethod
      def forward(ctx, output, loss):
          ctx.save_for_backward(loss)
          return output

      @staticmethod
      def backward(ctx, grad_output):
          (loss,) = ctx.saved_tensors
          return grad_output, torch.ones_like(loss) * AttachLoss.scale
`;

const FINALIZE = py`
  import torch
  from state import get_tp_group, get_data_parallel_group


  def sync_sequence_parallel_grads(model):
      grads = []
      for param in model.parameters():
          if getattr(param, 'sequence_parallel', False):
              grads.append(param.main_grad)
      for g in grads:
          torch.distributed.all_reduce(g, group=get_tp_group())


  def finish_grads(model, token_count=None):
      sync_sequence_parallel_grads(model)
      if token_count is not None:
          group = get_data_parallel_group(with_context_parallel=True)
          torch.distributed.all_reduce(token_count, group=group)
          safe_count = torch.clamp(token_count, min=1)
          factor = 1.0 / safe_count
          model.scale_gradients(factor)
`;

const SCHEDULE = py`
  def run_schedule(config, model, batches):
      total = 0
      for batch in batches:
          loss, count = model(batch)
          loss.backward()
          total += count
      config.finish_func([model], total if config.per_token_loss else None)
`;

const TRAIN = py`
  from finalize import finish_grads


  def setup(config):
      config.finish_func = finish_grads
`;

const ROUTER = py`
  import torch
  from utils import AttachLoss, logit_penalty


  class Gate(torch.nn.Module):
      def __init__(self, config, groups):
          super().__init__()
          self.config = config
          self.tp_cp_group = groups.tp_cp
          self.per_token_loss = config.per_token_loss
          self.weight = torch.nn.Parameter(torch.empty(config.experts, config.hidden))
          setattr(self.weight, 'sequence_parallel', config.sequence_parallel)

      def add_penalty(self, logits, mask=None):
          coeff = self.config.penalty_coeff / self.tp_cp_group.size()
          penalty = logit_penalty(logits, coeff, mask=mask)
          if self.per_token_loss:
              n = (~mask).sum() if mask is not None else logits.shape[0]
              logits = AttachLoss.apply(logits, penalty * n)
          else:
              logits = AttachLoss.apply(logits, penalty)
          return logits

      def forward(self, hidden, mask=None):
          logits = torch.nn.functional.linear(hidden, self.weight)
          return self.add_penalty(logits, mask=mask)
`;

/** The text with one edit applied; fails when the edit does not apply, so no twin is the unchanged program. */
function edit(text: string, from: string | RegExp, to: string): string {
  const out = text.replace(from, to);
  assert.notEqual(out, text, `the edit ${String(from)} applies`);
  return out;
}

async function run(files: Record<string, string> = {}): Promise<string[]> {
  const program = {
    'utils.py': UTILS,
    'finalize.py': FINALIZE,
    'schedule.py': SCHEDULE,
    'train.py': TRAIN,
    'router.py': ROUTER,
    ...files,
  };
  return summaryByPath(await analyzeProgram(program));
}

test('a TP×CP share attached times its slice count, divided by the dp×cp token count, is CP003 at the product', async () => {
  assert.deepEqual(await run(), ['router.py:CP003@19']);
});

test('the finding states the groups and the factor', async () => {
  const results = await analyzeProgram({
    'utils.py': UTILS,
    'finalize.py': FINALIZE,
    'schedule.py': SCHEDULE,
    'train.py': TRAIN,
    'router.py': ROUTER,
  });
  const found = [...results.values()].flatMap((r) => r.findings).find((f) => f.code === 'CP003');
  assert.ok(found);
  assert.match(found.message, /1\/\(tp × cp\)/);
  assert.match(found.message, /tp × cp × dp ranks/);
  assert.ok(found.related?.some((r) => r.file === 'schedule.py'));
});

test('the TP sum written as a zip of (list, op) pairs is read too', async () => {
  const zipped = py`
    import torch
    from state import get_data_parallel_group


    def sync_sequence_parallel_grads(model, config, tp_group):
        grads_sum = []
        grads_avg = []
        for param in model.parameters():
            if getattr(param, 'average_over_tp', False):
                grads_avg.append(param.main_grad)
            elif config.sequence_parallel and getattr(param, 'sequence_parallel', False):
                grad = param.main_grad
                grads_sum.append(grad.data)
        for grads, op in zip([grads_sum, grads_avg], [torch.distributed.ReduceOp.SUM, torch.distributed.ReduceOp.AVG]):
            flat = flatten_dense_tensors(grads)
            torch.distributed.all_reduce(flat, op=op, group=tp_group)


    def finish_grads(model, token_count=None):
        if token_count is not None:
            torch.distributed.all_reduce(token_count, group=get_data_parallel_group(with_context_parallel=True))
            model.scale_gradients(1.0 / token_count)
  `;
  assert.deepEqual(await run({ 'finalize.py': zipped }), ['router.py:CP003@19']);
  // The marked list paired with AVG is an average, not a sum: nothing is proven.
  const averaged = edit(zipped, '[grads_sum, grads_avg]', '[grads_avg, grads_sum]');
  assert.deepEqual(await run({ 'finalize.py': averaged }), []);
});

test('the attached value also multiplied by the group size (the fix) is silent', async () => {
  const fixed = edit(ROUTER, 'penalty * n)', 'penalty * n * self.tp_cp_group.size())');
  assert.deepEqual(await run({ 'router.py': fixed }), []);
});

test('a coefficient not divided by a group size is silent (the weighting alone gives the mean)', async () => {
  const undivided = edit(
    edit(ROUTER, 'self.config.penalty_coeff / self.tp_cp_group.size()', 'self.config.penalty_coeff'),
    /^\s*else:\n\s*logits = AttachLoss\.apply\(logits, penalty\)\n/m,
    '',
  );
  assert.ok(!undivided.includes('apply(logits, penalty)'));
  assert.deepEqual(await run({ 'router.py': undivided }), []);
});

test('a count that is not the slice’s rows (a global count handed in) is silent', async () => {
  const global = edit(ROUTER, '(~mask).sum() if mask is not None else logits.shape[0]', 'self.config.global_tokens');
  assert.deepEqual(await run({ 'router.py': global }), []);
});

test('a group outside the ranks the count is summed over is silent', async () => {
  const expert = edit(ROUTER, 'self.tp_cp_group.size()', 'self.ep_group.size()');
  assert.deepEqual(await run({ 'router.py': expert }), []);
  const notDp = edit(FINALIZE, 'get_data_parallel_group(with_context_parallel=True)', 'get_embedding_group()');
  assert.deepEqual(await run({ 'finalize.py': notDp }), []);
});

test('a count handed to the finaliser under another flag, or to another function, is silent', async () => {
  assert.deepEqual(await run({ 'schedule.py': edit(SCHEDULE, 'config.per_token_loss', 'config.other_flag') }), []);
  assert.deepEqual(await run({ 'train.py': edit(TRAIN, '= finish_grads', '= other_finish') }), []);
});

test('a finaliser that does not sum the count, or does not divide the gradients by it, is silent', async () => {
  const unsummed = edit(FINALIZE, /^\s*torch\.distributed\.all_reduce\(token_count, group=group\)\n/m, '');
  assert.deepEqual(await run({ 'finalize.py': unsummed }), []);
  const unscaled = edit(FINALIZE, 'model.scale_gradients(factor)', 'print(factor)');
  assert.deepEqual(await run({ 'finalize.py': unscaled }), []);
});

test('without the marker (SP off) or without the TP sum of the marked gradients, it is silent', async () => {
  const unmarked = edit(ROUTER, /^\s*setattr\(self\.weight, 'sequence_parallel'.*\n/m, '');
  assert.deepEqual(await run({ 'router.py': unmarked }), []);
  const noSum = edit(FINALIZE, "getattr(param, 'sequence_parallel', False)", "getattr(param, 'shared', False)");
  assert.deepEqual(await run({ 'finalize.py': noSum }), []);
});

test('an attachment outside a flag, or a loss reassigned in another branch, is silent', async () => {
  const unflagged = edit(ROUTER, 'if self.per_token_loss:', 'if True:');
  assert.deepEqual(await run({ 'router.py': unflagged }), []);
  const branches = edit(
    ROUTER,
    /^(\s*)if self\.per_token_loss:\n/m,
    '$1if self.config.halve:\n$1    penalty = penalty * 2\n$1if self.per_token_loss:\n',
  );
  assert.deepEqual(await run({ 'router.py': branches }), []);
});

// CP003's engine-window shape across files (contracts/engine-window-program.ts): the loop hands each micro-batch's
// loss to an engine's backward and steps once per accumulation count, and the loss divides by a token count that a
// helper of another file sums from the mask, all-reduces over the ranks and returns in a dictionary, which the
// trainer splats into a loss object of a third file (OpenRLHF's SFT trainer before c5bebd1, its `get_loss_batch_info`
// and `SFTLoss`; another class of the loss file sets the same attribute). Correct twins stay silent: the window's global count passed in, a mask of constant count, a loop
// without an accumulation window, a loss that sums, a count not summed over the ranks, and a flag not decided.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Program, type AnalysisResult } from '../../../src/analysis/index';
import { parser, py, summary } from './helpers';

const LOSS_UTILS = py`
  from typing import Optional
  import torch
  import torch.distributed as dist


  def get_loss_batch_info(strategy, loss_mask, *, dynamic_batch=False, batch_num_tokens: Optional[float] = None):
      dp_size = dist.get_world_size() if dist.is_initialized() else 1
      if dynamic_batch:
          batch_num_tokens = strategy.dynamic_tokens
      if batch_num_tokens is None:
          batch_num_tokens = loss_mask.sum().to(loss_mask.device, dtype=torch.float32)
          if dist.is_available() and dist.is_initialized():
              dist.all_reduce(batch_num_tokens, op=dist.ReduceOp.SUM)
      else:
          batch_num_tokens = torch.as_tensor(batch_num_tokens, device=loss_mask.device)
      return {"dp_size": dp_size, "batch_num_tokens": batch_num_tokens}
`;

const LOSS = py`
  import torch.nn as nn


  def aggregate_loss(loss, loss_mask, token_level_loss=True, dp_size=1, batch_num_tokens=None):
      if token_level_loss:
          if batch_num_tokens is None:
              return (loss * loss_mask).sum() / loss_mask.numel()
          return (loss * loss_mask).sum() / batch_num_tokens * dp_size
      return (loss * loss_mask).sum() * dp_size


  class TokenLoss(nn.Module):
      def __init__(self, token_level_loss: bool = True):
          super().__init__()
          self.token_level_loss = token_level_loss

      def forward(self, logps, loss_mask, dp_size=1, batch_num_tokens=None):
          return aggregate_loss(
              -logps,
              loss_mask,
              token_level_loss=self.token_level_loss,
              dp_size=dp_size,
              batch_num_tokens=batch_num_tokens,
          )


  class PolicyLoss(nn.Module):
      def __init__(self, token_level_loss: bool = False):
          super().__init__()
          self.token_level_loss = token_level_loss
`;

const PACKAGE = 'from .loss import TokenLoss\n';

function trainer(opts: { loss?: string; mask?: string; info?: string; step?: string } = {}): string {
  const loss = opts.loss ?? 'TokenLoss()';
  const mask = opts.mask ?? '(labels != -100).float()';
  const info = opts.info ?? 'get_loss_batch_info(self.strategy, keep)';
  const step = opts.step ?? 'if step % self.strategy.accumulated_gradient == 0:\n                print(loss.item())';
  return py`
    from pkg.models import TokenLoss
    from pkg.utils.loss_utils import get_loss_batch_info


    class Trainer:
        def __init__(self, model, strategy, optim, train_dataloader):
            self.model = model
            self.strategy = strategy
            self.optimizer = optim
            self.train_dataloader = train_dataloader
            self.loss_fn = ${loss}

        def fit(self):
            step = 1
            for inputs, labels in self.train_dataloader:
                logps = self.model(inputs)
                keep = ${mask}
                gpt_loss = self.loss_fn(logps, keep, **${info})
                loss = gpt_loss + 0.0
                self.strategy.backward(loss, self.model, self.optimizer)
                self.strategy.optimizer_step(self.optimizer, self.model)
                ${step}
                step += 1
  `;
}

async function check(trainerText: string, hints = true, lossText = LOSS): Promise<Map<string, AnalysisResult>> {
  const program = new Program(await parser(), { hints });
  program.setFile('pkg/utils/loss_utils.py', LOSS_UTILS);
  program.setFile('pkg/models/loss.py', lossText);
  program.setFile('pkg/models/__init__.py', PACKAGE);
  program.setFile('pkg/trainer/sft.py', trainerText);
  return program.analyzeAll();
}

const trainerFindings = (r: Map<string, AnalysisResult>) => summary(r.get('pkg/trainer/sft.py')!.findings);

test('CP003 (hint): a rank-summed count splatted from another file into a loss object of a third', async () => {
  const results = await check(trainer());
  assert.deepEqual(trainerFindings(results), ['CP003@20']);
  const f = results.get('pkg/trainer/sft.py')!.findings[0];
  assert.equal(f.severity, 'warning');
  assert.match(
    f.message,
    /`\(loss \* loss_mask\)\.sum\(\) \/ batch_num_tokens` in `aggregate_loss` \(pkg\/models\/loss\.py\)/,
  );
  assert.match(
    f.message,
    /count `loss_mask\.sum\(\)` \(made in `get_loss_batch_info` \(pkg\/utils\/loss_utils\.py\)\)/,
  );
  assert.match(f.message, /one optimizer step per `self\.strategy\.accumulated_gradient`/);
  const files = f.related.map((r) => r.file ?? 'here');
  assert.deepEqual(files, ['here', 'pkg/utils/loss_utils.py', 'pkg/utils/loss_utils.py', 'pkg/models/loss.py', 'here']);
  for (const [path, r] of results) if (path !== 'pkg/trainer/sft.py') assert.deepEqual(summary(r.findings), [], path);
});

test('CP003 across files is a hint: silent without hints', async () => {
  assert.deepEqual(trainerFindings(await check(trainer(), false)), []);
});

test('CP003 (hint): the splatted dictionary handed to a function of another file, with no loss object', async () => {
  const text = py`
    from pkg.models.loss import aggregate_loss
    from pkg.utils.loss_utils import get_loss_batch_info


    def fit(engine, loader, grad_accum_steps):
        for step, (inputs, labels) in enumerate(loader):
            keep = labels.ne(-100)
            loss = aggregate_loss(-engine(inputs), keep, **get_loss_batch_info(None, keep))
            engine.backward(loss)
            engine.step()
            if (step + 1) % grad_accum_steps == 0:
                print(loss.item())
  `;
  assert.deepEqual(trainerFindings(await check(text)), ['CP003@9']);
});

test('silent: the window global count passed in (the fix), so the helper does not count this micro-batch', async () => {
  const fixed = trainer({ info: 'get_loss_batch_info(self.strategy, keep, batch_num_tokens=self.window_tokens)' });
  assert.deepEqual(trainerFindings(await check(fixed)), []);
});

test('silent: a mask whose count is not proven data-dependent', async () => {
  assert.deepEqual(trainerFindings(await check(trainer({ mask: 'torch.ones_like(labels)' }))), []);
});

test('silent: no accumulation window in the loop (one micro-batch per step)', async () => {
  assert.deepEqual(trainerFindings(await check(trainer({ step: 'print(step)' }))), []);
});

test('silent: a loss object built to sum (the flag decides the sum path)', async () => {
  assert.deepEqual(trainerFindings(await check(trainer({ loss: 'TokenLoss(token_level_loss=False)' }))), []);
});

test('silent: a loss flag not decided in view', async () => {
  assert.deepEqual(trainerFindings(await check(trainer({ loss: 'TokenLoss(token_level_loss=model.flag)' }))), []);
});

test('silent: a count not summed over the ranks, or reduced with MAX', async () => {
  const unsummed = LOSS_UTILS.replace(
    / {12}dist\.all_reduce\(batch_num_tokens, op=dist\.ReduceOp\.SUM\)\n/,
    '            pass\n',
  );
  assert.notEqual(unsummed, LOSS_UTILS);
  const maxed = LOSS_UTILS.replace('ReduceOp.SUM', 'ReduceOp.MAX');
  for (const utils of [unsummed, maxed]) {
    const program = new Program(await parser(), { hints: true });
    program.setFile('pkg/utils/loss_utils.py', utils);
    program.setFile('pkg/models/loss.py', LOSS);
    program.setFile('pkg/models/__init__.py', PACKAGE);
    program.setFile('pkg/trainer/sft.py', trainer());
    assert.deepEqual(trainerFindings(program.analyzeAll()), []);
  }
});

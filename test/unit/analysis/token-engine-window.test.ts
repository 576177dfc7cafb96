// CP003, token weighting under an engine's accumulation window (token-engine-window.ts): each micro-batch's loss is
// divided by its own token count summed over the ranks, while the engine averages the window's micro-batches with
// equal weights. The correct twins count the whole window, take one micro-batch per step, or never sum the count
// over the ranks (a plain per-batch mean, correct by convention and not this rule's to judge). The shape is a hint:
// the window is read from a `%` in the loop, not from the engine's configuration, so it is off by default.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, py, summary } from './helpers';

const HINTS = { hints: true } as const;

const ENGINE_LOOP = py`
  import torch
  import torch.distributed as dist

  def fit(engine, loader, grad_accum_steps):
      for step, batch in enumerate(loader):
          logits = engine(batch["input_ids"])
          token_loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(), reduction="none")
          keep = (batch["labels"] != -100).flatten()
          n_tokens = keep.sum().float()
          dist.all_reduce(n_tokens)
          loss = (token_loss * keep).sum() / n_tokens * dist.get_world_size()
          engine.backward(loss)
          engine.step()
          if (step + 1) % grad_accum_steps == 0:
              print("window done", loss.item())
`;

test('CP003 engine window is a hint: silent by default, a warning with hints', async () => {
  assert.deepEqual(summary(await analyze(ENGINE_LOOP)), []);
  const hinted = await analyze(ENGINE_LOOP, HINTS);
  assert.deepEqual(summary(hinted), ['CP003@12']);
  assert.equal(hinted[0].severity, 'warning');
});

test('CP003 (hint): a rank-summed token count of one micro-batch inside an engine accumulation window', async () => {
  const findings = await analyze(ENGINE_LOOP, HINTS);
  assert.deepEqual(summary(findings), ['CP003@12']);
  const f = findings[0];
  assert.equal(f.severity, 'warning');
  assert.match(f.message, /grad_accum_steps/);
  assert.match(f.message, /summed over the data-parallel ranks/);
  assert.doesNotMatch(f.message, /\$\{|undefined/);
  assert.deepEqual(
    f.related.map((r) => r.range.startLine + 1),
    [8, 10, 11, 14],
  );
});

test('CP003 engine window is silent for a window-wide count, no accumulation, no rank sum, or a fixed count', async () => {
  // The fix: the count of the whole window, summed over the ranks, made before the window's micro-batches.
  const windowCount = py`
    import torch
    import torch.distributed as dist

    def fit(engine, windows, grad_accum_steps):
        for window in windows:
            n_tokens = sum((b["labels"] != -100).sum() for b in window).float()
            dist.all_reduce(n_tokens)
            for step, batch in enumerate(window):
                logits = engine(batch["input_ids"])
                token_loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(), reduction="sum")
                loss = token_loss / n_tokens * grad_accum_steps * dist.get_world_size()
                engine.backward(loss)
                engine.step()
                if (step + 1) % grad_accum_steps == 0:
                    print("window done")
  `;
  assert.deepEqual(summary(await analyze(windowCount, HINTS)), []);
  // One micro-batch per step (no accumulation count in the loop): the rank-summed count is exactly right.
  const noWindow = ENGINE_LOOP.replace('if (step + 1) % grad_accum_steps == 0:', 'if step % 100 == 0:');
  assert.deepEqual(summary(await analyze(noWindow, HINTS)), []);
  // No sum over the ranks: a per-batch mean that nothing says is meant to be a token mean over the window.
  const noRankSum = ENGINE_LOOP.replace('        dist.all_reduce(n_tokens)\n', '');
  assert.deepEqual(summary(await analyze(noRankSum, HINTS)), []);
  // A maximum over the ranks is not a total count.
  const maxOverRanks = ENGINE_LOOP.replace(
    'dist.all_reduce(n_tokens)',
    'dist.all_reduce(n_tokens, op=dist.ReduceOp.MAX)',
  );
  assert.deepEqual(summary(await analyze(maxOverRanks, HINTS)), []);
  // Every position of a fixed-size batch: the same count in every micro-batch.
  const fixed = ENGINE_LOOP.replace('n_tokens = keep.sum().float()', 'n_tokens = torch.tensor(float(keep.numel()))');
  assert.deepEqual(summary(await analyze(fixed, HINTS)), []);
  // Plain autograd (`loss.backward()`) has no engine dividing by the window: not this rule.
  const autograd = ENGINE_LOOP.replace('engine.backward(loss)', 'loss.backward()');
  assert.deepEqual(summary(await analyze(autograd, HINTS)), []);
});

test('CP003 engine window follows the count into a helper of the file the loop calls', async () => {
  const helper = py`
    import torch
    import torch.distributed as dist

    def window_loss(token_loss, labels):
        keep = (labels != -100).flatten()
        n_tokens = keep.sum().float()
        dist.all_reduce(n_tokens, op=dist.ReduceOp.SUM)
        return (token_loss * keep).sum() / n_tokens

    class SFT:
        def fit(self, loader):
            for step, batch in enumerate(loader):
                logits = self.model(batch["input_ids"])
                token_loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(), reduction="none")
                loss = window_loss(token_loss, batch["labels"])
                self.strategy.backward(loss, self.model, self.optimizer)
                self.strategy.optimizer_step(self.optimizer, self.model, self.scheduler)
                if step % self.strategy.accumulated_gradient == 0:
                    self.log(loss)
  `;
  const findings = await analyze(helper, HINTS);
  assert.deepEqual(summary(findings), ['CP003@16']);
  assert.match(findings[0].message, /self\.strategy\.accumulated_gradient/);
});

// CP008 split across functions: a class whose `backward` method and counter-gated `update_params` method together
// accumulate, and a loop that divides the loss a backward-running helper returns. Each buggy shape has its
// corrected forms, which must stay silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, py, summary } from './helpers';

const AGENT = py`
  import torch

  class Agent:
      def backward(self, loss):
          if self.fp16:
              self.optimizer.backward(loss, update_master_grads=False)
          else:
              loss.backward()

      def update_params(self):
          update_freq = self.opt.get('update_freq', 1)
          if update_freq > 1:
              self._accum_calls = (self._accum_calls + 1) % update_freq
              if self._accum_calls != 0:
                  return
          self.optimizer.step()

      def train_step(self, batch):
          loss = self.compute_loss(batch)
          self.backward(loss)
          self.update_params()
`;

const RETURNED = py`
  import torch

  class SFTTrainer:
      def _loss_and_backward(self, batch, do_backward=True):
          logits = self.model(batch["input_ids"])
          valid_tokens = torch.sum(batch["loss_mask"])
          loss = torch.sum(self.loss_fct(logits, batch["labels"])) / (valid_tokens + 1e-8)
          if do_backward:
              loss.backward()
          return loss

      def training_step(self, batch):
          self.optimizer.zero_grad()
          micro_batches = batch.split(self.micro_batch_size)
          n_micro_batches = len(micro_batches)
          step_loss = 0
          for micro_batch in micro_batches:
              loss = self._loss_and_backward(batch=micro_batch) / n_micro_batches
              step_loss += loss.item()
          self.optimizer.step()
          return step_loss
`;

test('CP008: backward in one method, the step in another that returns early on all but every K-th call', async () => {
  const findings = await analyze(AGENT);
  // Both branches of `backward` miss the same division: one finding, on the first, and none on the wrapper call.
  assert.deepEqual(summary(findings), ['CP008@6']);
  assert.match(findings[0].message, /`update_freq` micro-batches.*`update_freq`× the configured one/);
  assert.deepEqual(
    findings[0].related.map((r) => r.range.startLine + 1),
    [14, 10, 16],
  );
  // The count is local to `update_params`, so no edit at the backward could divide by it.
  assert.deepEqual(findings[0].fixes, []);
});

test('CP008 across methods is silent where the loss is divided, the counter is not a micro-step count, or there is no gate', async () => {
  const silent = [
    // The fix: the backward method divides by the count the object holds.
    AGENT.replace(
      '    def backward(self, loss):\n',
      "    def backward(self, loss):\n        loss = loss / self.opt['update_freq']\n",
    ),
    // The caller divides before handing the loss over, inline or in an assignment before the call.
    AGENT.replace('self.backward(loss)', "self.backward(loss / self.opt['update_freq'])"),
    AGENT.replace('self.backward(loss)', 'loss = loss / self.grad_accum_steps\n        self.backward(loss)'),
    // A counter that is not about micro-batches (logging every K steps) gates nothing about accumulation.
    AGENT.replace(/update_freq/g, 'log_every'),
    // No early return: every call steps.
    AGENT.replace('            if self._accum_calls != 0:\n                return\n', ''),
    // The step in the same method as backward: that is the single-function rule's shape, not this one's.
    AGENT.replace('            loss.backward()\n', '            loss.backward()\n        self.optimizer.step()\n'),
  ];
  for (const text of silent) {
    assert.notEqual(text, AGENT);
    assert.deepEqual(summary(await analyze(text)), [], text);
  }
});

test('CP008: a loop divides the loss a helper returns by K only after the helper ran backward on it', async () => {
  const findings = await analyze(RETURNED);
  assert.deepEqual(summary(findings), ['CP008@9']);
  assert.match(findings[0].message, /`n_micro_batches` micro-batches.*`n_micro_batches`× the configured one/);
  assert.deepEqual(
    findings[0].related.map((r) => r.range.startLine + 1),
    [17, 18, 20],
  );
  assert.match(findings[0].related[1].message, /divided by `n_micro_batches` only after its backward ran/);
  assert.deepEqual(findings[0].fixes, []);
});

test('CP008 for a returned loss is silent where the helper divides, may not run backward, or the loop is not K long', async () => {
  const silent = [
    // The fix: the count is passed down and divides before backward.
    RETURNED.replace(
      'def _loss_and_backward(self, batch, do_backward=True):',
      'def _loss_and_backward(self, batch, do_backward=True, n_micro_batches=1):',
    )
      .replace('(valid_tokens + 1e-8)\n', '(valid_tokens + 1e-8)\n        loss = loss / n_micro_batches\n')
      .replace(
        'self._loss_and_backward(batch=micro_batch) / n_micro_batches',
        'self._loss_and_backward(batch=micro_batch, n_micro_batches=n_micro_batches)',
      ),
    // A normaliser computed by the caller (a token count over all micro-batches) reaches the helper.
    RETURNED.replace('self._loss_and_backward(batch=micro_batch)', 'self._loss_and_backward(micro_batch, total_tokens)')
      .replace('def _loss_and_backward(self, batch, do_backward=True):', 'def _loss_and_backward(self, batch, total):')
      .replace('(valid_tokens + 1e-8)', '(total + 1e-8)'),
    // The caller turns the backward off (evaluation).
    RETURNED.replace(
      'self._loss_and_backward(batch=micro_batch)',
      'self._loss_and_backward(batch=micro_batch, do_backward=False)',
    ),
    // The loop does not run n_micro_batches times.
    RETURNED.replace('for micro_batch in micro_batches:', 'for micro_batch in micro_batches[:2]:'),
    // A step per micro-batch inside the loop.
    RETURNED.replace('step_loss += loss.item()', 'step_loss += loss.item()\n            self.optimizer.step()'),
    // The returned value is only logged, never divided.
    RETURNED.replace(
      'self._loss_and_backward(batch=micro_batch) / n_micro_batches',
      'self._loss_and_backward(batch=micro_batch)',
    ),
  ];
  for (const text of silent) {
    assert.notEqual(text, RETURNED);
    assert.deepEqual(summary(await analyze(text)), [], text);
  }
});

test('CP008 across methods follows a base class of the same file, and not an unrelated class', async () => {
  const split = AGENT.replace('    def update_params(self):', 'class Child(Agent):\n    def update_params(self):');
  const base = py`
    class Base:
        def update_params(self):
            self._accum_calls = (self._accum_calls + 1) % self.update_freq
            if self._accum_calls != 0:
                return
            self.optimizer.step()

    class Learner(Base):
        def backward(self, loss):
            loss.backward()
  `;
  assert.notEqual(split, AGENT);
  // The stepping method lives in a subclass: an Agent alone never steps, so nothing is proven about it.
  assert.deepEqual(summary(await analyze(split)), []);
  assert.deepEqual(summary(await analyze(base)), ['CP008@10']);
  assert.deepEqual(summary(await analyze(base.replace('class Learner(Base):', 'class Learner:'))), []);
});

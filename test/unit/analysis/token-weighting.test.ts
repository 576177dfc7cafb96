// CP003, token weighting: per-micro-batch token means combined with equal weights. Each buggy shape has its
// corrected forms (a window-wide count, the Trainer's `num_items_in_batch`), and a mean over a count that is not
// provably data-dependent (a fixed-size batch, a mask handed in) stays silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, py, summary } from './helpers';

const TRAINER_IGNORES_WINDOW = py`
  import torch
  from transformers import Trainer

  class DistillTrainer(Trainer):
      @staticmethod
      def divergence(student, teacher, labels=None, reduction="batchmean"):
          per_token = (teacher.exp() * (teacher - student)).sum(-1)
          if labels is not None:
              keep = labels != -100
              per_token = per_token[keep]
          if reduction == "batchmean":
              n_valid = keep.sum().clamp_min(1) if labels is not None else per_token.numel()
              return per_token.sum() / n_valid
          elif reduction == "sum":
              return per_token.sum()
          return per_token

      def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
          out = model(input_ids=inputs["input_ids"])
          with torch.no_grad():
              ref = self.teacher(input_ids=inputs["input_ids"])
          loss = self.divergence(out.logits.log_softmax(-1), ref.logits.log_softmax(-1), labels=inputs["labels"])
          return (loss, out) if return_outputs else loss
`;

test('CP003: compute_loss ignores num_items_in_batch and returns a mean over its own masked tokens', async () => {
  const findings = await analyze(TRAINER_IGNORES_WINDOW);
  assert.deepEqual(summary(findings), ['CP003@22']);
  const f = findings[0];
  assert.match(f.message, /num_items_in_batch/);
  assert.match(f.message, /labels != -100/);
  assert.doesNotMatch(f.message, /\$\{|undefined/);
  const lines = f.related.map((r) => r.range.startLine + 1);
  assert.deepEqual(lines, [9, 13, 18]);
});

test('CP003 token weighting is silent where the window count is used, the branch is a sum, or the mask is not proven', async () => {
  const uses = TRAINER_IGNORES_WINDOW.replace(
    'labels=inputs["labels"])',
    'labels=inputs["labels"], reduction="sum") / num_items_in_batch',
  );
  assert.deepEqual(summary(await analyze(uses)), []);
  const sumBranch = TRAINER_IGNORES_WINDOW.replace(
    'labels=inputs["labels"])',
    'labels=inputs["labels"], reduction="sum")',
  );
  assert.deepEqual(summary(await analyze(sumBranch)), []);
  const unknownReduction = TRAINER_IGNORES_WINDOW.replace(
    'labels=inputs["labels"])',
    'labels=inputs["labels"], reduction=self.reduction)',
  );
  assert.deepEqual(summary(await analyze(unknownReduction)), []);
  // A mask handed in by the caller may be all ones (packed, fixed-length batches): nothing is proven.
  const handedIn = TRAINER_IGNORES_WINDOW.replace('keep = labels != -100', 'keep = inputs_mask');
  assert.deepEqual(summary(await analyze(handedIn)), []);
  // A training_step of its own decides how the micro-batches combine; one that calls the Trainer's keeps its weights.
  const ownStep = TRAINER_IGNORES_WINDOW.replace(
    '    def compute_loss(',
    '    def training_step(self, model, inputs, num_items_in_batch=None):\n        return self.compute_loss(model, inputs) / self.args.gradient_accumulation_steps\n\n    def compute_loss(',
  );
  assert.deepEqual(summary(await analyze(ownStep)), []);
  const delegates = TRAINER_IGNORES_WINDOW.replace(
    '    def compute_loss(',
    '    def training_step(self, model, inputs, num_items_in_batch=None):\n        return super().training_step(model, inputs, num_items_in_batch)\n\n    def compute_loss(',
  );
  assert.deepEqual(summary(await analyze(delegates)), ['CP003@25']);
  // Without the Trainer's window count there is no contract to break.
  const noWindow = TRAINER_IGNORES_WINDOW.replace(', num_items_in_batch=None', '');
  assert.deepEqual(summary(await analyze(noWindow)), []);
});

const LOOP = py`
  import torch
  import torch.nn.functional as F

  def train(model, optimizer, loader, gradient_accumulation_steps):
      for step, batch in enumerate(loader):
          logits = model(batch["input_ids"])
          token_loss = F.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(), reduction="none")
          mask = (batch["labels"] != -100).float().flatten()
          loss = (token_loss * mask).sum() / mask.sum()
          loss = loss / gradient_accumulation_steps
          loss.backward()
          if (step + 1) % gradient_accumulation_steps == 0:
              optimizer.step()
              optimizer.zero_grad()
`;

test('CP003: an accumulation loop divides per-micro-batch token means by the micro-step count', async () => {
  const findings = await analyze(LOOP);
  assert.deepEqual(summary(findings), ['CP003@11']);
  assert.match(findings[0].message, /gradient_accumulation_steps/);
  assert.deepEqual(
    findings[0].related.map((r) => r.range.startLine + 1),
    [8, 9, 12, 13],
  );
});

test('CP003 token weighting in a loop is silent for a fixed count, a window-wide count, or an undivided loss', async () => {
  // A mean over every position of a fixed-size batch weighs each micro-batch's tokens the same.
  const fixed = LOOP.replace('/ mask.sum()', '/ mask.numel()');
  assert.deepEqual(summary(await analyze(fixed)), []);
  // The count made once for the whole window (before the loop) is the correct normalisation.
  const window = py`
    import torch
    import torch.nn.functional as F

    def train(model, optimizer, micro_batches, gradient_accumulation_steps):
        total = sum((b["labels"] != -100).sum() for b in micro_batches)
        n_tokens = total
        for batch in micro_batches:
            logits = model(batch["input_ids"])
            token_loss = F.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(), reduction="sum")
            loss = token_loss / n_tokens
            loss.backward()
        optimizer.step()
  `;
  assert.deepEqual(summary(await analyze(window)), []);
  // Not divided by K at all: CP008 (a sum of K means), not this rule.
  const undivided = LOOP.replace('loss = loss / gradient_accumulation_steps\n', '');
  assert.ok(!summary(await analyze(undivided)).includes('CP003@10'));
});

const CROSS_ENTROPY_LOOP = py`
  import torch
  import torch.nn.functional as F

  def train(model, optimizer, loader, pad_id, accumulation_steps):
      for i, (inputs, labels) in enumerate(loader):
          labels = labels.clone()
          labels[labels == pad_id] = -100
          logits = model(inputs)
          loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))
          (loss / accumulation_steps).backward()
          if (i + 1) % accumulation_steps == 0:
              optimizer.step()
              optimizer.zero_grad()
`;

test('CP003: cross_entropy means over labels this loop pads with the ignore index, divided by the micro-step count', async () => {
  const findings = await analyze(CROSS_ENTROPY_LOOP);
  assert.deepEqual(summary(findings), ['CP003@10']);
  assert.deepEqual(
    findings[0].related.map((r) => r.range.startLine + 1),
    [7, 9, 11, 12],
  );
});

test('CP003 cross_entropy is silent where no ignored label is written, another is ignored, or the loss is summed', async () => {
  // Pretraining-style labels (never the ignore index in view): every micro-batch has the same count.
  const pretraining = CROSS_ENTROPY_LOOP.replace('        labels[labels == pad_id] = -100\n', '');
  assert.deepEqual(summary(await analyze(pretraining)), []);
  const otherIgnore = CROSS_ENTROPY_LOOP.replace('labels.view(-1))', 'labels.view(-1), ignore_index=-1)');
  assert.deepEqual(summary(await analyze(otherIgnore)), []);
  const summed = CROSS_ENTROPY_LOOP.replace('labels.view(-1))', 'labels.view(-1), reduction="sum")');
  assert.deepEqual(summary(await analyze(summed)), []);
  const filled = CROSS_ENTROPY_LOOP.replace(
    'labels[labels == pad_id] = -100',
    'labels = labels.masked_fill(labels == pad_id, -100)',
  );
  assert.deepEqual(summary(await analyze(filled)), ['CP003@10']);
  // A slice marks the same number of positions in every micro-batch: nothing is proven.
  const slice = CROSS_ENTROPY_LOOP.replace('labels[labels == pad_id] = -100', 'labels[:, :8] = -100');
  assert.deepEqual(summary(await analyze(slice)), []);
});

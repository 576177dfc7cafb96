// CP008 on shapes seen in real training scripts that the named-loss reading missed: backward on the unnamed result
// of a call (modded-nanogpt before 29aefcfd: `model(inputs, targets).backward()` in a `range(grad_accum_steps)` loop,
// the step inside a helper of the same file), and a loss from `model(**batch)`, whose splat is not a product.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyEdits } from '../../../src/analysis/index';
import { analyze, parsesCleanly, py, summary } from './helpers';

const HELPER_STEP = py`
  def step_optimizers(step, optimizers, model):
      for optimizer in optimizers:
          for group in optimizer.param_groups:
              group["lr"] = group["initial_lr"] * get_lr(step)
      if step % 2 == 0:
          optimizers[1].step()
      else:
          for optimizer in optimizers:
              optimizer.step()
      model.zero_grad(set_to_none=True)

  for step in range(train_steps):
      for _ in range(grad_accum_steps):
          inputs, targets = next(train_loader)
          model(inputs, targets, window).backward()
      step_optimizers(step, optimizers, model)
`;

test('CP008: backward on a call result in a range(K) loop, the step in a helper of the file called after it', async () => {
  const findings = await analyze(HELPER_STEP);
  assert.deepEqual(summary(findings), ['CP008@15']);
  assert.match(
    findings[0].message,
    /`grad_accum_steps` micro-batches.*`model\(inputs, targets, window\)` is not divided/,
  );
  assert.deepEqual(
    findings[0].related.map((r) => r.range.startLine + 1),
    [13, 16],
  );
  const fixed = applyEdits(HELPER_STEP, findings[0].fixes[0].edits);
  assert.match(fixed, /\(model\(inputs, targets, window\) \/ grad_accum_steps\)\.backward\(\)/);
  assert.ok(await parsesCleanly(fixed));
  assert.deepEqual(await analyze(fixed), []);
});

test('CP008 on a call result stays silent where anything in reach may normalise it, or the helper does not step', async () => {
  const silent = [
    // Divided inside the backward's receiver (the fix as written in modded-nanogpt 29aefcfd).
    HELPER_STEP.replace(
      'model(inputs, targets, window).backward()',
      '(model(inputs, targets, window) / grad_accum_steps).backward()',
    ),
    // An argument carrying a normaliser computed earlier.
    HELPER_STEP.replace(
      '        inputs, targets = next(train_loader)',
      '        inputs, targets = next(train_loader)\n        window = targets.numel() / total_tokens',
    ),
    // The count passed to the call.
    HELPER_STEP.replace('model(inputs, targets, window)', 'model(inputs, targets, grad_accum_steps)'),
    // A method of a value computed here (a per-token loss averaged by the caller): not a call's own loss.
    HELPER_STEP.replace(
      '        model(inputs, targets, window).backward()',
      '        per_token = model(inputs, targets, window)\n        per_token.mean().backward()',
    ),
    // The helper rescales the accumulated gradients before its step.
    HELPER_STEP.replace(
      '    if step % 2 == 0:',
      '    for p in model.parameters():\n        p.grad.div_(grad_accum_steps)\n    if step % 2 == 0:',
    ),
    // The helper only logs: no step after the loop.
    HELPER_STEP.replace(/optimizers\[1\]\.step\(\)/, 'print(step)').replace(/optimizer\.step\(\)/, 'print(optimizer)'),
  ];
  for (const variant of silent) {
    assert.notEqual(variant, HELPER_STEP);
    assert.deepEqual(summary(await analyze(variant)), [], variant);
  }
});

test('CP008: a loss function of the file called inline is read; arithmetic in its body keeps the rule silent', async () => {
  const text = py`
    def loss_fn(logits, targets):
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    def train(model, optimizer, loader, accumulation_steps):
        for i, (x, y) in enumerate(loader):
            loss_fn(model(x), y).backward()
            if (i + 1) % accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
  `;
  assert.deepEqual(summary(await analyze(text)), ['CP008@6']);
  const divided = text.replace('targets.view(-1))', 'targets.view(-1)) / accumulation_steps');
  assert.deepEqual(summary(await analyze(divided)), []);
  const summed = text.replace('targets.view(-1))', 'targets.view(-1), reduction="sum")');
  assert.deepEqual(summary(await analyze(summed)), []);
});

test('CP008: `model(**batch)` is a call with unpacked arguments, not a product that could normalise the loss', async () => {
  const text = py`
    def train(model, optimizer, loader, gradient_accumulation_steps):
        for step, batch in enumerate(loader):
            loss = model(**batch).loss
            loss.backward()
            if (step + 1) % gradient_accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
  `;
  assert.deepEqual(summary(await analyze(text)), ['CP008@4']);
  assert.deepEqual(summary(await analyze(text.replace('model(**batch).loss', 'model(*batch).loss'))), ['CP008@4']);
  const silent = [
    text.replace('model(**batch).loss', 'model(**batch).loss / gradient_accumulation_steps'),
    text.replace('model(**batch).loss', 'model(**batch).loss * loss_weight'),
    text.replace('        loss.backward()', '        loss = loss / batch["num_tokens"]\n        loss.backward()'),
  ];
  for (const variant of silent) {
    assert.notEqual(variant, text);
    assert.deepEqual(summary(await analyze(variant)), [], variant);
  }
});

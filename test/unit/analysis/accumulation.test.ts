// CP008: gradient accumulation over K micro-batches whose mean loss is not divided by K. Each case is a shape seen
// in real training scripts (nanoGPT's micro-step loop, lit-llama's modulo-gated step), with its fixed form.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyEdits } from '../../../src/analysis/index';
import { analyze, parsesCleanly, py, summary } from './helpers';

const MICRO_STEP_LOOP = py`
  while True:
      for micro_step in range(gradient_accumulation_steps):
          with ctx:
              logits, loss = model(X, Y)
          X, Y = get_batch('train')
          scaler.scale(loss).backward()
      scaler.step(optimizer)
      scaler.update()
      optimizer.zero_grad(set_to_none=True)
`;

const MODULO_STEP = py`
  def train(fabric, model, optimizer, train_data):
      for iter_num in range(max_iters):
          input_ids, targets = get_batch(fabric, train_data)
          logits = model(input_ids)
          loss = loss_fn(logits, targets)
          fabric.backward(loss)
          if (iter_num + 1) % gradient_accumulation_iters == 0:
              optimizer.step()
              optimizer.zero_grad()
`;

test('CP008: backward in a range(K) micro-step loop, one step after it, the loss not divided by K', async () => {
  const findings = await analyze(MICRO_STEP_LOOP);
  assert.deepEqual(summary(findings), ['CP008@6']);
  assert.match(
    findings[0].message,
    /`gradient_accumulation_steps` micro-batches.*`loss` is not divided.*`gradient_accumulation_steps`× the configured one/,
  );
  assert.deepEqual(
    findings[0].related.map((r) => r.range.startLine + 1),
    [2, 7],
  );
  const fixed = applyEdits(MICRO_STEP_LOOP, findings[0].fixes[0].edits);
  assert.match(fixed, /scaler\.scale\(loss \/ gradient_accumulation_steps\)\.backward\(\)/);
  assert.ok(await parsesCleanly(fixed));
  assert.deepEqual(await analyze(fixed), []);
});

test('CP008: backward every iteration and the step under `% K == 0`; the fix re-parses and is clean', async () => {
  const findings = await analyze(MODULO_STEP);
  assert.deepEqual(summary(findings), ['CP008@6']);
  const fixed = applyEdits(MODULO_STEP, findings[0].fixes[0].edits);
  assert.match(fixed, /fabric\.backward\(loss \/ gradient_accumulation_iters\)/);
  assert.deepEqual(await analyze(fixed), []);
});

test('CP008: loss.backward() gets parentheses in the fix', async () => {
  const text = py`
    for step, batch in enumerate(loader):
        loss = criterion(model(batch), batch.y)
        loss.backward()
        if (step + 1) % accumulation_steps == 0:
            optimizer.step()
  `;
  const findings = await analyze(text);
  assert.deepEqual(summary(findings), ['CP008@3']);
  const fixed = applyEdits(text, findings[0].fixes[0].edits);
  assert.match(fixed, /\(loss \/ accumulation_steps\)\.backward\(\)/);
  assert.deepEqual(await analyze(fixed), []);
});

test('CP008 is silent where the loss is normalised, summed, the count unnamed, or the step is not once per K', async () => {
  const silent = [
    // Divided by the count (the fix), or by anything else the analysis cannot tell apart (a token count).
    MICRO_STEP_LOOP.replace('scaler.scale(loss)', 'scaler.scale(loss / gradient_accumulation_steps)'),
    MICRO_STEP_LOOP.replace(
      'logits, loss = model(X, Y)',
      'logits, loss = model(X, Y)\n            loss = loss / num_tokens',
    ),
    // A sum over samples: summing micro-batch sums is the sum over the larger batch.
    MODULO_STEP.replace('loss = loss_fn(logits, targets)', 'loss = loss_fn(logits, targets, reduction="sum")'),
    // The count goes into the loss computation, which may normalise by it.
    MODULO_STEP.replace(
      'loss = loss_fn(logits, targets)',
      'loss = compute_loss(logits, targets, gradient_accumulation_iters)',
    ),
    // A loop whose bound does not say it counts micro-batches (sequence chunks, GAN critic steps).
    MICRO_STEP_LOOP.replace('range(gradient_accumulation_steps)', 'range(n_chunks)'),
    // The step inside the loop: one step per backward.
    MICRO_STEP_LOOP.replace("X, Y = get_batch('train')", "X, Y = get_batch('train')\n        optimizer.step()"),
  ];
  for (const text of silent) assert.deepEqual(summary(await analyze(text)), [], text);
});

test('CP008 knows the backward calls that divide by the accumulation count themselves', async () => {
  const silent = [
    // Accelerate divides in backward when the Accelerator knows the count, and inside accumulate().
    MODULO_STEP.replace(
      'def train(',
      'accelerator = Accelerator(gradient_accumulation_steps=gradient_accumulation_iters)\ndef train(',
    ).replace('fabric.backward(loss)', 'accelerator.backward(loss)'),
    MODULO_STEP.replace(
      '        fabric.backward(loss)',
      '        with accelerator.accumulate(model):\n            accelerator.backward(loss)',
    ),
    // A DeepSpeed engine scales the loss by its own gradient_accumulation_steps.
    MODULO_STEP.replace('fabric.backward(loss)', 'model_engine.backward(loss)'),
    // The loss given by keyword, already divided (ColossalAI's booster).
    MODULO_STEP.replace(
      'loss = loss_fn(logits, targets)',
      'loss = loss_fn(logits, targets) / gradient_accumulation_iters',
    ).replace('fabric.backward(loss)', 'booster.backward(loss=loss, optimizer=optimizer)'),
  ];
  for (const text of silent) assert.deepEqual(summary(await analyze(text)), [], text);
  // An Accelerator built without the count divides by 1: the sum stays.
  const plain = MODULO_STEP.replace(
    'def train(',
    'accelerator = Accelerator(mixed_precision="fp16")\ndef train(',
  ).replace('fabric.backward(loss)', 'accelerator.backward(loss)');
  assert.deepEqual(summary(await analyze(plain)), ['CP008@7']);
});

test('CP008 in a per-batch method: backward, then the step under `% K` in the same method (Lightning 73d0855)', async () => {
  const text = py`
    class Trainer:
        def run_training_batch(self, batch):
            output = self.model.training_step(batch)
            loss = output['loss']
            loss.backward()
            self.batch_loss_value += loss.item()
            if (self.batch_nb + 1) % self.accumulate_grad_batches == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
  `;
  assert.deepEqual(summary(await analyze(text)), ['CP008@5']);
  const fixed = text.replace("loss = output['loss']", "loss = output['loss'] / self.accumulate_grad_batches");
  assert.deepEqual(summary(await analyze(fixed)), []);
  // A step every call, or a guard that does not count micro-batches (logging every N), says nothing.
  assert.deepEqual(summary(await analyze(text.replace('self.accumulate_grad_batches', 'self.log_every'))), []);
});

test('CP008 is silent where the accumulated gradients are rescaled before the step (fairseq-style summed losses)', async () => {
  const text = py`
    for i, batch in enumerate(loader):
        loss, sample_size = criterion(model, batch)
        scaler.scale(loss).backward()
        if (i + 1) % args.update_freq == 0:
            multiply_grads(optim, world_size / sample_size)
            scaler.step(optim)
  `;
  assert.deepEqual(summary(await analyze(text.replace(/ *multiply_grads\(.*\n/, ''))), ['CP008@3']);
  const rescaled = [
    text,
    text.replace(
      'multiply_grads(optim, world_size / sample_size)',
      'for p in model.parameters():\n            p.grad.div_(sample_size)',
    ),
    text.replace(
      'multiply_grads(optim, world_size / sample_size)',
      'for p in model.parameters():\n            p.grad *= world_size / sample_size',
    ),
    text.replace(/multiply_grads\(.*\n *scaler\.step\(optim\)/, 'scaler.step(optim, scale=sample_size)'),
  ];
  for (const variant of rescaled.slice(1)) assert.notEqual(variant, text);
  for (const variant of rescaled) assert.deepEqual(summary(await analyze(variant)), [], variant);
  // Unscaling AMP's loss scale is not a rescale by the micro-step count.
  assert.deepEqual(
    summary(await analyze(text.replace('multiply_grads(optim, world_size / sample_size)', 'scaler.unscale_(optim)'))),
    ['CP008@3'],
  );
});

test('CP008: backward on each item of a micro-batch collection, one step after the loop; K is its length', async () => {
  const text = py`
    def train_step(model, optimizer, batch, micro_batch_size):
        optimizer.zero_grad()
        micro_batches = batch.split(micro_batch_size)
        for micro_batch in micro_batches:
            loss = model(micro_batch["input_ids"], labels=micro_batch["labels"]).loss
            loss.backward()
        optimizer.step()
  `;
  const findings = await analyze(text);
  assert.deepEqual(summary(findings), ['CP008@6']);
  assert.match(findings[0].message, /`len\(micro_batches\)` micro-batches.*`len\(micro_batches\)`× the configured one/);
  const fixed = applyEdits(text, findings[0].fixes[0].edits);
  assert.match(fixed, /\(loss \/ len\(micro_batches\)\)\.backward\(\)/);
  assert.ok(await parsesCleanly(fixed));
  assert.deepEqual(await analyze(fixed), []);
  // An iterator has no length: the finding stands, without a fix.
  const iterated = text.replace(
    'micro_batches = batch.split(micro_batch_size)',
    'micro_batches = iter_micro_batches(batch, micro_batch_size)',
  );
  assert.deepEqual(
    (await analyze(iterated)).map((f) => [f.code, f.fixes.length]),
    [['CP008', 0]],
  );
  const silent = [
    // A count over all micro-batches, computed before the loop, may normalise each loss.
    text.replace(
      '    for micro_batch',
      '    total_tokens = sum(mb["mask"].sum() for mb in micro_batches)\n    for micro_batch',
    ),
    // The collection is not named as micro-batches (sequence chunks, a data loader).
    text.replace(/micro_batches/g, 'chunks'),
    // A step per item.
    text.replace('        loss.backward()\n', '        loss.backward()\n        optimizer.step()\n'),
  ];
  for (const variant of silent) {
    assert.notEqual(variant, text);
    assert.deepEqual(summary(await analyze(variant)), [], variant);
  }
});

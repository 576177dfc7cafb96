// CP003, an accumulation window cut short by `zero_grad`: the loss is divided by K and the step taken once per K
// micro-batches, but the gradients are zeroed on the stepping micro-batch before its backward (or on every
// micro-batch), so each step applies one micro-batch's gradient divided by K. Each buggy shape has its corrected
// forms, which stay silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, py, summary } from './helpers';

const CYCLE = py`
  from itertools import cycle
  import torch

  def train(model, loader, args, scaler):
      optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
      for batch, accum_step in zip(loader, cycle(range(args.grad_accumulation))):
          if accum_step == 0:
              model.zero_grad(set_to_none=True)
          with torch.autocast("cuda"):
              loss = model(batch)
              loss /= args.grad_accumulation
          if args.amp:
              scaler.scale(loss).backward()
          else:
              loss.backward()
          if accum_step % args.grad_accumulation == 0:
              if args.amp:
                  scaler.step(optimizer)
                  scaler.update()
              else:
                  optimizer.step()
`;

test('CP003: zero_grad and the step fall on the same micro-batch of a cycling counter', async () => {
  const findings = await analyze(CYCLE);
  assert.deepEqual(summary(findings), ['CP003@8']);
  assert.match(findings[0].message, /1\/`args.grad_accumulation`/);
  assert.doesNotMatch(findings[0].message, /\$\{|undefined/);
  assert.deepEqual(
    findings[0].related.map((r) => r.range.startLine + 1),
    [13, 16, 18],
  );
});

test('CP003 zero_grad window is silent when the cycle puts zero_grad first and the step last', async () => {
  const shifted = CYCLE.replace(
    'cycle(range(args.grad_accumulation))',
    'cycle(range(1, args.grad_accumulation + 1))',
  ).replace('if accum_step == 0:', 'if accum_step == 1:');
  assert.deepEqual(summary(await analyze(shifted)), []);
  // The zeroed module is not the one the optimizer steps: nothing is proven about the stepped parameters.
  const other = CYCLE.replace('model.zero_grad(set_to_none=True)', 'teacher.zero_grad(set_to_none=True)');
  assert.deepEqual(summary(await analyze(other)), []);
  // Without the division by K the step applies one micro-batch's mean: data is dropped, the scale is right, and
  // nothing is summed either (no CP008).
  const undivided = CYCLE.replace('loss /= args.grad_accumulation', 'pass');
  assert.deepEqual(summary(await analyze(undivided)), []);
  // A division on one branch only is not a division on every micro-batch.
  const branch = CYCLE.replace(
    'loss /= args.grad_accumulation',
    'if args.scale:\n                loss /= args.grad_accumulation',
  );
  assert.deepEqual(summary(await analyze(branch)), []);
});

const EVERY_BATCH = py`
  import torch

  def train(model, optimizer, loader, accum_steps):
      for i, batch in enumerate(loader):
          optimizer.zero_grad()
          loss = model(batch) / accum_steps
          loss.backward()
          if (i + 1) % accum_steps == 0:
              optimizer.step()
`;

test('CP003: zero_grad on every micro-batch of a `% K` accumulation loop', async () => {
  assert.deepEqual(summary(await analyze(EVERY_BATCH)), ['CP003@5']);
  // Undivided, the window is still one micro-batch: not the K-fold sum of CP008.
  const undivided = EVERY_BATCH.replace('model(batch) / accum_steps', 'model(batch)');
  assert.deepEqual(summary(await analyze(undivided)), []);
  const undividedSteady = undivided.replace('        optimizer.zero_grad()\n', '');
  assert.deepEqual(summary(await analyze(undividedSteady)), ['CP008@6']);
  const afterStep = EVERY_BATCH.replace('        optimizer.zero_grad()\n', '').replace(
    'optimizer.step()',
    'optimizer.step()\n            optimizer.zero_grad()',
  );
  assert.deepEqual(summary(await analyze(afterStep)), []);
  const sameGuard = EVERY_BATCH.replace(
    '        optimizer.zero_grad()\n',
    '        if (i + 1) % accum_steps == 0:\n            optimizer.zero_grad()\n',
  );
  assert.deepEqual(summary(await analyze(sameGuard)), ['CP003@6']);
  // The loop keeps each micro-batch's gradient in its own buffer: zeroing `.grad` is then part of the design.
  const buffered = EVERY_BATCH.replace(
    '        loss.backward()\n',
    '        loss.backward()\n        for p, acc in zip(model.parameters(), buffers):\n            acc.add_(p.grad)\n',
  );
  assert.deepEqual(summary(await analyze(buffered)), []);
  const windowStart = EVERY_BATCH.replace(
    '        optimizer.zero_grad()\n',
    '        if i % accum_steps == 0:\n            optimizer.zero_grad()\n',
  );
  assert.deepEqual(summary(await analyze(windowStart)), []);
  // The counter moves between the two guards: they do not see the same value.
  const moved = EVERY_BATCH.replace('for i, batch in enumerate(loader):', 'for batch in loader:').replace(
    '        optimizer.zero_grad()\n',
    '        if (i + 1) % accum_steps == 0:\n            optimizer.zero_grad()\n        i += 1\n',
  );
  assert.deepEqual(summary(await analyze(moved)), []);
});

const RANGE = py`
  def train(model, optimizer, batches, gradient_accumulation_steps):
      for step in range(1000):
          for _ in range(gradient_accumulation_steps):
              optimizer.zero_grad()
              loss = model(next(batches)) / gradient_accumulation_steps
              loss.backward()
          optimizer.step()
`;

test('CP003: zero_grad inside the micro-batch loop of a `range(K)` window', async () => {
  assert.deepEqual(summary(await analyze(RANGE)), ['CP003@4']);
  const outside = RANGE.replace('            optimizer.zero_grad()\n', '').replace(
    '        for _ in',
    '        optimizer.zero_grad()\n        for _ in',
  );
  assert.deepEqual(summary(await analyze(outside)), []);
});

const ACCELERATE = py`
  from accelerate import Accelerator

  class Trainer:
      def __init__(self, model, optimizer, config):
          self.accelerator = Accelerator(gradient_accumulation_steps=config.gradient_accumulation_steps)
          self.model, self.optimizer = self.accelerator.prepare(model, optimizer)

      def train_minibatch(self, batch):
          loss = self.model(batch).loss
          self.optimizer.zero_grad()
          self.accelerator.backward(loss)
          self.optimizer.step()
`;

test('CP003: zero_grad before accelerator.backward and the step in one straight line', async () => {
  const findings = await analyze(ACCELERATE);
  assert.deepEqual(summary(findings), ['CP003@10']);
  assert.match(findings[0].message, /config\.gradient_accumulation_steps/);
  const after = ACCELERATE.replace('        self.optimizer.zero_grad()\n', '').replace(
    'self.optimizer.step()',
    'self.optimizer.step()\n        self.optimizer.zero_grad()',
  );
  assert.deepEqual(summary(await analyze(after)), []);
  const noAccumulation = ACCELERATE.replace('gradient_accumulation_steps=config.gradient_accumulation_steps', '');
  assert.deepEqual(summary(await analyze(noAccumulation)), []);
  const one = ACCELERATE.replace(
    'gradient_accumulation_steps=config.gradient_accumulation_steps',
    'gradient_accumulation_steps=1',
  );
  assert.deepEqual(summary(await analyze(one)), []);
  const guarded = ACCELERATE.replace(
    '        self.optimizer.step()',
    '        if self.accelerator.sync_gradients:\n            self.optimizer.step()',
  );
  assert.deepEqual(summary(await analyze(guarded)), []);
  // DeepSpeed takes over zero_grad and the step: an Accelerator given its plugin is not this bug.
  const deepspeed = ACCELERATE.replace(
    'gradient_accumulation_steps=config.gradient_accumulation_steps',
    'gradient_accumulation_steps=config.gradient_accumulation_steps, deepspeed_plugin=plugin',
  );
  assert.deepEqual(summary(await analyze(deepspeed)), []);
});

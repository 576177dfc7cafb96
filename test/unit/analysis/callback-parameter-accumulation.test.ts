// The per-file accumulation rule (accumulation.ts) reads a loss that a schedule takes from a call of its own callable
// parameter (`loss, stats = forward_fn(batch, model)`) as the loss of the functions the program passes there
// (contracts/callback-arguments.ts): CP008 only when every function that reaches the parameter returns an undivided
// mean; silent when one divides by the count, sums, or cannot be read (a lambda). A parameter no call passes a
// function to (a `model` given a module object) keeps the rule's reading of its call's result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Program } from '../../../src/analysis/index';
import { parser, py, summary } from './helpers';

const TRAINER = py`
  def train_step(forward_fn, model, optimizer, loader, args):
      optimizer.zero_grad()
      for _ in range(args.grad_accum_steps):
          loss, stats = forward_fn(next(loader), model)
          loss.backward()
      optimizer.step()
`;

const SCRIPT = py`
  import torch.nn.functional as F
  from trainer import train_step


  def loss_step(batch, model):
      logits = model(batch["input"])
      loss = F.cross_entropy(logits, batch["label"])
      return loss, {"loss": loss.item()}


  train_step(loss_step, model, optimizer, loader, args)
`;

const MEAN = 'loss = F.cross_entropy(logits, batch["label"])';

async function check(files: Record<string, string>): Promise<string[]> {
  const program = new Program(await parser());
  for (const [path, text] of Object.entries(files)) program.setFile(path, text);
  return [...program.analyzeAll()].flatMap(([path, r]) => summary(r.findings).map((s) => `${path}:${s}`));
}

function script(to: string): string {
  assert.ok(SCRIPT.includes(MEAN));
  return SCRIPT.replace(MEAN, to);
}

test('a schedule whose callback parameter receives only undivided means keeps its CP008', async () => {
  assert.deepEqual(await check({ 'train.py': SCRIPT, 'trainer.py': TRAINER }), [
    'train.py:CP008@7',
    'trainer.py:CP008@5',
  ]);
});

test('the schedule is silent when the function passed to its callback parameter divides by the count', async () => {
  const divided = script(`${MEAN} / args.grad_accum_steps`);
  assert.deepEqual(await check({ 'train.py': divided, 'trainer.py': TRAINER }), []);
  // The count's setting, not its full text: `/ cfg.grad_accum_steps` is the same division.
  const setting = script(`${MEAN} / cfg.grad_accum_steps`);
  assert.deepEqual(await check({ 'train.py': setting, 'trainer.py': TRAINER }), []);
});

test('the schedule is silent when the callback sums, or a lambda or a second, dividing callback reaches it', async () => {
  const summed = script('loss = F.cross_entropy(logits, batch["label"], reduction="sum")');
  assert.deepEqual(await check({ 'train.py': summed, 'trainer.py': TRAINER }), []);
  const lambda = SCRIPT.replace(
    'train_step(loss_step,',
    'train_step(lambda b, m: (F.cross_entropy(m(b["input"]), b["label"]) / 4, {}),',
  );
  assert.deepEqual(await check({ 'train.py': lambda, 'trainer.py': TRAINER }), []);
  const other = py`
    from trainer import train_step


    def scaled_step(batch, model):
        loss = model(batch).mean() / args.grad_accum_steps
        return loss, {}


    def main():
        train_step(scaled_step, model, optimizer, loader, args)
  `;
  // Only the schedule's file is asserted: the callback contract judges train.py (and is silent, since finetune.py
  // divides by the count's setting).
  const found = await check({ 'train.py': SCRIPT, 'finetune.py': other, 'trainer.py': TRAINER });
  assert.deepEqual(
    found.filter((f) => f.startsWith('trainer.py')),
    [],
  );
});

test('a callback passed on through a caller that takes it as its own parameter is followed', async () => {
  const launcher = py`
    from trainer import train_step


    def fit(step_fn, model, optimizer, loader, args):
        for epoch in range(args.epochs):
            train_step(step_fn, model, optimizer, loader, args)
  `;
  const files = (s: string) => ({
    'launch.py': launcher,
    'train.py': s.replace('from trainer import train_step', 'from launch import fit').replace('train_step(', 'fit('),
    'trainer.py': TRAINER,
  });
  assert.deepEqual(await check(files(script(`${MEAN} / args.grad_accum_steps`))), []);
  assert.deepEqual(await check(files(SCRIPT)), ['train.py:CP008@7', 'trainer.py:CP008@5']);
});

test('a model parameter called for its mean loss is not a callback: CP008 stands', async () => {
  const trainer = py`
    def train(model, loader, optimizer, grad_accum_steps):
        optimizer.zero_grad()
        for _ in range(grad_accum_steps):
            loss = model(next(loader))
            loss.backward()
        optimizer.step()
  `;
  const main = py`
    from trainer import train
    from nets import Net

    net = Net()
    train(net, loader, optimizer, 8)
  `;
  assert.deepEqual(await check({ 'trainer.py': trainer, 'main.py': main }), ['trainer.py:CP008@5']);
});

test('the callback contract states the effect for the optimizer the schedule steps: AdamW reads the sum through eps', async () => {
  const adam = py`
    import torch


    def train_step(forward_fn, model, loader, args):
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        optimizer.zero_grad()
        for _ in range(args.grad_accum_steps):
            loss, stats = forward_fn(next(loader), model)
            loss.backward()
        optimizer.step()
  `;
  const program = new Program(await parser());
  program.setFile('train.py', SCRIPT);
  program.setFile('trainer.py', adam);
  const results = program.analyzeAll();
  const contract = results.get('train.py')!.findings;
  assert.deepEqual(summary(contract), ['CP008@7']);
  assert.doesNotMatch(contract[0].message, /effective learning rate/);
  assert.match(contract[0].message, /AdamW normalises its step by the gradient's scale/);
  assert.match(results.get('trainer.py')!.findings[0].message, /AdamW normalises its step/);
});

test('a call of the schedule inside a class method counts: the class passes a dividing callback, so it is silent', async () => {
  // The callback contract parses files without their top-level classes; a call written in one is not read, so the
  // reading must not take the parameter for one no call passes a function to.
  const inClass = py`
    from trainer import train_step


    def scaled_step(batch, model):
        loss = model(batch).mean() / args.grad_accum_steps
        return loss, {}


    class Runner:
        def run(self):
            train_step(scaled_step, self.model, self.optimizer, self.loader, self.args)
  `;
  assert.deepEqual(await check({ 'runner.py': inClass, 'trainer.py': TRAINER }), []);
});

test('a call of the schedule inside a class method passing an undivided module-level callback keeps CP008', async () => {
  // The classes are parsed when their text calls the schedule: the function the method passes is read like one passed
  // at module level.
  const inClass = py`
    import torch.nn.functional as F
    from trainer import train_step


    def loss_step(batch, model):
        logits = model(batch["input"])
        loss = F.cross_entropy(logits, batch["label"])
        return loss, {"loss": loss.item()}


    class Runner:
        def run(self):
            train_step(loss_step, self.model, self.optimizer, self.loader, self.args)
  `;
  assert.deepEqual(await check({ 'runner.py': inClass, 'trainer.py': TRAINER }), ['trainer.py:CP008@5']);
});

test('twin: a class method passing an attribute, its own parameter or a name it binds is not followed (silent)', async () => {
  const method = (body: string) => py`
    from trainer import train_step


    def loss_step(batch, model):
        return model(batch).mean(), {}


    class Runner:
        def run(self, step_fn):
            ${body}
  `;
  for (const body of [
    'train_step(self.compute_loss, self.model, self.optimizer, self.loader, self.args)',
    'train_step(step_fn, self.model, self.optimizer, self.loader, self.args)',
    'loss_step = self.pick()\n            train_step(loss_step, self.model, self.optimizer, self.loader, self.args)',
  ]) {
    assert.deepEqual(await check({ 'runner.py': method(body), 'trainer.py': TRAINER }), [], body);
  }
});

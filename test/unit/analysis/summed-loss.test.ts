// A SUM all-reduce of the gradients of a loss summed over its examples (summed-loss.ts): the result is the global
// batch's sum, the same whatever the number of ranks, so CP001 stays silent. The same code with a mean loss, or with
// a loss the file does not prove to be a sum, is still CP001. Cases written for this test after modded-nanogpt's
// track-3 trainers (`F.cross_entropy(..., reduction="sum")` in the model's forward).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, py, summary } from './helpers';

/** A GPT whose forward returns LOSS_CALL, built at the top of `train` and reduced by hand. */
const TRAIN = py`
  import torch
  import torch.distributed as dist
  import torch.nn as nn
  import torch.nn.functional as F

  class GPT(nn.Module):
      def __init__(self, vocab, dim):
          super().__init__()
          self.embed = nn.Embedding(vocab, dim)
          self.head = nn.Linear(dim, vocab)

      def forward(self, inputs, targets):
          logits = self.head(self.embed(inputs))
          return LOSS_CALL

  def train(loader, steps, micro):
      model = GPT(50304, 768).cuda()
      optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
      for step in range(steps):
          inputs, targets = next(loader)
          for i in range(micro):
              loss = model(inputs[i], targets[i])
              loss.backward()
          for p in model.parameters():
              dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
          optimizer.step()
          model.zero_grad(set_to_none=True)
`;

const train = (loss: string) => TRAIN.replace('LOSS_CALL', loss);

test('summed loss: a SUM all-reduce of a reduction="sum" loss from the model forward is silent', async () => {
  assert.deepEqual(
    summary(await analyze(train('F.cross_entropy(logits.flatten(0, 1), targets.view(-1), reduction="sum")'))),
    [],
  );
  // The pre-1.0 keyword, and per-token losses summed afterwards, are the same sum.
  assert.deepEqual(summary(await analyze(train('F.cross_entropy(logits, targets, size_average=False)'))), []);
  assert.deepEqual(summary(await analyze(train("F.cross_entropy(logits, targets, reduction='none').sum()"))), []);
});

test('summed loss: the same reduction of a mean loss, or of a sum divided by a count, is still CP001', async () => {
  assert.deepEqual(summary(await analyze(train('F.cross_entropy(logits.flatten(0, 1), targets.view(-1))'))), [
    'CP001@25',
  ]);
  assert.deepEqual(summary(await analyze(train("F.cross_entropy(logits, targets, reduction='none').mean()"))), [
    'CP001@25',
  ]);
  assert.deepEqual(
    summary(await analyze(train('F.cross_entropy(logits, targets, reduction="sum") / targets.numel()'))),
    ['CP001@25'],
  );
  assert.deepEqual(summary(await analyze(train('F.cross_entropy(logits, targets, reduction=mode)'))), ['CP001@25']);
});

/** A trainer whose criterion is a loss module held by the object. */
const TRAINER = py`
  import torch.distributed as dist
  import torch.nn as nn

  class Trainer:
      def __init__(self, model, optimizer):
          self.model = model
          self.optimizer = optimizer
          self.criterion = CRITERION

      def step(self, batch, labels):
          loss = self.criterion(self.model(batch), labels)
          loss.backward()
          for p in self.model.parameters():
              dist.all_reduce(p.grad)
          self.optimizer.step()
`;

test('summed loss: a loss module built with reduction="sum" and held by the object is read through self', async () => {
  assert.deepEqual(summary(await analyze(TRAINER.replace('CRITERION', "nn.CrossEntropyLoss(reduction='sum')"))), []);
  assert.deepEqual(summary(await analyze(TRAINER.replace('CRITERION', 'nn.CrossEntropyLoss()'))), ['CP001@14']);
});

test('summed loss: a loss that is a sum on one branch only is not proven, so CP001 stays', async () => {
  const text = train('F.cross_entropy(logits, targets)').replace(
    '            loss = model(inputs[i], targets[i])\n',
    [
      '            if i % 2:',
      '                loss = model(inputs[i], targets[i])',
      '            else:',
      "                loss = F.cross_entropy(model.head(inputs[i]), targets[i], reduction='sum')",
      '',
    ].join('\n'),
  );
  assert.deepEqual(summary(await analyze(text)), ['CP001@28']);
});

/**
 * A file over the size above which only relevant top-level statements are parsed (select.ts), with the model built
 * and trained at the top level, as in modded-nanogpt's records.
 */
function longScript(loss: string): string {
  const filler = Array.from(
    { length: 260 },
    (_, i) => `class Block${i}(nn.Module):\n    def forward(self, x):\n        return x * ${i} + self.bias${i}\n`,
  ).join('\n');
  return (
    py`
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    import torch.nn.functional as F

    class GPT(nn.Module):
        def forward(self, inputs, targets):
            return LOSS

  `.replace('LOSS', loss) +
    filler +
    py`

    model = GPT().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(100):
        inputs, targets = next(loader)
        loss = model(inputs, targets)
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
        optimizer.step()
  `
  );
}

test('summed loss: a long script that builds the model at the top level keeps the model for the proof', async () => {
  const summed = longScript('F.cross_entropy(self.head(inputs), targets, reduction="sum")');
  assert.ok(summed.length > 20_000, `${summed.length} characters`);
  assert.deepEqual(summary(await analyze(summed)), []);
  const mean = longScript('F.cross_entropy(self.head(inputs), targets)');
  assert.equal(summary(await analyze(mean)).length, 1);
  assert.match(summary(await analyze(mean))[0], /^CP001@/);
});

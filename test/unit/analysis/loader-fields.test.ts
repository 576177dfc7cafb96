// The mask of a loop's batch proven through a loader built in another file (contracts/loader-fields.ts): the trainer
// iterates the loader its constructor was given, every construction of the trainer in the program passes a loader
// that a strategy's helper builds (`strategy.setup_dataloader(dataset, ..., dataset.collate_fn)` returning a
// `StatefulDataLoader(..., collate_fn=collate_fn)`, the strategy made by a factory function), and the dataset's
// collate method zero-pads per-sample-length masks. With the splatted rank-summed count (engine-window-program.ts)
// the engine-window hint then holds. Correct twins stay silent: masks padded with ones, a second construction whose
// loader is not proven, masks stacked without padding.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Program } from '../../../src/analysis/index';
import { parser, py, summary } from './helpers';

const LOSS_UTILS = py`
  import torch.distributed as dist


  def batch_info(loss_mask):
      n = loss_mask.sum().float()
      dist.all_reduce(n)
      return {"n_tokens": n, "dp_size": dist.get_world_size()}
`;

const LOSS = py`
  import torch.nn as nn


  class TokenLoss(nn.Module):
      def forward(self, logps, loss_mask, n_tokens=None, dp_size=1):
          return (-logps * loss_mask).sum() / n_tokens * dp_size
`;

const TRAINER = py`
  from pkg.loss import TokenLoss
  from pkg.loss_utils import batch_info


  class Trainer:
      def __init__(self, model, strategy, train_dataloader):
          self.model = model
          self.strategy = strategy
          self.train_dataloader = train_dataloader
          self.loss_fn = TokenLoss()

      def fit(self):
          for step, (inputs, loss_masks) in enumerate(self.train_dataloader):
              keep = loss_masks[:, 1:]
              loss = self.loss_fn(self.model(inputs), keep, **batch_info(keep))
              self.strategy.backward(loss, self.model)
              if step % self.strategy.accumulated_gradient == 0:
                  print(loss.item())
`;

const STRATEGY = py`
  from torchdata.stateful_dataloader import StatefulDataLoader


  class Strategy:
      def __init__(self, seed):
          self.seed = seed
          self.accumulated_gradient = 4

      def setup_dataloader(self, dataset, batch_size, pin_memory=False, shuffle=True, collate_fn=None):
          return StatefulDataLoader(dataset, batch_size=batch_size, shuffle=shuffle, collate_fn=collate_fn)


  def get_strategy(args):
      return Strategy(seed=args.seed)
`;

function dataset(masks: string): string {
  return py`
    import torch
    from torch.nn.utils.rnn import pad_sequence


    class TokenDataset(torch.utils.data.Dataset):
        def __init__(self, rows):
            self.rows = rows

        def __getitem__(self, i):
            return self.rows[i]

        def collate_fn(self, items):
            ids = [torch.tensor(x) for x in items]
            masks = [torch.ones(len(x)) for x in items]
            return pad_sequence(ids, batch_first=True), ${masks}
  `;
}

const CLI = py`
  from pkg.strategy import get_strategy
  from pkg.data import TokenDataset
  from pkg.trainer import Trainer


  def train(args, model):
      strategy = get_strategy(args)
      train_dataset = TokenDataset(args.rows)
      train_dataloader = strategy.setup_dataloader(train_dataset, 8, True, True, train_dataset.collate_fn)
      trainer = Trainer(model, strategy, train_dataloader)
      trainer.fit()
`;

async function check(files: Record<string, string>): Promise<string[]> {
  const program = new Program(await parser(), { hints: true });
  const all = {
    'pkg/loss_utils.py': LOSS_UTILS,
    'pkg/loss.py': LOSS,
    'pkg/trainer.py': TRAINER,
    'pkg/strategy.py': STRATEGY,
    'pkg/data.py': dataset('pad_sequence(masks, batch_first=True)'),
    'pkg/cli.py': CLI,
    ...files,
  };
  for (const [path, text] of Object.entries(all)) program.setFile(path, text);
  return [...program.analyzeAll()].flatMap(([path, r]) => summary(r.findings).map((f) => `${path}:${f}`));
}

test('CP003 (hint): the mask is a loader field padded by a collate method given to a helper of another file', async () => {
  assert.deepEqual(await check({}), ['pkg/trainer.py:CP003@16']);
});

test('silent: the collate method pads the masks with ones', async () => {
  const ones = dataset('pad_sequence(masks, batch_first=True, padding_value=1)');
  assert.deepEqual(await check({ 'pkg/data.py': ones }), []);
});

test('silent: the masks are stacked without padding', async () => {
  assert.deepEqual(await check({ 'pkg/data.py': dataset('torch.stack(masks)') }), []);
});

test('silent: another construction of the trainer passes a loader that is not proven', async () => {
  const other = py`
    from pkg.trainer import Trainer


    def evaluate(model, strategy, loader):
        Trainer(model, strategy, loader).fit()
  `;
  assert.deepEqual(await check({ 'pkg/other.py': other }), []);
});

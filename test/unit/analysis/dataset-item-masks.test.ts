// CP003, token weighting with the collate function's masks taken from the dataset's items (dataset-item-masks.ts):
// the dataset class's `__getitem__` returns, in the mask's position, `torch.ones_like(ids)` or a `zeros_like` mask
// set to one on slices whose bounds come from the data (the response after the prompt, OpenRLHF's SFTDataset), and
// the collate method zero-pads them. The correct twins keep a fixed number of positions per sample (a literal slice,
// `torch.ones(1)`), or leave the item's mask unknown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, py, summary } from './helpers';

function program(getLossMask: string): string {
  return TEMPLATE.replace('        BODY', getLossMask);
}

const TEMPLATE = py`
    import torch
    from torch.utils.data import DataLoader, Dataset


    def zero_pad_sequences(sequences, side="left", value=0):
        return torch.stack(sequences)


    class SFTDataset(Dataset):
        def __init__(self, rows, pretrain_mode=False):
            self.rows = rows
            self.pretrain_mode = pretrain_mode

        def __getitem__(self, idx):
            input_ids = self.rows[idx]["ids"]
            loss_mask = self.get_loss_mask(input_ids, idx)
            return input_ids, loss_mask

        def get_loss_mask(self, input_ids, idx):
            BODY

        def collate_fn(self, item_list):
            input_ids = []
            loss_masks = []
            for input_id, loss_mask in item_list:
                input_ids.append(input_id)
                loss_masks.append(loss_mask)
            return zero_pad_sequences(input_ids, "right"), zero_pad_sequences(loss_masks, "right")


    def train(model, rows, optimizer, accumulation_steps):
        dataset = SFTDataset(rows)
        loader = DataLoader(dataset, batch_size=4, collate_fn=dataset.collate_fn)
        for step, (ids, mask) in enumerate(loader):
            token_loss = model(ids)
            loss = (token_loss * mask).sum() / mask.sum()
            (loss / accumulation_steps).backward()
            if (step + 1) % accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
  `;

const indent = (body: string) =>
  body
    .split('\n')
    .map((l) => `        ${l}`)
    .join('\n');

const RESPONSE = indent(
  [
    'if self.pretrain_mode:',
    '    return torch.ones_like(input_ids, dtype=torch.float32)',
    'loss_mask = torch.zeros_like(input_ids, dtype=torch.float32)',
    'prompt_ids_len = self.rows[idx]["prompt_len"]',
    'loss_mask[0, prompt_ids_len - 1 : -1] = 1',
    'return loss_mask',
  ].join('\n'),
);

test('CP003: masks from __getitem__ (ones over the sample, or the response slice), zero-padded by collate', async () => {
  assert.deepEqual(summary(await analyze(program(RESPONSE))), ['CP003@42']);
});

test('silent: a literal slice keeps the same number of positions in every sample', async () => {
  const fixed = RESPONSE.replace('loss_mask[0, prompt_ids_len - 1 : -1] = 1', 'loss_mask[0, 0:4] = 1');
  assert.notEqual(fixed, RESPONSE);
  assert.deepEqual(summary(await analyze(program(fixed))), []);
});

test('silent: one branch returns a mask of one position per sample', async () => {
  const one = RESPONSE.replace('torch.ones_like(input_ids, dtype=torch.float32)', 'torch.ones(1)');
  assert.deepEqual(summary(await analyze(program(one))), []);
});

test('silent: the mask is read from the row, its count unknown', async () => {
  assert.deepEqual(summary(await analyze(program(indent('return self.rows[idx]["mask"]')))), []);
});

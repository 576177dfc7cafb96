// CP003, token weighting with the count's mask made by the loader's collate function (collate-masks.ts): each
// sample's mask is one over its own positions and the collate function pads the masks with zeros to the longest
// sample, so the batch's count is the sum of its samples' lengths and changes from batch to batch. The correct
// twins pad with ones, stack masks without padding, keep one position per sample, take the mask from the dataset,
// or count the whole window.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, py, summary } from './helpers';

const PADDED = py`
  import torch
  from torch.nn.utils.rnn import pad_sequence
  from torch.utils.data import DataLoader

  def collate(samples):
      ids = [torch.tensor(s["ids"]) for s in samples]
      masks = [torch.ones(len(s["ids"])) for s in samples]
      return pad_sequence(ids, batch_first=True), pad_sequence(masks, batch_first=True)

  def train(model, dataset, optimizer, accumulation_steps):
      loader = DataLoader(dataset, batch_size=8, collate_fn=collate)
      for step, (ids, mask) in enumerate(loader):
          token_loss = model(ids)
          loss = (token_loss * mask).sum() / mask.sum()
          (loss / accumulation_steps).backward()
          if (step + 1) % accumulation_steps == 0:
              optimizer.step()
              optimizer.zero_grad()
`;

test('CP003: a per-micro-batch token mean whose mask the collate function pads with zeros, divided by K', async () => {
  const findings = await analyze(PADDED);
  assert.deepEqual(summary(findings), ['CP003@15']);
  assert.match(findings[0].message, /accumulation_steps/);
  assert.doesNotMatch(findings[0].message, /\$\{|undefined/);
});

test('CP003: the padded masks appended per sample, and the collate function a method of the dataset class', async () => {
  const method = py`
    import torch
    from torch.nn.utils.rnn import pad_sequence
    from torch.utils.data import DataLoader, Dataset

    class PairDataset(Dataset):
        def collate_fn(self, items):
            ids, masks = [], []
            for input_ids in items:
                ids.append(input_ids)
                masks.append(torch.ones_like(input_ids))
            ids = pad_sequence(ids, batch_first=True, padding_value=0)
            masks = pad_sequence(masks, batch_first=True, padding_value=0)
            return ids, masks

    def train(model, rows, optimizer, gradient_accumulation_steps):
        dataset = PairDataset(rows)
        loader = DataLoader(dataset, collate_fn=dataset.collate_fn)
        for step, (ids, mask) in enumerate(loader):
            mask = mask.float()
            token_loss = model(ids)
            loss = (token_loss * mask).sum() / mask.sum()
            loss = loss / gradient_accumulation_steps
            loss.backward()
            if (step + 1) % gradient_accumulation_steps == 0:
                optimizer.step()
  `;
  assert.deepEqual(summary(await analyze(method)), ['CP003@23']);
});

test('CP003 collate masks: silent where the count is not proven to change, or the window is counted', async () => {
  // Padded with ones: every position of the padded rectangle counts (a fixed-size convention, nothing proven).
  const ones = PADDED.replace(
    'pad_sequence(masks, batch_first=True)',
    'pad_sequence(masks, batch_first=True, padding_value=1)',
  );
  assert.deepEqual(summary(await analyze(ones)), []);
  // Stacked without padding: the samples have one length.
  assert.deepEqual(
    summary(await analyze(PADDED.replace('pad_sequence(masks, batch_first=True)', 'torch.stack(masks)'))),
    [],
  );
  // One position per sample (a classification head): the count is the batch size whatever the lengths.
  assert.deepEqual(summary(await analyze(PADDED.replace('torch.ones(len(s["ids"]))', 'torch.ones(1)'))), []);
  // The mask comes from the dataset: its ones are not in view.
  assert.deepEqual(summary(await analyze(PADDED.replace('torch.ones(len(s["ids"]))', 's["mask"]'))), []);
  // A loader handed in: its collate function is not in view.
  assert.deepEqual(
    summary(
      await analyze(
        PADDED.replace('def train(model, dataset,', 'def train(model, loader,').replace(
          '    loader = DataLoader(dataset, batch_size=8, collate_fn=collate)\n',
          '',
        ),
      ),
    ),
    [],
  );
  // The field read is the padded ids' position, not the mask's: the loop reads the first field as the mask.
  assert.deepEqual(summary(await analyze(PADDED.replace('for step, (ids, mask)', 'for step, (mask, ids)'))), []);
  // Window count: one total over the window's micro-batches, made before them (the fixed form).
  const window = py`
    import torch
    from torch.nn.utils.rnn import pad_sequence
    from torch.utils.data import DataLoader

    def collate(samples):
        masks = [torch.ones(len(s)) for s in samples]
        return pad_sequence(samples, batch_first=True), pad_sequence(masks, batch_first=True)

    def train(model, dataset, optimizer, accumulation_steps):
        loader = DataLoader(dataset, collate_fn=collate)
        window = list(loader)[:accumulation_steps]
        n_tokens = sum(m.sum() for _, m in window)
        for ids, mask in window:
            loss = (model(ids) * mask).sum() / n_tokens
            loss.backward()
        optimizer.step()
  `;
  assert.deepEqual(summary(await analyze(window)), []);
});

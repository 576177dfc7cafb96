// CP002 through a global batch size when the sharded loader is built by a DataLoader subclass of the same file: its
// `__init__` hands a DistributedSampler to `super().__init__`, directly or from a classmethod constructor that
// returns `cls(...)`. The correct twins (a subclass that counts its own length, a classmethod that builds another
// loader, a sampler over another dataset, a sampler passed in by the caller that does not split) stay silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, py, summary } from './helpers';

const SUBCLASS = py`
  import torch
  import torch.distributed as dist
  import torch.nn.functional as F
  from torch.nn.parallel import DistributedDataParallel as DDP
  from torch.utils.data import DataLoader, DistributedSampler


  class ShardedLoader(DataLoader):
      def __init__(self, dataset, *, batch_size, shuffle=True):
          sampler = DistributedSampler(dataset, shuffle=shuffle)
          super().__init__(dataset, batch_size=batch_size, sampler=sampler)

      @classmethod
      def from_loader(cls, loader, *, shuffle=True):
          return cls(loader.dataset, batch_size=loader.batch_size, shuffle=shuffle)


  def train(model, dataset, epochs):
      dist.init_process_group("nccl")
      loader = ShardedLoader(dataset, batch_size=32)
      sample_rate = 1 / len(loader)
      samples_per_step = int(len(dataset) * sample_rate)
      model = DDP(model)
      opt = torch.optim.SGD(model.parameters(), lr=0.1)
      for _ in range(epochs):
          for x, y in loader:
              opt.zero_grad()
              loss = F.cross_entropy(model(x), y, reduction="sum") / samples_per_step
              loss.backward()
              opt.step()
`;

const CLASSMETHOD = SUBCLASS.replace(
  'loader = ShardedLoader(dataset, batch_size=32)',
  'loader = ShardedLoader.from_loader(DataLoader(dataset, batch_size=32))',
).replace('len(dataset) * sample_rate', 'len(loader.dataset) * sample_rate');

test('CP002: the global batch of a DataLoader subclass whose __init__ passes a DistributedSampler to its base', async () => {
  const findings = await analyze(SUBCLASS);
  assert.deepEqual(summary(findings), ['CP002@28']);
  assert.match(findings[0].message, /is the batch of all ranks together/);
});

test('CP002: the same loader built by its classmethod constructor, which returns cls(...)', async () => {
  assert.deepEqual(summary(await analyze(CLASSMETHOD)), ['CP002@28']);
});

test('loader subclasses and classmethods stay silent where the global batch is not proven', async () => {
  // A subclass that counts its own length: len(loader) is no longer the sampler's number of batches.
  const ownLength = SUBCLASS.replace(
    '    @classmethod',
    '    def __len__(self):\n        return 10\n\n    @classmethod',
  );
  assert.deepEqual(summary(await analyze(ownLength)), []);
  // The sampler splits another dataset than the one the loader iterates.
  const otherData = SUBCLASS.replace(
    'DistributedSampler(dataset, shuffle=shuffle)',
    'DistributedSampler(range(10), shuffle=shuffle)',
  );
  assert.deepEqual(summary(await analyze(otherData)), []);
  // The caller passes the sampler, and this one does not split the dataset.
  const passedIn = SUBCLASS.replace(
    'def __init__(self, dataset, *, batch_size, shuffle=True):\n        sampler = DistributedSampler(dataset, shuffle=shuffle)',
    'def __init__(self, dataset, *, batch_size, sampler):',
  ).replace('ShardedLoader(dataset, batch_size=32)', 'ShardedLoader(dataset, batch_size=32, sampler=None)');
  assert.deepEqual(summary(await analyze(passedIn)), []);
  // The subclass splits among the replicas its caller names, and this caller names one (an evaluation loader).
  const oneReplica = SUBCLASS.replace(
    'def __init__(self, dataset, *, batch_size, shuffle=True):\n        sampler = DistributedSampler(dataset, shuffle=shuffle)',
    'def __init__(self, dataset, *, batch_size, num_replicas, shuffle=True):\n        sampler = DistributedSampler(dataset, num_replicas=num_replicas, shuffle=shuffle)',
  ).replace('ShardedLoader(dataset, batch_size=32)', 'ShardedLoader(dataset, batch_size=32, num_replicas=1)');
  assert.notEqual(oneReplica, SUBCLASS);
  assert.deepEqual(summary(await analyze(oneReplica)), []);
  // The same subclass told the world size splits among every rank.
  const allReplicas = oneReplica.replace('num_replicas=1)', 'num_replicas=dist.get_world_size())');
  assert.deepEqual(summary(await analyze(allReplicas)), ['CP002@28']);
  // A static method (not a classmethod) that returns a plain loader over the whole dataset.
  const notClassmethod = CLASSMETHOD.replace(
    '    @classmethod\n    def from_loader(cls, loader, *, shuffle=True):\n        return cls(',
    '    @staticmethod\n    def from_loader(loader, *, shuffle=True):\n        return DataLoader(',
  );
  assert.deepEqual(summary(await analyze(notClassmethod)), []);
  // The classmethod rebinds cls before building: what it builds is not proven to be this class.
  const rebound = CLASSMETHOD.replace('        return cls(', '        cls = DataLoader\n        return cls(');
  assert.deepEqual(summary(await analyze(rebound)), []);
  // Gradients summed over the ranks (no DDP average): dividing by the global batch is the mean.
  const summed = SUBCLASS.replace('    model = DDP(model)\n', '').replace(
    '            loss.backward()\n',
    '            loss.backward()\n            for p in model.parameters():\n                dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)\n',
  );
  assert.deepEqual(summary(await analyze(summed)), []);
});

// The loader reaches the ratio as a parameter of a function nested in the training function: every call of that
// function is in view, so the loader is what each call passes.
const NESTED = py`
  import torch
  import torch.distributed as dist
  import torch.nn.functional as F
  from torch.nn.parallel import DistributedDataParallel as DDP
  from torch.utils.data import DataLoader, DistributedSampler


  def train(model, train_set, extra_set, epochs):
      dist.init_process_group("nccl")
      model = DDP(model)
      opt = torch.optim.SGD(model.parameters(), lr=0.1)

      def run_epoch(loader, dataset):
          samples_per_step = len(dataset) // len(loader)
          for x, y in loader:
              opt.zero_grad()
              loss = F.cross_entropy(model(x), y, reduction="sum") / samples_per_step
              loss.backward()
              opt.step()

      first = DataLoader(train_set, batch_size=32, sampler=DistributedSampler(train_set))
      for _ in range(epochs):
          run_epoch(first, train_set)
      run_epoch(DataLoader(extra_set, batch_size=32, sampler=DistributedSampler(extra_set)), extra_set)
`;

test('CP002: a nested function whose every call passes a sharded loader and its own dataset', async () => {
  const findings = await analyze(NESTED);
  assert.deepEqual(summary(findings), ['CP002@17']);
  const viaLoaderDataset = NESTED.replace('len(dataset) // len(loader)', 'len(loader.dataset) // len(loader)');
  assert.deepEqual(summary(await analyze(viaLoaderDataset)), ['CP002@17']);
});

test('a loader parameter stays unproven where one call, or a call out of view, may pass another loader', async () => {
  // One call passes a loader over the whole dataset: that call's ratio is the rank's own batch.
  const oneUnsplit = NESTED.replace(
    'DataLoader(extra_set, batch_size=32, sampler=DistributedSampler(extra_set))',
    'DataLoader(extra_set, batch_size=32, shuffle=True)',
  );
  assert.deepEqual(summary(await analyze(oneUnsplit)), []);
  // One call pairs a loader with another dataset than the one it draws from.
  const mismatched = NESTED.replace(
    'sampler=DistributedSampler(extra_set)), extra_set)',
    'sampler=DistributedSampler(extra_set)), train_set)',
  );
  assert.deepEqual(summary(await analyze(mismatched)), []);
  // The function escapes (handed to another function), so its calls are not all in view.
  const escapes = NESTED.replace(
    '        run_epoch(first, train_set)',
    '        run_epoch(first, train_set)\n    schedule(run_epoch)',
  );
  assert.deepEqual(summary(await analyze(escapes)), []);
  // A top-level function: other modules may call it with any loader.
  const topLevel = py`
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader, DistributedSampler


    def run_epoch(model, opt, loader, dataset):
        samples_per_step = len(dataset) // len(loader)
        for x, y in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y, reduction="sum") / samples_per_step
            loss.backward()
            opt.step()


    def main(model, opt, train_set):
        model = DDP(model)
        run_epoch(model, opt, DataLoader(train_set, sampler=DistributedSampler(train_set)), train_set)
  `;
  assert.deepEqual(summary(await analyze(topLevel)), []);
});

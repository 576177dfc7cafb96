// CP002 through a global batch size: a dataset's length over the number of steps of a loader whose sampler splits
// the dataset among the ranks is the batch of all ranks together, so a loss divided by it and then averaged by DDP
// is divided by the world size twice. The correct twins (the gradients summed instead of averaged, a loader that
// does not split the dataset, a loader the code does not build, a sampler over another dataset) stay silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, py, summary } from './helpers';

const DDP_GLOBAL_BATCH = py`
  import torch
  import torch.distributed as dist
  import torch.nn.functional as F
  from torch.nn.parallel import DistributedDataParallel as DDP
  from torch.utils.data import DataLoader, DistributedSampler


  def train(model, dataset, epochs):
      dist.init_process_group("nccl")
      sampler = DistributedSampler(dataset)
      loader = DataLoader(dataset, batch_size=32, sampler=sampler)
      samples_per_step = len(loader.dataset) // len(loader)
      model = DDP(model)
      opt = torch.optim.SGD(model.parameters(), lr=0.1)
      for _ in range(epochs):
          for x, y in loader:
              opt.zero_grad()
              loss = F.cross_entropy(model(x), y, reduction="sum") / samples_per_step
              loss.backward()
              opt.step()
`;

test('CP002: a loss divided by len(dataset) / len(loader) of a DistributedSampler loader, then averaged by DDP', async () => {
  const findings = await analyze(DDP_GLOBAL_BATCH);
  assert.deepEqual(summary(findings), ['CP002@18']);
  assert.match(findings[0].message, /DDP already averages/);
  assert.match(
    findings[0].message,
    /`samples_per_step` \(`len\(loader.dataset\) \/\/ len\(loader\)`\) is the batch of all ranks/,
  );
  assert.match(findings[0].message, /1\/N \(world size\) of the configured one/);
});

test('CP002: the same global batch written as the dataset length times a sample rate of 1 / len(loader)', async () => {
  const rate = DDP_GLOBAL_BATCH.replace(
    'samples_per_step = len(loader.dataset) // len(loader)',
    'sample_rate = 1 / len(loader)\n    samples_per_step = int(len(dataset) * sample_rate)',
  );
  assert.deepEqual(summary(await analyze(rate)), ['CP002@19']);
  // The world size passed to the sampler explicitly splits the dataset the same way.
  const explicit = rate.replace(
    'DistributedSampler(dataset)',
    'DistributedSampler(dataset, num_replicas=dist.get_world_size())',
  );
  assert.deepEqual(summary(await analyze(explicit)), ['CP002@19']);
});

test('CP002: a loader and its sampler kept on self and read in another method', async () => {
  const code = py`
    import torch
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel
    from torch.utils.data import DataLoader
    from torch.utils.data.distributed import DistributedSampler


    class Runner:
        def __init__(self, model, dataset):
            self.sampler = DistributedSampler(dataset, shuffle=True)
            self.loader = DataLoader(dataset, batch_size=16, sampler=self.sampler)
            self.model = DistributedDataParallel(model)
            self.opt = torch.optim.AdamW(self.model.parameters())

        def epoch(self):
            batch_over_ranks = len(self.loader.dataset) / len(self.loader)
            for x, y in self.loader:
                loss = F.mse_loss(self.model(x), y, reduction="sum") / batch_over_ranks
                loss.backward()
                self.opt.step()
                self.opt.zero_grad()
  `;
  assert.deepEqual(summary(await analyze(code)), ['CP002@18']);
});

test('the global batch stays silent where it is right or not proven', async () => {
  // Gradients summed over the ranks and never divided by the world size: dividing by the global batch is the mean.
  const summed = py`
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, DistributedSampler


    def train(model, dataset, epochs):
        dist.init_process_group("nccl")
        loader = DataLoader(dataset, batch_size=32, sampler=DistributedSampler(dataset))
        samples_per_step = len(loader.dataset) // len(loader)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(epochs):
            for x, y in loader:
                opt.zero_grad()
                loss = F.cross_entropy(model(x), y, reduction="sum") / samples_per_step
                loss.backward()
                for p in model.parameters():
                    dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
                opt.step()
  `;
  assert.deepEqual(summary(await analyze(summed)), []);
  // Every rank iterates the whole dataset: the ratio is the rank's own batch.
  const unsplit = DDP_GLOBAL_BATCH.replace('sampler=sampler', 'shuffle=True');
  assert.deepEqual(summary(await analyze(unsplit)), []);
  // A loader handed in: how it samples is not in view.
  const handedIn = DDP_GLOBAL_BATCH.replace(
    'def train(model, dataset, epochs)',
    'def train(model, dataset, epochs, loader)',
  ).replace('    loader = DataLoader(dataset, batch_size=32, sampler=sampler)\n', '');
  assert.deepEqual(summary(await analyze(handedIn)), []);
  // The sampler splits another dataset than the one whose length is taken.
  const other = DDP_GLOBAL_BATCH.replace('DistributedSampler(dataset)', 'DistributedSampler(train_subset)').replace(
    'len(loader.dataset)',
    'len(dataset)',
  );
  assert.deepEqual(summary(await analyze(other)), []);
  // A sampler told to split among one replica (an evaluation loader) leaves the ratio the rank's own batch.
  const oneReplica = DDP_GLOBAL_BATCH.replace(
    'DistributedSampler(dataset)',
    'DistributedSampler(dataset, num_replicas=1, rank=0)',
  );
  assert.deepEqual(summary(await analyze(oneReplica)), []);
  // A loader built twice in different ways is not proven to split the dataset.
  const twice = DDP_GLOBAL_BATCH.replace(
    '    samples_per_step',
    '    if epochs == 0:\n        loader = DataLoader(dataset, batch_size=32)\n    samples_per_step',
  );
  assert.deepEqual(summary(await analyze(twice)), []);
});

test('a batch rescaled in place by the world size (the shape of opacus 95fdb35) is not read as its first value', async () => {
  const rescaled = DDP_GLOBAL_BATCH.replace(
    '    model = DDP(model)\n',
    '    if dist.is_initialized():\n        samples_per_step //= dist.get_world_size()\n    model = DDP(model)\n',
  );
  assert.notEqual(rescaled, DDP_GLOBAL_BATCH);
  assert.deepEqual(summary(await analyze(rescaled)), []);
});

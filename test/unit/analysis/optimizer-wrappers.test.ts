// An optimizer wrapper that divides each gradient by a batch size it is given, and whose distributed subclass sums
// the gradients over the ranks and divides them by the world size (opacus' DPOptimizer and DistributedDPOptimizer).
// Given the batch of all ranks (a dataset's length over the steps of a loader with a DistributedSampler), the
// gradients are divided by the world size twice: CP002 at the batch size, through the bases and the imports of
// other files. Correct twins stay silent: the batch divided by the world size first (opacus' fix), a loader that
// does not split the dataset, a subclass that only sums, a sum over another group, and any other rescaling.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Program, type AnalysisResult } from '../../../src/analysis/index';
import { parser, py, summary } from './helpers';

const BASE = py`
  import torch
  from torch.optim import Optimizer


  class PrivateOptimizer(Optimizer):
      def __init__(self, optimizer, *, noise_multiplier, expected_batch_size, loss_reduction="mean"):
          self.original_optimizer = optimizer
          self.noise_multiplier = noise_multiplier
          self.expected_batch_size = expected_batch_size
          self.loss_reduction = loss_reduction
          self.skip_next = False
          self.step_hook = None

      @property
      def params(self):
          return [p for group in self.original_optimizer.param_groups for p in group["params"]]

      @property
      def accumulated_iterations(self):
          return max(len(p.grad_sample) for p in self.params)

      def add_noise(self):
          for p in self.params:
              noise = torch.randn_like(p.summed_grad) * self.noise_multiplier
              p.grad = (p.summed_grad + noise).view_as(p.grad)

      def scale_grad(self):
          if self.loss_reduction == "mean":
              for p in self.params:
                  p.grad /= self.expected_batch_size * self.accumulated_iterations

      def pre_step(self):
          if self.skip_next:
              return False
          self.add_noise()
          self.scale_grad()
          if self.step_hook:
              self.step_hook(self)
          return True

      def step(self, closure=None):
          if self.pre_step():
              return self.original_optimizer.step(closure)
          return None
`;

const DISTRIBUTED = py`
  import torch
  from .optimizer import PrivateOptimizer


  class DistributedPrivateOptimizer(PrivateOptimizer):
      def __init__(self, optimizer, *, noise_multiplier, expected_batch_size, loss_reduction="mean"):
          super().__init__(
              optimizer,
              noise_multiplier=noise_multiplier,
              expected_batch_size=expected_batch_size,
              loss_reduction=loss_reduction,
          )
          self.world_size = torch.distributed.get_world_size()

      def reduce_gradients(self):
          for p in self.params:
              if not p.requires_grad:
                  continue
              torch.distributed.all_reduce(p.grad, op=torch.distributed.ReduceOp.SUM)
              if self.loss_reduction == "mean":
                  p.grad /= self.world_size

      def step(self, closure=None):
          if self.pre_step():
              self.reduce_gradients()
              return self.original_optimizer.step(closure)
          else:
              return None
`;

const PACKAGE = py`
  from .distributed import DistributedPrivateOptimizer
  from .optimizer import PrivateOptimizer
`;

const TRAIN = py`
  import torch
  import torch.nn.functional as F
  from torch.utils.data import DataLoader, DistributedSampler
  from privacy.optimizers import DistributedPrivateOptimizer


  def train(model, dataset, epochs):
      torch.distributed.init_process_group("nccl")
      loader = DataLoader(dataset, batch_size=64, sampler=DistributedSampler(dataset))
      sample_rate = 1 / len(loader)
      expected_batch_size = int(len(loader.dataset) * sample_rate)
      optimizer = DistributedPrivateOptimizer(
          torch.optim.SGD(model.parameters(), lr=0.1),
          noise_multiplier=1.0,
          expected_batch_size=expected_batch_size,
      )
      for _ in range(epochs):
          for x, y in loader:
              optimizer.zero_grad()
              F.cross_entropy(model(x), y).backward()
              optimizer.step()
`;

interface Files {
  base?: string;
  distributed?: string;
  train?: string;
}

async function check(files: Files = {}): Promise<Map<string, AnalysisResult>> {
  const program = new Program(await parser());
  program.setFile('privacy/optimizers/optimizer.py', files.base ?? BASE);
  program.setFile('privacy/optimizers/distributed.py', files.distributed ?? DISTRIBUTED);
  program.setFile('privacy/optimizers/__init__.py', PACKAGE);
  program.setFile('train.py', files.train ?? TRAIN);
  return program.analyzeAll();
}

function all(results: Map<string, AnalysisResult>): string[] {
  return [...results].flatMap(([path, r]) => summary(r.findings).map((s) => `${path}:${s}`));
}

/** The CP002 findings: a subclass that sums without dividing is judged by CP001 (the twins below), not this rule. */
function doubled(results: Map<string, AnalysisResult>): string[] {
  return all(results).filter((f) => f.includes(':CP002@'));
}

test('CP002: the batch of all ranks given to a wrapper whose subclass sums and divides by the world size again', async () => {
  const results = await check();
  assert.deepEqual(all(results), ['train.py:CP002@11']);
  const finding = results.get('train.py')!.findings[0];
  assert.match(finding.message, /`expected_batch_size` is the batch of all ranks/);
  assert.match(finding.message, /`PrivateOptimizer\.scale_grad`/);
  assert.match(finding.message, /`DistributedPrivateOptimizer\.reduce_gradients`/);
  assert.match(finding.message, /1\/N \(world size\) of the mean/);
  assert.deepEqual(
    finding.related.map((r) => `${r.file ?? 'train.py'}:${r.range.startLine + 1}`),
    [
      'privacy/optimizers/optimizer.py:30',
      'privacy/optimizers/distributed.py:19',
      'privacy/optimizers/distributed.py:21',
    ],
  );
});

test('CP002: the same classes and training loop written in one file', async () => {
  const oneFile = [
    BASE,
    DISTRIBUTED.replace('from .optimizer import PrivateOptimizer\n', ''),
    TRAIN.replace('from privacy.optimizers import DistributedPrivateOptimizer\n', ''),
  ].join('\n\n');
  const program = new Program(await parser());
  program.setFile('train.py', oneFile);
  const results = program.analyzeAll();
  const line = oneFile.split('\n').findIndex((l) => l.includes('expected_batch_size = int(')) + 1;
  assert.deepEqual(all(results), [`train.py:CP002@${line}`]);
});

test('silent where the batch is one rank’s: divided by the world size first (the fix), or a loader that does not split', async () => {
  const fixed = TRAIN.replace(
    '    optimizer = DistributedPrivateOptimizer(',
    '    if torch.distributed.is_initialized():\n        expected_batch_size /= torch.distributed.get_world_size()\n    optimizer = DistributedPrivateOptimizer(',
  );
  assert.notEqual(fixed, TRAIN);
  assert.deepEqual(doubled(await check({ train: fixed })), []);
  const unsplit = TRAIN.replace('sampler=DistributedSampler(dataset)', 'shuffle=True');
  assert.deepEqual(doubled(await check({ train: unsplit })), []);
  const perRank = TRAIN.replace('expected_batch_size=expected_batch_size', 'expected_batch_size=64');
  assert.deepEqual(doubled(await check({ train: perRank })), []);
});

const SUM_ONLY = DISTRIBUTED.replace(
  '            if self.loss_reduction == "mean":\n                p.grad /= self.world_size\n',
  '',
);

test('silent where the wrapper divides once: a subclass that only sums, or the base class alone', async () => {
  assert.notEqual(SUM_ONLY, DISTRIBUTED);
  // The base divides each gradient by the batch given at construction on the same step path: the sum over the ranks
  // divided by the batch of all ranks is the mean, so no finding of any code (CP001 was reported here before).
  assert.deepEqual(all(await check({ distributed: SUM_ONLY })), []);
  const oneFile = [BASE, SUM_ONLY.replace('from .optimizer import PrivateOptimizer\n', '')].join('\n\n');
  const program = new Program(await parser());
  program.setFile('optim.py', oneFile);
  assert.deepEqual(all(program.analyzeAll()), []);
  const base = TRAIN.replace(/DistributedPrivateOptimizer/g, 'PrivateOptimizer');
  assert.deepEqual(doubled(await check({ train: base })), []);
});

test('silent where the path is not proven: another group, another rescaling, other guards, an unknown method', async () => {
  const variants = [
    DISTRIBUTED.replace('op=torch.distributed.ReduceOp.SUM)', 'op=torch.distributed.ReduceOp.SUM, group=self.group)'),
    DISTRIBUTED.replace(
      'p.grad /= self.world_size',
      'p.grad /= self.world_size\n                p.grad *= self.world_size',
    ),
    DISTRIBUTED.replace(
      '            if self.loss_reduction == "mean":\n                p.grad /= self.world_size',
      '            p.grad /= self.world_size',
    ),
    DISTRIBUTED.replace('self.reduce_gradients()', 'self.reduce_gradients()\n            self.compress()'),
    DISTRIBUTED.replace(
      'self.world_size = torch.distributed.get_world_size()',
      'self.world_size = torch.distributed.get_world_size(self.group)',
    ),
  ];
  for (const distributed of variants) {
    assert.notEqual(distributed, DISTRIBUTED);
    assert.deepEqual(doubled(await check({ distributed })), [], distributed);
  }
  // A new gradient computed from the old one's value is a rescaling the rule does not model.
  const rescaled = BASE.replace('(p.summed_grad + noise).view_as(p.grad)', 'p.grad * 0.5 + noise');
  assert.notEqual(rescaled, BASE);
  assert.deepEqual(doubled(await check({ base: rescaled })), []);
  // The update runs whether or not the gradients were divided: nothing is guaranteed on its path.
  const unguarded = BASE.replace(
    '    def pre_step(self):\n        if self.skip_next:\n            return False',
    '    def pre_step(self):\n        if self.skip_next:\n            return True',
  );
  assert.notEqual(unguarded, BASE);
  assert.deepEqual(doubled(await check({ base: unguarded })), []);
});

test('CP001 stands for a subclass that only sums where the step path divides by no constructed batch', async () => {
  // The base divides by a constant, not by a batch given at construction: the sum's N× is proven.
  const constant = BASE.replace('p.grad /= self.expected_batch_size * self.accumulated_iterations', 'p.grad /= 2.0');
  assert.notEqual(constant, BASE);
  assert.deepEqual(all(await check({ base: constant, distributed: SUM_ONLY })), [
    'privacy/optimizers/distributed.py:CP001@19',
  ]);
  // The step never calls the summing method, so the base's division is not on its path.
  const offPath = SUM_ONLY.replace('            self.reduce_gradients()\n', '');
  assert.notEqual(offPath, SUM_ONLY);
  assert.deepEqual(
    all(await check({ distributed: offPath })).filter((f) => f.includes(':CP001@')),
    ['privacy/optimizers/distributed.py:CP001@19'],
  );
});

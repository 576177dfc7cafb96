// The wrapper class chosen by a factory function by its arguments (opacus' `get_optimizer_class(clipping,
// distributed)`), built inside a method that receives the batch and the flag as parameters
// (`PrivacyEngine._prepare_optimizer`): each call of that method from its class is followed with its own values, and
// the factory's choice is decided by the literal flag that call passes. CP002 where the distributed class is chosen
// and the batch is the one of all ranks; silent for the fixed batch, the flag false, a factory that returns a class
// dividing once, and a flag the code does not decide.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Program, type AnalysisResult } from '../../../src/analysis/index';
import { parser, py, summary } from './helpers';

const BASE = py`
  import torch
  from torch.optim import Optimizer


  class PrivateOptimizer(Optimizer):
      def __init__(self, optimizer, *, noise_multiplier, expected_batch_size):
          self.original_optimizer = optimizer
          self.noise_multiplier = noise_multiplier
          self.expected_batch_size = expected_batch_size

      @property
      def params(self):
          return [p for group in self.original_optimizer.param_groups for p in group["params"]]

      def pre_step(self):
          for p in self.params:
              p.grad = p.summed_grad + torch.randn_like(p.summed_grad) * self.noise_multiplier
          for p in self.params:
              p.grad /= self.expected_batch_size
          return True

      def step(self, closure=None):
          if self.pre_step():
              return self.original_optimizer.step(closure)
          return None


  class DistributedPrivateOptimizer(PrivateOptimizer):
      def __init__(self, optimizer, *, noise_multiplier, expected_batch_size):
          super().__init__(optimizer, noise_multiplier=noise_multiplier, expected_batch_size=expected_batch_size)
          self.world_size = torch.distributed.get_world_size()

      def step(self, closure=None):
          if self.pre_step():
              for p in self.params:
                  torch.distributed.all_reduce(p.grad, op=torch.distributed.ReduceOp.SUM)
                  p.grad /= self.world_size
              return self.original_optimizer.step(closure)
          return None
`;

const FACTORY = py`
  from .optimizer import DistributedPrivateOptimizer, PrivateOptimizer


  def optimizer_class(mode: str, distributed: bool):
      if mode == "flat" and distributed is False:
          return PrivateOptimizer
      elif mode == "flat" and distributed is True:
          return DistributedPrivateOptimizer
      raise ValueError(f"unexpected {mode}, {distributed}")
`;

const ENGINE = py`
  import torch
  from torch.utils.data import DataLoader, DistributedSampler
  from privacy.optimizers import optimizer_class


  class Engine:
      def _prepare_optimizer(self, optimizer, *, expected_batch_size, distributed=False, mode="flat"):
          optim_class = optimizer_class(mode=mode, distributed=distributed)
          return optim_class(optimizer, noise_multiplier=1.0, expected_batch_size=expected_batch_size)

      def make_private(self, model, optimizer, dataset):
          loader = DataLoader(dataset, batch_size=64, sampler=DistributedSampler(dataset))
          sample_rate = 1 / len(loader)
          expected_batch_size = int(len(loader.dataset) * sample_rate)
          optimizer = self._prepare_optimizer(
              optimizer,
              expected_batch_size=expected_batch_size,
              distributed=True,
          )
          return model, optimizer, loader
`;

async function check(files: { factory?: string; engine?: string } = {}): Promise<Map<string, AnalysisResult>> {
  const program = new Program(await parser());
  program.setFile('privacy/optimizers/optimizer.py', BASE);
  program.setFile('privacy/optimizers/__init__.py', files.factory ?? FACTORY);
  program.setFile('privacy/engine.py', files.engine ?? ENGINE);
  return program.analyzeAll();
}

function doubled(results: Map<string, AnalysisResult>): string[] {
  return [...results].flatMap(([path, r]) =>
    summary(r.findings)
      .filter((s) => s.startsWith('CP002@'))
      .map((s) => `${path}:${s}`),
  );
}

test('CP002: the class a factory returns for the flag the calling method passes, given the batch of all ranks', async () => {
  const results = await check();
  assert.deepEqual(doubled(results), ['privacy/engine.py:CP002@14']);
  const finding = results.get('privacy/engine.py')!.findings.find((f) => f.code === 'CP002')!;
  assert.match(
    finding.message,
    /`DistributedPrivateOptimizer` \(the class `optimizer_class\(mode=mode, distributed=distributed\)` returns for `mode=flat`, `distributed=true`\)/,
  );
  assert.match(finding.message, /1\/N \(world size\) of the mean/);
});

test('CP002: the flag given by position, or through the default of a second method', async () => {
  const positional = ENGINE.replace(
    'optim_class = optimizer_class(mode=mode, distributed=distributed)',
    'optim_class = optimizer_class(mode, distributed)',
  );
  assert.notEqual(positional, ENGINE);
  assert.deepEqual(doubled(await check({ engine: positional })), ['privacy/engine.py:CP002@14']);
  const viaDefault = ENGINE.replace('distributed=False, mode="flat"', 'distributed=True, mode="flat"').replace(
    '            distributed=True,\n',
    '',
  );
  assert.notEqual(viaDefault, ENGINE);
  assert.deepEqual(doubled(await check({ engine: viaDefault })), ['privacy/engine.py:CP002@14']);
});

test('CP002: the method also keeps the flag on self (`self.distributed = distributed` does not rebind it)', async () => {
  const kept = ENGINE.replace(
    '        optim_class = optimizer_class(',
    '        self.distributed = distributed\n        optim_class = optimizer_class(',
  );
  assert.notEqual(kept, ENGINE);
  assert.deepEqual(doubled(await check({ engine: kept })), ['privacy/engine.py:CP002@15']);
});

test('silent for the fixed batch, the flag false, a factory returning the class that divides once', async () => {
  const fixed = ENGINE.replace(
    '        optimizer = self._prepare_optimizer(',
    '        expected_batch_size /= torch.distributed.get_world_size()\n        optimizer = self._prepare_optimizer(',
  );
  const off = ENGINE.replace('distributed=True,', 'distributed=False,');
  const once = FACTORY.replace('return DistributedPrivateOptimizer', 'return PrivateOptimizer');
  for (const [engine, factory] of [
    [fixed, FACTORY],
    [off, FACTORY],
    [ENGINE, once],
  ]) {
    assert.ok(engine !== ENGINE || factory !== FACTORY);
    assert.deepEqual(doubled(await check({ engine, factory })), [], engine + factory);
  }
});

test('silent where the flag is not decided: a value the code computes, a rebound parameter, an undecided branch', async () => {
  const engines = [
    ENGINE.replace('distributed=True,', 'distributed=torch.distributed.is_initialized(),'),
    ENGINE.replace(
      'def make_private(self, model, optimizer, dataset):',
      'def make_private(self, model, optimizer, dataset, distributed):',
    ).replace('distributed=True,', 'distributed=distributed,'),
    ENGINE.replace(
      '        optim_class = optimizer_class(',
      '        distributed = bool(distributed)\n        optim_class = optimizer_class(',
    ),
  ];
  for (const engine of engines) {
    assert.notEqual(engine, ENGINE);
    assert.deepEqual(doubled(await check({ engine })), [], engine);
  }
  // An earlier branch the arguments do not decide may return first: no class is chosen.
  const undecided = FACTORY.replace(
    '    if mode == "flat" and distributed is False:',
    '    if os.environ.get("PLAIN"):\n        return PrivateOptimizer\n    if mode == "flat" and distributed is False:',
  );
  assert.notEqual(undecided, FACTORY);
  assert.deepEqual(doubled(await check({ factory: undecided })), []);
});

const LOADER = py`
  from torch.utils.data import DataLoader
  from .samplers import DistributedUniformSampler, UniformSampler


  class PrivateLoader(DataLoader):
      def __init__(self, dataset, *, sample_rate, distributed=False):
          self.distributed = distributed
          if distributed:
              batch_sampler = DistributedUniformSampler(total_size=len(dataset), sample_rate=sample_rate)
          else:
              batch_sampler = UniformSampler(num_samples=len(dataset), sample_rate=sample_rate)
          super().__init__(dataset=dataset, batch_sampler=batch_sampler)

      @classmethod
      def from_data_loader(cls, data_loader, *, distributed=False):
          return cls(dataset=data_loader.dataset, sample_rate=1 / len(data_loader), distributed=distributed)
`;

const PATH_ENGINE = py`
  import torch
  from privacy.loader import PrivateLoader
  from privacy.optimizers import optimizer_class


  class Engine:
      def _prepare_optimizer(self, optimizer, *, expected_batch_size, distributed=False, mode="flat"):
          optim_class = optimizer_class(mode=mode, distributed=distributed)
          return optim_class(optimizer, noise_multiplier=1.0, expected_batch_size=expected_batch_size)

      def _prepare_data_loader(self, data_loader, *, poisson_sampling, distributed):
          if poisson_sampling:
              return PrivateLoader.from_data_loader(data_loader, distributed=distributed)
          return data_loader

      def make_private(self, module, optimizer, data_loader, poisson_sampling=True, mode="flat"):
          distributed = isinstance(module, torch.nn.parallel.DistributedDataParallel)
          data_loader = self._prepare_data_loader(
              data_loader, distributed=distributed, poisson_sampling=poisson_sampling
          )
          sample_rate = 1 / len(data_loader)
          expected_batch_size = int(len(data_loader.dataset) * sample_rate)
          optimizer = self._prepare_optimizer(
              optimizer, expected_batch_size=expected_batch_size, distributed=distributed, mode=mode
          )
          return module, optimizer, data_loader
`;

async function checkPath(engine: string, loader = LOADER): Promise<string[]> {
  const program = new Program(await parser());
  program.setFile('privacy/optimizers/optimizer.py', BASE);
  program.setFile('privacy/optimizers/__init__.py', FACTORY);
  program.setFile('privacy/loader.py', loader);
  program.setFile('privacy/engine.py', engine);
  return doubled(program.analyzeAll());
}

test('CP002 on the path where one flag makes the loader split the dataset and the factory choose the distributed class', async () => {
  const program = new Program(await parser());
  program.setFile('privacy/optimizers/optimizer.py', BASE);
  program.setFile('privacy/optimizers/__init__.py', FACTORY);
  program.setFile('privacy/loader.py', LOADER);
  program.setFile('privacy/engine.py', PATH_ENGINE);
  const results = program.analyzeAll();
  assert.deepEqual(doubled(results), ['privacy/engine.py:CP002@22']);
  const finding = results.get('privacy/engine.py')!.findings.find((f) => f.code === 'CP002')!;
  assert.match(finding.message, /^Where `distributed` is true, `expected_batch_size` is the batch of all ranks/);
});

test('silent off that path: the fix, the flag false, another flag for the loader, a loader that always samples the whole dataset', async () => {
  const variants: [string, string][] = [
    [
      PATH_ENGINE.replace(
        '        optimizer = self._prepare_optimizer(',
        '        if distributed:\n            expected_batch_size /= torch.distributed.get_world_size()\n        optimizer = self._prepare_optimizer(',
      ),
      LOADER,
    ],
    [
      PATH_ENGINE.replace('data_loader, distributed=distributed, poisson', 'data_loader, distributed=False, poisson'),
      LOADER,
    ],
    [PATH_ENGINE.replace('poisson_sampling=True', 'poisson_sampling=False'), LOADER],
    [
      PATH_ENGINE.replace(
        'mode="flat"):\n        distributed',
        'mode="flat", sharded=False):\n        distributed',
      ).replace('data_loader, distributed=distributed, poisson', 'data_loader, distributed=sharded, poisson'),
      LOADER,
    ],
    [PATH_ENGINE, LOADER.replace('DistributedUniformSampler(total_size', 'UniformSampler(num_samples')],
  ];
  for (const [engine, loader] of variants) {
    assert.ok(engine !== PATH_ENGINE || loader !== LOADER);
    assert.deepEqual(await checkPath(engine, loader), [], engine + loader);
  }
});

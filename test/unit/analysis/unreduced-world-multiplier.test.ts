// CP003, a world-size multiplier on a path where nothing reduced the gradients: a trainer wraps its module in DDP only
// under some flags, exchanges its sample count only under another condition, and multiplies the gradients by
// world_size / count on every path. The positives need the path conditions joined across a method's return
// expression, a property's wrapper choice and the step's branches (they fail without the rule); the correct twins
// (the fixed shape, DDP on that path, an infeasible flag combination, a count exchanged on every path, a denominator
// helper not in view) stay silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Program } from '../../../src/analysis/index';
import { analyze, parser, py, summary } from './helpers';

interface Shape {
  /** The condition under which `model` is wrapped in DDP. */
  wrap?: string;
  /** The body of `_exchange_counts`, a method that only returns a condition. */
  exchange?: string;
  /** The statements that normalise the gradients, at the step's indentation. */
  normalise?: string;
  /** Where the counts are gathered: under `self._exchange_counts()` by default. */
  gather?: string;
  /** The count helper's body. */
  denominator?: string;
}

function trainer(shape: Shape = {}): string {
  const wrap = shape.wrap ?? 'self.cfg.world_size > 1 and not self.cfg.local_sgd';
  const exchange =
    shape.exchange ??
    'self.cfg.world_size > 1 and (not self.cfg.local_sgd or (self.steps + 1) % self.cfg.sync_every == 0)';
  const normalise = shape.normalise ?? 'self.optimizer.multiply_grads(self.cfg.world_size / float(sample_size))';
  const gather = shape.gather ?? 'if self._exchange_counts():';
  const denominator = shape.denominator ?? 'return sum(sizes)';
  return py`
    import torch
    from torch.nn.parallel import DistributedDataParallel
    from myproject import dist_utils


    def count_denominator(sizes):
        ${denominator}


    class Trainer:
        def __init__(self, cfg, model, optimizer):
            self.cfg = cfg
            self._model = model
            self._wrapped = None
            self.optimizer = optimizer
            self.steps = 0

        @property
        def model(self):
            if self._wrapped is None:
                if ${wrap}:
                    self._wrapped = DistributedDataParallel(self._model)
                else:
                    self._wrapped = self._model
            return self._wrapped

        def _exchange_counts(self):
            return ${exchange}

        def train_step(self, samples):
            self.model.train()
            self.optimizer.zero_grad()
            sizes = []
            for sample in samples:
                loss = self.model(sample).sum()
                loss.backward()
                sizes.append(sample["ntokens"])
            ${gather}
                sizes = list(dist_utils.all_gather_list(sizes))
            sample_size = count_denominator(sizes)
            if sample_size > 0:
                ${normalise}
            self.optimizer.step()
            self.steps += 1
  `;
}

test('CP003: world_size / count on the local-SGD path where neither the gradients nor the count are exchanged', async () => {
  const findings = await analyze(trainer());
  assert.deepEqual(summary(findings), ['CP003@42']);
  const message = findings[0].message;
  assert.match(message, /`self\.model` is the bare module/);
  assert.match(message, /self\.cfg\.local_sgd/);
  assert.match(message, /N× this rank's mean gradient/);
  assert.doesNotMatch(message, /\$\{|undefined/);
  assert.deepEqual(
    findings[0].related.map((r) => r.range.startLine + 1),
    [21],
  );
});

test('CP003: the count exchanged through an in-place all_reduce under the condition, the flag spelled inverted', async () => {
  const findings = await analyze(
    trainer({
      wrap: 'not self.cfg.local_sgd and self.cfg.world_size > 1',
      gather:
        'if self._exchange_counts():\n                sizes = torch.tensor(sizes)\n                torch.distributed.all_reduce(sizes)\n            if False:',
    }),
  );
  assert.deepEqual(summary(findings), ['CP003@45']);
});

test('CP003 unreduced multiplier is silent on the fixed shape (the world size only where the count was exchanged)', async () => {
  const findings = await analyze(
    trainer({
      normalise:
        'if self._exchange_counts():\n                    self.optimizer.multiply_grads(self.cfg.world_size / float(sample_size))\n                else:\n                    self.optimizer.multiply_grads(1 / float(sample_size))',
    }),
  );
  assert.deepEqual(summary(findings), []);
});

test('CP003 unreduced multiplier is silent on the fixed shape with the exchange condition written out', async () => {
  // Only the method's return expression, joined with this guard, shows the guard is the exchange's condition.
  const findings = await analyze(
    trainer({
      normalise:
        'if not self.cfg.local_sgd or (self.steps + 1) % self.cfg.sync_every == 0:\n                    self.optimizer.multiply_grads(self.cfg.world_size / float(sample_size))\n                else:\n                    self.optimizer.multiply_grads(1 / float(sample_size))',
    }),
  );
  assert.deepEqual(summary(findings), []);
});

test('CP003 unreduced multiplier is silent when DDP wraps the module on every multi-rank path', async () => {
  assert.deepEqual(summary(await analyze(trainer({ wrap: 'self.cfg.world_size > 1' }))), []);
});

test('CP003 unreduced multiplier is silent when the flags that keep the count local leave no multi-rank path', async () => {
  // The count is exchanged on every multi-rank path: with local SGD the multiplier undoes the summed count.
  const findings = await analyze(trainer({ exchange: 'self.cfg.world_size > 1' }));
  assert.deepEqual(summary(findings), []);
  const infeasible = await analyze(
    trainer({
      wrap: 'self.cfg.world_size > 1 and not self.cfg.local_sgd',
      exchange: 'self.cfg.world_size > 1 or self.cfg.local_sgd',
    }),
  );
  assert.deepEqual(summary(infeasible), []);
});

test('CP003 unreduced multiplier is silent when the count is exchanged on every path', async () => {
  assert.deepEqual(summary(await analyze(trainer({ gather: 'if True:' }))), []);
});

test('CP003 unreduced multiplier is silent when the denominator helper may involve the world size', async () => {
  const findings = await analyze(trainer({ denominator: 'return sum(sizes) * torch.distributed.get_world_size()' }));
  assert.deepEqual(summary(findings), []);
});

test('CP003 unreduced multiplier is silent when the denominator comes from a call not in view', async () => {
  const findings = await analyze(
    trainer({ gather: 'if self._exchange_counts():', denominator: 'return sum(sizes)' }).replace(
      'sample_size = count_denominator(sizes)',
      'sample_size = self.task.denominator(sizes)',
    ),
  );
  assert.deepEqual(summary(findings), []);
});

// The same trainer across files: the DDP wrapper is the program's own helper and the count goes through a task
// method to the criterion's static `grad_denom`, as in fairseq. Each answer comes from another file's definitions.
const WRAPPER = py`
  from torch.nn.parallel import DistributedDataParallel


  def DistributedTrainerModel(cfg, module):
      return DistributedDataParallel(module, device_ids=[cfg.device_id])
`;

const TASK = py`
  class Task:
      def grad_denom(self, sample_sizes, criterion):
          return criterion.__class__.grad_denom(sample_sizes)


  class Criterion:
      @staticmethod
      def grad_denom(sample_sizes):
          """The gradient denominator of a list of sample sizes."""
          return sum(sample_sizes)
`;

function programTrainer(): string {
  return trainer()
    .replace('from myproject import dist_utils', 'from myproject import dist_utils, wrappers')
    .replace('DistributedDataParallel(self._model)', 'wrappers.DistributedTrainerModel(self.cfg, self._model)')
    .replace('sample_size = count_denominator(sizes)', 'sample_size = self.task.grad_denom(sizes, self.criterion)');
}

async function programFindings(files: Record<string, string>, path: string): Promise<string[]> {
  const program = new Program(await parser());
  for (const [p, text] of Object.entries(files)) program.setFile(p, text);
  return summary(program.analyzeAll().get(path)?.findings ?? []);
}

test('CP003: the wrapper and the count helper in other files of the program (fairseq before 3c8e246)', async () => {
  const files = {
    'myproject/wrappers.py': WRAPPER,
    'myproject/tasks.py': TASK,
    'myproject/trainer.py': programTrainer(),
  };
  assert.deepEqual(await programFindings(files, 'myproject/trainer.py'), ['CP003@42']);
});

test('CP003 unreduced multiplier is silent when a definition of the count helper may scale by the world size', async () => {
  const scaled = TASK.replace(
    'return sum(sample_sizes)',
    'return sum(sample_sizes) * torch.distributed.get_world_size()',
  );
  const files = {
    'myproject/wrappers.py': WRAPPER,
    'myproject/tasks.py': scaled,
    'myproject/trainer.py': programTrainer(),
  };
  assert.deepEqual(await programFindings(files, 'myproject/trainer.py'), []);
  // Without the wrapper's definition nothing says the other branch is data-parallel.
  const noWrapper = { 'myproject/tasks.py': TASK, 'myproject/trainer.py': programTrainer() };
  assert.deepEqual(await programFindings(noWrapper, 'myproject/trainer.py'), []);
});

test('the editor re-judges the trainer when the count helper in another file changes', async () => {
  const program = new Program(await parser());
  program.setFile('myproject/wrappers.py', WRAPPER);
  program.setFile('myproject/tasks.py', TASK);
  program.setFile('myproject/trainer.py', programTrainer());
  program.analyzeAll();
  assert.deepEqual(summary(program.analyzeFile('myproject/trainer.py').findings), ['CP003@42']);
  program.setFile(
    'myproject/tasks.py',
    TASK.replace('return sum(sample_sizes)', 'return all_reduce_sum(sample_sizes)'),
  );
  assert.deepEqual(summary(program.analyzeFile('myproject/trainer.py').findings), []);
});

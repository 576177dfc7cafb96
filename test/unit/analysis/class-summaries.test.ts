// Per-class summaries across files (class-summaries.ts, class-links.ts): an optimizer class reduces over the group
// it was built with, and the engine that builds it is another file. The group denotes what every construction
// site in the program passes, and nothing when they disagree or one cannot be read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Program } from '../../../src/analysis/index';
import { analyzeProgram, parser, py, summary } from './helpers';

/** Sums over `self.dp_process_group` and divides by that group's whole size. */
const OPTIMIZER = py`
  import torch
  import torch.distributed as dist

  class ZeroOptimizer:
      def __init__(self, optimizer, dp_process_group=None, clip=0.0):
          self.optimizer = optimizer
          self.dp_process_group = dp_process_group

      def allreduce_bucket(self, bucket):
          tensor = self.flatten(bucket)
          tensor.div_(dist.get_world_size(group=self.dp_process_group))
          dist.all_reduce(tensor, group=self.dp_process_group)
          for buf, synced in zip(bucket, self.unflatten(tensor, bucket)):
              buf.copy_(synced)

      def reduce_gradients(self):
          grads = [p.grad for p in self.params]
          self.allreduce_bucket(grads)

      def step(self):
          self.reduce_gradients()
          self.optimizer.step()
`;

/** Builds the optimizer over the sequence-data-parallel group (dp × sp ranks, of which dp hold replicas). */
const ENGINE = py`
  from runtime.zero.optimizer import ZeroOptimizer
  from utils import groups

  class Engine:
      def __init__(self, model, optimizer):
          self.seq_data_parallel_group = groups._get_sequence_data_parallel_group()
          self.optimizer = ZeroOptimizer(optimizer, dp_process_group=self.seq_data_parallel_group)
`;

const OPTIMIZER_PATH = 'runtime/zero/optimizer.py';
const DIVIDE_LINE = 11;

test('class summaries: a group given to the constructor in another file decides the divisor of the method', async () => {
  const results = await analyzeProgram({ [OPTIMIZER_PATH]: OPTIMIZER, 'runtime/engine.py': ENGINE });
  const findings = results.get(OPTIMIZER_PATH)!.findings;
  assert.deepEqual(summary(findings), [`CP003@${DIVIDE_LINE}`], findings.map((f) => f.message).join('\n'));
  assert.match(findings[0].message, /dp×sp ranks\), of which dp hold replicas/);
  assert.match(findings[0].message, /effective learning rate is 1\/sp× the configured one/);
  assert.deepEqual(summary(results.get('runtime/engine.py')!.findings), []);
});

test('class summaries: alone, the optimizer file cannot name its group and says nothing', async () => {
  const results = await analyzeProgram({ [OPTIMIZER_PATH]: OPTIMIZER });
  assert.deepEqual(summary(results.get(OPTIMIZER_PATH)!.findings), []);
});

test('class summaries: the data-parallel group, or a divisor that counts the replicas, is clean', async () => {
  const variants: Record<string, string>[] = [
    { 'runtime/engine.py': ENGINE.replace('_get_sequence_data_parallel_group', '_get_data_parallel_group') },
    {
      'runtime/engine.py': ENGINE,
      [OPTIMIZER_PATH]: OPTIMIZER.replace(
        'tensor.div_(dist.get_world_size(group=self.dp_process_group))',
        'tensor.div_(dist.get_world_size(group=self.dp_process_group) / float(groups._get_sequence_parallel_world_size()))',
      ).replace('import torch\n', 'import torch\nfrom utils import groups\n'),
    },
  ];
  for (const files of variants) {
    const results = await analyzeProgram({ [OPTIMIZER_PATH]: OPTIMIZER, ...files });
    assert.deepEqual(
      [...results.values()].flatMap((r) => summary(r.findings)),
      [],
      JSON.stringify(Object.keys(files)),
    );
  }
});

test('class summaries: construction sites that pass nothing, pass their own parameter or hide it say nothing', async () => {
  const other = py`
    from runtime.zero.optimizer import ZeroOptimizer
    from utils import groups

    def build(optimizer):
        return ZeroOptimizer(optimizer, dp_process_group=groups._get_data_parallel_group())
  `;
  const defaulted = py`
    from runtime.zero.optimizer import ZeroOptimizer

    def build(optimizer):
        return ZeroOptimizer(optimizer)
  `;
  const subclass = py`
    from runtime.zero.optimizer import ZeroOptimizer

    class OffloadOptimizer(ZeroOptimizer):
        def __init__(self, optimizer, group):
            super().__init__(optimizer, group)
  `;
  const splat = py`
    from runtime.zero.optimizer import ZeroOptimizer

    def build(optimizer, **kwargs):
        return ZeroOptimizer(optimizer, **kwargs)
  `;
  for (const extra of [defaulted, subclass, splat]) {
    const results = await analyzeProgram({
      [OPTIMIZER_PATH]: OPTIMIZER,
      'runtime/engine.py': ENGINE,
      'runtime/extra.py': extra,
    });
    assert.deepEqual(summary(results.get(OPTIMIZER_PATH)!.findings), [], extra);
  }
  // Two sites that both name their group build two objects: the engine's, over dp × sp ranks, divides by the whole
  // group; the other, over the data-parallel group, is right. Each object is judged with its own group.
  const results = await analyzeProgram({
    [OPTIMIZER_PATH]: OPTIMIZER,
    'runtime/engine.py': ENGINE,
    'runtime/extra.py': other,
  });
  const findings = results.get(OPTIMIZER_PATH)!.findings;
  assert.deepEqual(summary(findings), [`CP003@${DIVIDE_LINE}`]);
  assert.match(findings[0].message, /dp×sp ranks\), of which dp hold replicas/);
  const agreeing = await analyzeProgram({
    [OPTIMIZER_PATH]: OPTIMIZER,
    'runtime/engine.py': ENGINE.replace('_get_sequence_data_parallel_group', '_get_data_parallel_group'),
    'runtime/extra.py': other,
  });
  assert.deepEqual(summary(agreeing.get(OPTIMIZER_PATH)!.findings), []);
});

test('class summaries: a site that may build another class of the same name keeps the sites from judging apart', async () => {
  // `factory.ZeroOptimizer` resolves to no file of the program: it may be this class, built with an unknown group.
  const unresolved = py`
    import factory
    from utils import groups

    def build(optimizer):
        return factory.ZeroOptimizer(optimizer, dp_process_group=groups._get_data_parallel_group())
  `;
  const results = await analyzeProgram({
    [OPTIMIZER_PATH]: OPTIMIZER,
    'runtime/engine.py': ENGINE,
    'runtime/extra.py': unresolved,
  });
  assert.deepEqual(summary(results.get(OPTIMIZER_PATH)!.findings), []);
});

test('class summaries: a constructor that rebinds the parameter stores its own value, not the callers', async () => {
  const rebinding = OPTIMIZER.replace(
    '        self.dp_process_group = dp_process_group',
    '        if clip > 0:\n            dp_process_group = None\n        self.dp_process_group = dp_process_group',
  );
  const results = await analyzeProgram({ [OPTIMIZER_PATH]: rebinding, 'runtime/engine.py': ENGINE });
  assert.deepEqual(summary(results.get(OPTIMIZER_PATH)!.findings), []);
});

test('class summaries: a positional argument binds the parameter at its position', async () => {
  const positional = ENGINE.replace('dp_process_group=self.seq_data_parallel_group', 'self.seq_data_parallel_group');
  const results = await analyzeProgram({ [OPTIMIZER_PATH]: OPTIMIZER, 'runtime/engine.py': positional });
  assert.deepEqual(summary(results.get(OPTIMIZER_PATH)!.findings), [`CP003@${DIVIDE_LINE}`]);
});

test('class summaries: an edit of the file that builds the object re-decides the method', async () => {
  const program = new Program(await parser());
  program.setFile(OPTIMIZER_PATH, OPTIMIZER);
  program.setFile('runtime/engine.py', ENGINE);
  await program.prepareAsync(() => Promise.resolve());
  assert.deepEqual(summary(program.analyzeFile(OPTIMIZER_PATH).findings), [`CP003@${DIVIDE_LINE}`]);
  program.setFile('runtime/engine.py', ENGINE.replace('_get_sequence_data_parallel_group', '_get_data_parallel_group'));
  assert.deepEqual(summary(program.analyzeFile(OPTIMIZER_PATH).findings), []);
});

/** Sums the parameters' gradients over a group whose name says nothing of which ranks it holds. */
const SYNCER = py`
  import torch.distributed as dist

  class GradSyncer:
      def __init__(self, module, process_group):
          self.module = module
          self.process_group = process_group

      def sync(self):
          for p in self.module.parameters():
              dist.all_reduce(p.grad, group=self.process_group)
`;

function builder(group: string): string {
  return py`
    from sync.syncer import GradSyncer
    from megatron.core import parallel_state

    def build(model):
        return GradSyncer(model, parallel_state.${group}())
  `;
}

test('class summaries: the construction sites decide the kind of a group whose name says nothing', async () => {
  const data = await analyzeProgram({
    'sync/syncer.py': SYNCER,
    'train.py': builder('get_data_parallel_group'),
  });
  const findings = data.get('sync/syncer.py')!.findings;
  assert.deepEqual(summary(findings), ['CP001@10'], findings.map((f) => f.message).join('\n'));
  assert.match(findings[0].message, /over the data-parallel group `process_group`/);
  const tensor = await analyzeProgram({
    'sync/syncer.py': SYNCER,
    'train.py': builder('get_tensor_model_parallel_group'),
  });
  assert.deepEqual(summary(tensor.get('sync/syncer.py')!.findings), []);
});

test('class summaries: a group named data-parallel that every site builds over tensor ranks is a model group', async () => {
  const named = SYNCER.replace(/process_group/g, 'dp_group');
  const alone = await analyzeProgram({ 'sync/syncer.py': named });
  assert.deepEqual(summary(alone.get('sync/syncer.py')!.findings), ['CP001@10']);
  const built = await analyzeProgram({
    'sync/syncer.py': named,
    'train.py': builder('get_tensor_model_parallel_group'),
  });
  assert.deepEqual(summary(built.get('sync/syncer.py')!.findings), []);
});

test('class summaries: a class used as a value may be built out of sight, so its sites decide nothing', async () => {
  const registry = py`
    from runtime.zero.optimizer import ZeroOptimizer

    OPTIMIZERS = {"zero": ZeroOptimizer}
  `;
  const passed = py`
    import runtime.zero.optimizer as zero

    def build(factory, optimizer):
        return factory(zero.ZeroOptimizer, optimizer)
  `;
  for (const extra of [registry, passed]) {
    const results = await analyzeProgram({
      [OPTIMIZER_PATH]: OPTIMIZER,
      'runtime/engine.py': ENGINE,
      'runtime/extra.py': extra,
    });
    assert.deepEqual(summary(results.get(OPTIMIZER_PATH)!.findings), [], extra);
  }
});

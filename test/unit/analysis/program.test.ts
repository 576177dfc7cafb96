// The workspace as one program: a summing helper in one file and its callers in others. The call is judged where
// it is made (with the caller's divisions and update), and the helper's own caller-less verdict gives way to it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ModuleIndex, Program } from '../../../src/analysis/index';
import { analyzeProgram, parser, py, summary } from './helpers';

const HELPER = py`
  import torch.distributed as dist

  def reduce_gradients(model, _type='sum'):
      for name, param in model.named_parameters():
          if param.requires_grad:
              dist.all_reduce(param.grad.data)
              if _type == 'avg':
                  param.grad.data /= dist.get_world_size()
`;

const TRAIN = py`
  from pkg.utils.distributed import reduce_gradients

  def train(model, optimizer, loader):
      for x, y in loader:
          loss = model(x, y)
          optimizer.zero_grad()
          loss.backward()
          reduce_gradients(model)
          optimizer.step()
`;

test('a summing helper of another file is judged at the call that uses its default, with the helper as related location', async () => {
  const results = await analyzeProgram({ 'pkg/utils/distributed.py': HELPER, 'tools/train.py': TRAIN });
  assert.deepEqual(summary(results.get('pkg/utils/distributed.py')!.findings), []);
  const findings = results.get('tools/train.py')!.findings;
  assert.deepEqual(summary(findings), ['CP001@8']);
  assert.match(
    findings[0].message,
    /`reduce_gradients` \(pkg\/utils\/distributed\.py:6\) sums the gradients of `model`'s parameters over all ranks/,
  );
  assert.ok(findings[0].related.some((r) => r.file === 'pkg/utils/distributed.py' && r.range.startLine === 5));
  assert.ok(findings[0].related.some((r) => r.file === undefined && /optimizer\.step/.test(r.message)));
});

test('the caller that averages, divides afterwards or passes the averaging flag leaves both files clean', async () => {
  const variants = [
    TRAIN.replace('reduce_gradients(model)', "reduce_gradients(model, _type='avg')"),
    TRAIN.replace(
      'reduce_gradients(model)\n',
      'reduce_gradients(model)\n        for p in model.parameters():\n            p.grad /= dist.get_world_size()\n',
    ),
    TRAIN.replace('loss.backward()', '(loss / dist.get_world_size()).backward()'),
  ];
  for (const train of variants) {
    const results = await analyzeProgram({
      'pkg/utils/distributed.py': HELPER,
      'tools/train.py': `import torch.distributed as dist\n${train}`,
    });
    assert.deepEqual(
      [...results.values()].flatMap((r) => summary(r.findings)),
      [],
      train,
    );
  }
});

test('a helper nobody in the program calls is still judged on its own, at its default', async () => {
  const results = await analyzeProgram({ 'pkg/utils/distributed.py': HELPER, 'tools/other.py': 'print("no call")\n' });
  assert.deepEqual(summary(results.get('pkg/utils/distributed.py')!.findings), ['CP001@6']);
});

test('an edit re-analyses the edited file against the cached summaries of the others', async () => {
  const program = new Program(await parser());
  program.setFile('pkg/utils/distributed.py', HELPER);
  program.setFile('tools/train.py', TRAIN);
  program.analyzeAll();
  program.setFile('tools/train.py', TRAIN.replace('reduce_gradients(model)', "reduce_gradients(model, _type='avg')"));
  assert.deepEqual(summary(program.analyzeFile('tools/train.py').findings), []);
  program.setFile('tools/train.py', TRAIN);
  assert.deepEqual(summary(program.analyzeFile('tools/train.py').findings), ['CP001@8']);
});

test('module names resolve by path suffix, relative imports by folder, and ambiguity resolves to nothing', () => {
  const index = new ModuleIndex();
  for (const p of ['a/pkg/utils/dist.py', 'a/pkg/__init__.py', 'b/other/utils/dist.py', 'a/pkg/train.py']) index.add(p);
  assert.equal(index.resolve('a/pkg/train.py', 'pkg.utils.dist'), 'a/pkg/utils/dist.py');
  assert.equal(index.resolve('a/pkg/train.py', '.utils.dist'), 'a/pkg/utils/dist.py');
  assert.equal(index.resolve('a/pkg/utils/x.py', '..train'), 'a/pkg/train.py');
  assert.equal(index.resolve('a/pkg/train.py', 'pkg'), 'a/pkg/__init__.py');
  // Two files end with utils.dist: the one nearer the importing file wins, and a tie resolves to nothing.
  assert.equal(index.resolve('a/pkg/train.py', 'utils.dist'), 'a/pkg/utils/dist.py');
  assert.equal(index.resolve('c/train.py', 'utils.dist'), undefined);
});

test('findings in test code are hints: shown with the hints option only', async () => {
  const { analyzePython } = await import('../../../src/analysis/index');
  const p = await parser();
  for (const path of [
    'tests/distributed/test_sync.py',
    'pkg/sync_test.py',
    'pkg/testing/_internal/common.py',
    'conftest.py',
  ]) {
    assert.deepEqual(summary(analyzePython(p, HELPER, { path }).findings), [], path);
    assert.deepEqual(summary(analyzePython(p, HELPER, { path, hints: true }).findings), ['CP001@6'], path);
  }
  for (const path of ['pkg/utils/distributed.py', 'contest/train.py', 'latest_model.py'])
    assert.deepEqual(summary(analyzePython(p, HELPER, { path }).findings), ['CP001@6'], path);
});

test('prepareAsync learns the helpers of files nobody opened, so analysing one caller judges the call', async () => {
  const program = new Program(await parser());
  program.setFile('pkg/utils/distributed.py', HELPER);
  let paused = 0;
  await program.prepareAsync(async () => {
    paused++;
  });
  assert.equal(paused, 1);
  program.setFile('tools/train.py', TRAIN);
  assert.deepEqual(summary(program.analyzeFile('tools/train.py').findings), ['CP001@8']);
  // Without the helper's first pass the caller knows nothing of it, and says nothing.
  const fresh = new Program(await parser());
  fresh.setFile('tools/train.py', TRAIN);
  assert.deepEqual(summary(fresh.analyzeFile('tools/train.py').findings), []);
});

// The `check` command end to end (in process): output formats, exit codes, rule selection, corpus mode.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkCommand } from '../../../src/cli/commands/check';
import { UsageError } from '../../../src/cli/command';
import { EXTRA_CORPUS, py, SHARED_CORPUS } from './helpers';
import { needShared } from '../requirements';

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await checkCommand.run(args, { stdout: (t) => (out += `${t}\n`), stderr: (t) => (err += `${t}\n`) });
  return { code, out, err };
}

const dir = mkdtempSync(join(tmpdir(), 'cp-check-'));
const buggy = join(dir, 'train.py');
writeFileSync(
  buggy,
  py`
  import torch.distributed as dist

  def sync(model):
      for p in model.parameters():
          dist.all_reduce(p.grad)
`,
);
const clean = join(dir, 'clean.py');
writeFileSync(clean, 'import torch\nprint(torch.ones(2))\n');
writeFileSync(join(dir, 'ds_config.json'), '{"prescale_gradients": true, "gradient_predivide_factor": 2.0}\n');

test('linter lines path:line:col code message, exit 1 with findings', async () => {
  const r = await run([buggy, '--world-size', '8']);
  assert.equal(r.code, 1);
  assert.match(
    r.out,
    /train\.py:5:9: CP001 `dist\.all_reduce` sums `p\.grad` over all ranks \(the default group\); no division by that group's size follows\. The effective learning rate is 8× the configured one\./,
  );
  assert.match(r.err, /1 finding in 1 file/);
});

test('a clean file exits 0; a folder is searched for Python files and DeepSpeed configs', async () => {
  assert.equal((await run([clean])).code, 0);
  const r = await run([dir, '--json']);
  const items = JSON.parse(r.out) as { file: string; code: string }[];
  assert.deepEqual(items.map((i) => i.code).sort(), ['CP001', 'CP007']);
});

test('--json gives 1-based positions and fixes with edits', async () => {
  const r = await run([buggy, '--json']);
  const [f] = JSON.parse(r.out);
  assert.deepEqual([f.line, f.column, f.code, f.severity], [5, 9, 'CP001', 'error']);
  assert.ok(f.endLine >= f.line && f.endColumn > 0);
  assert.ok(f.fixes.length >= 1);
  assert.deepEqual(Object.keys(f.fixes[0].edits[0]).sort(), ['column', 'endColumn', 'endLine', 'line', 'newText']);
});

test('--sarif is SARIF 2.1.0 with the rule table and results', async () => {
  const r = await run([buggy, '--sarif']);
  const sarif = JSON.parse(r.out);
  assert.equal(sarif.version, '2.1.0');
  const run0 = sarif.runs[0];
  assert.equal(run0.tool.driver.rules.length, 8);
  assert.equal(run0.results[0].ruleId, 'CP001');
  assert.equal(run0.results[0].locations[0].physicalLocation.region.startLine, 5);
  assert.ok(run0.results[0].fixes[0].artifactChanges[0].replacements.length >= 1);
});

test('--rule and --ignore select rules', async () => {
  assert.equal((await run([buggy, '--rule', 'CP002'])).code, 0);
  assert.equal((await run([buggy, '--ignore', 'CP001'])).code, 0);
  assert.equal((await run([buggy, '--rule', 'CP001,CP002'])).code, 1);
});

test('usage errors: no paths, a missing path, an unknown rule, both formats', async () => {
  await assert.rejects(run([]), UsageError);
  await assert.rejects(run([join(dir, 'missing.py')]), /no such file or folder/);
  await assert.rejects(run([buggy, '--rule', 'CP999']), /not a rule code/);
  await assert.rejects(run([buggy, '--json', '--sarif']), /choose one output format, not json and sarif/);
  await assert.rejects(run([buggy, '--world-size', 'eight']), /positive whole number/);
});

test(
  '--corpus prints the confusion table and exits 0 when every label matches',
  { skip: needShared(SHARED_CORPUS, 'the shared corpus') },
  async () => {
    const r = await run(['--corpus', SHARED_CORPUS, '--corpus', EXTRA_CORPUS]);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /label +files +TP +FP +FN +precision +recall/);
    assert.match(r.out, /sum-bug +\d+ +\d+ +0 +0 +1\.00 +1\.00/);
  },
);

test('folders with broken symbolic links and link cycles are walked without failing', async () => {
  const root = mkdtempSync(join(tmpdir(), 'cp-links-'));
  mkdirSync(join(root, 'pkg'));
  writeFileSync(join(root, 'pkg', 'ok.py'), 'x = 1\n');
  symlinkSync(join(root, 'missing'), join(root, 'pkg', 'broken'));
  symlinkSync(root, join(root, 'pkg', 'loop'));
  const r = await run([root]);
  assert.equal(r.code, 0);
  assert.match(r.err, /0 findings in 1 file/);
});

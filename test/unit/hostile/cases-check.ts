// Class 5, "clean" when nothing was checked: `check` on files it cannot fully analyse, in every output format,
// and with a Python that never answers. The answer is never "no findings" with exit 0: the file is named as not
// (fully) analysed and the exit is 1, unless --exit-zero; a path that does not exist is a usage error (2).
import assert from 'node:assert/strict';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertBounded, assertUserError, cli, fakePython, type HostileCase } from './round';

const SUMMED = 'import torch.distributed as dist\nfor p in model.parameters():\n    dist.all_reduce(p.grad)\n';

export const CHECK_CASES: readonly HostileCase[] = [
  {
    id: 'check-missing-path',
    cls: 5,
    input: 'check no/such/train.py',
    expect: 'exit 2, one line naming the path (not "no findings")',
    async run(dir) {
      const r = await cli(['check', join(dir, 'no', 'such', 'train.py')]);
      assertUserError(r, { names: /train\.py/ });
    },
  },
  {
    id: 'check-nul-bytes',
    cls: 5,
    input: 'check a .py that calls all_reduce and holds NUL bytes (CPython refuses such source)',
    expect: 'exit 1: a finding, or the file named as not fully analysed',
    async run(dir) {
      writeFileSync(join(dir, 'train.py'), `${SUMMED}x = 1\u0000\u0000\n`);
      const r = await cli(['check', join(dir, 'train.py')]);
      assertBounded(r);
      assert.equal(r.code, 1, r.stdout + r.stderr);
    },
  },
  {
    id: 'check-json-format-unreadable',
    cls: 5,
    input: 'check --output-format json on a folder with a link to /dev/zero named zero.py',
    expect: 'exit 1; stdout is JSON that lists zero.py as not analysed',
    async run(dir) {
      writeFileSync(join(dir, 'ok.py'), 'x = 1\n');
      symlinkSync('/dev/zero', join(dir, 'zero.py'));
      const r = await cli(['check', dir, '--output-format', 'json']);
      assertBounded(r);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      const parsed: unknown = JSON.parse(r.stdout);
      assert.match(JSON.stringify(parsed), /zero\.py[^}]*notAnalysed|notAnalysed[^}]*zero\.py/);
    },
  },
  {
    id: 'check-sarif-unreadable',
    cls: 5,
    input: 'check --sarif on a folder with an unreadable (device) .py',
    expect: 'exit 1; valid SARIF that names the file as not analysed',
    async run(dir) {
      symlinkSync('/dev/zero', join(dir, 'zero.py'));
      const r = await cli(['check', dir, '--sarif']);
      assertBounded(r);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      const sarif = JSON.parse(r.stdout) as { version: string };
      assert.equal(sarif.version, '2.1.0');
      assert.match(r.stdout, /zero\.py/);
    },
  },
  {
    id: 'check-github-unreadable',
    cls: 5,
    input: 'check --output-format github on a folder with an unreadable .py',
    expect: 'exit 1 and a ::error or ::warning annotation for the file',
    async run(dir) {
      symlinkSync('/dev/zero', join(dir, 'zero.py'));
      const r = await cli(['check', dir, '--output-format', 'github']);
      assertBounded(r);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stdout, /^::(error|warning) [^\n]*zero\.py/m);
    },
  },
  {
    id: 'check-truncated-ds-config',
    cls: 5,
    input: 'check a DeepSpeed ds_config.json cut off in the middle',
    expect: 'exit 1 with the file named (not analysed, or a positioned error), never a clean 0',
    async run(dir) {
      writeFileSync(
        join(dir, 'ds_config.json'),
        '{\n  "train_micro_batch_size_per_gpu": 4,\n  "zero_optimization": {"stage": 2, "reduce_bu',
      );
      const r = await cli(['check', join(dir, 'ds_config.json')]);
      assertBounded(r);
      assert.ok(r.code === 1 || r.code === 2, `exit ${r.code}: ${r.stdout}`);
      assert.match(r.stdout + r.stderr, /ds_config\.json/);
    },
  },
  {
    id: 'check-over-size',
    cls: 5,
    input: 'check a 9 MiB .py that calls all_reduce (over the 8 MiB source limit)',
    expect: 'exit 1, the file named as not analysed with the limit',
    async run(dir) {
      writeFileSync(join(dir, 'big.py'), `${SUMMED}${'# padding\n'.repeat(950_000)}`);
      const r = await cli(['check', join(dir, 'big.py')], { limitMs: 40_000 });
      assertBounded(r);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stdout, /big\.py.*not analysed/);
    },
  },
  {
    id: 'check-unknown-rule',
    cls: 5,
    input: 'check --rule CP999 (a rule that does not exist: nothing would be checked)',
    expect: 'exit 2, one line naming CP999',
    async run(dir) {
      writeFileSync(join(dir, 'train.py'), SUMMED);
      const r = await cli(['check', join(dir, 'train.py'), '--rule', 'CP999']);
      assertUserError(r, { names: /CP999/ });
    },
  },
  {
    id: 'check-python-hangs',
    cls: 5,
    input: 'check a .py with a syntax error while $COLLECTIVE_PROFILER_PYTHON is a script that never exits',
    expect: 'ends within 40 s; exit 1 with the file named as not fully analysed',
    async run(dir) {
      const python = fakePython(dir, 'sleep 300', 'sleep 300');
      writeFileSync(join(dir, 'train.py'), `${SUMMED}def broken(:\n`);
      const r = await cli(['check', join(dir, 'train.py')], {
        env: { COLLECTIVE_PROFILER_PYTHON: python },
        limitMs: 40_000,
      });
      assertBounded(r);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stdout, /train\.py/);
    },
  },
  {
    id: 'check-long-line',
    cls: 5,
    input: 'check a .py whose all_reduce call is followed by one 4 MB line',
    expect: 'bounded (60 s); a finding or the file named as not fully analysed, exit 1',
    async run(dir) {
      writeFileSync(join(dir, 'train.py'), `${SUMMED}x = [${'1,'.repeat(2_000_000)}]\n`);
      const r = await cli(['check', join(dir, 'train.py')], { limitMs: 60_000 });
      assertBounded(r);
      assert.equal(r.code, 1, r.stdout + r.stderr);
    },
  },
  {
    id: 'check-corpus-fifo',
    cls: 5,
    input: 'check --corpus a folder whose only labelled example is a FIFO',
    expect: 'bounded; non-zero exit naming the file',
    async run(dir) {
      const { makeFifo } = await import('../native/files/mounts');
      const why = makeFifo(join(dir, 'case.py'));
      if (why) throw new Error(why);
      const r = await cli(['check', '--corpus', dir], { limitMs: 20_000 });
      assertBounded(r);
      assert.notEqual(r.code, 0, r.stdout);
      assert.match(r.stdout + r.stderr, /case\.py/);
    },
  },
];

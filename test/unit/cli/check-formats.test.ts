// `check` as ruff and flake8 users drive it: GitHub Actions annotations, --output-format with its short forms,
// --exclude globs and --exit-zero.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { checkCommand } from '../../../src/cli/commands/check';
import { UsageError } from '../../../src/cli/command';
import { globMatcher, globToRegExp } from '../../../src/cli/glob';

const BUGGY = [
  'import torch.distributed as dist',
  '',
  'def sync(model):',
  '    for p in model.parameters():',
  '        dist.all_reduce(p.grad)',
  '',
].join('\n');

async function run(args: string[]): Promise<{ code: number; out: string[]; err: string }> {
  const out: string[] = [];
  let err = '';
  const code = await checkCommand.run(args, { stdout: (t) => out.push(...t.split('\n')), stderr: (t) => (err += t) });
  return { code, out: out.filter((l) => l !== ''), err };
}

const root = mkdtempSync(join(tmpdir(), 'cp-check-formats-'));
for (const folder of ['src', 'src/legacy', 'vendor']) mkdirSync(join(root, folder), { recursive: true });
for (const file of ['src/train.py', 'src/legacy/old_train.py', 'vendor/train_copy.py', 'src/comma,name.py'])
  writeFileSync(join(root, file), BUGGY);
const shown = (file: string) => relative(process.cwd(), join(root, file));

test('--output-format github prints one ::error workflow command per finding, with escaped properties', async () => {
  const r = await run([join(root, 'src'), '--output-format', 'github']);
  assert.equal(r.code, 1);
  assert.equal(r.out.length, 3, r.out.join('\n'));
  for (const line of r.out)
    assert.match(
      line,
      /^::error file=[^:]+,line=5,col=9,endLine=5,endColumn=\d+,title=CP001::CP001 `dist\.all_reduce` sums/,
    );
  assert.ok(
    r.out.some((l) => l.startsWith(`::error file=${shown('src/comma%2Cname.py')},`)),
    'a comma in a path is %2C',
  );
});

test('--json and --sarif are short forms of --output-format; two different formats are a usage error', async () => {
  const viaFlag = await run([join(root, 'src/train.py'), '--output-format', 'json']);
  const viaShort = await run([join(root, 'src/train.py'), '--json']);
  assert.deepEqual(viaFlag.out, viaShort.out);
  await assert.rejects(run([join(root, 'src'), '--json', '--output-format', 'sarif']), UsageError);
  await assert.rejects(run([join(root, 'src'), '--output-format', 'xml']), /must be one of text, json, sarif, github/);
});

test('--exclude leaves out folders by name and files by path glob; a file named on the command line is checked', async () => {
  const all = await run([root]);
  assert.equal(all.out.filter((l) => /: CP001 /.test(l)).length, 4);
  const noVendor = await run([root, '--exclude', 'vendor']);
  assert.ok(!noVendor.out.some((l) => l.includes('train_copy.py')));
  assert.equal(noVendor.out.filter((l) => /: CP001 /.test(l)).length, 3);
  const glob = await run([root, '--exclude', `${shown('src')}/**/old_*.py`, '--exclude', 'vendor']);
  assert.deepEqual(
    glob.out.filter((l) => /: CP001 /.test(l)).map((l) => l.split(':')[0]),
    [shown('src/comma,name.py'), shown('src/train.py')],
  );
  const named = await run([join(root, 'vendor/train_copy.py'), '--exclude', 'vendor']);
  assert.equal(named.code, 1, 'named files are always checked, as in ruff');
});

test('--exit-zero exits 0 with findings, which are still printed', async () => {
  const r = await run([join(root, 'src/train.py'), '--exit-zero']);
  assert.equal(r.code, 0);
  assert.match(r.out[0], /train\.py:5:9: CP001 /);
});

test('globs: * stays in a segment, ** crosses folders, a bare name matches any segment', () => {
  assert.ok(globToRegExp('src/*.py').test('src/a.py'));
  assert.ok(!globToRegExp('src/*.py').test('src/x/a.py'));
  assert.ok(globToRegExp('src/**/a.py').test('src/a.py'));
  assert.ok(globToRegExp('src/**/a.py').test('src/x/y/a.py'));
  assert.ok(globMatcher(['build'])('pkg/build/gen.py'));
  assert.ok(!globMatcher(['build'])('pkg/builder/gen.py'));
  assert.ok(globMatcher(['pkg/build'])('pkg/build/gen.py'), 'a folder pattern covers what is below it');
  assert.ok(globMatcher(['test_*.py'])('a/test_x.py'));
});

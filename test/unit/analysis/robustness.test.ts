// Bad input never throws: empty files, syntax errors, huge files, bytes that are not UTF-8, pathological nesting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzePython } from '../../../src/analysis/index';
import { readSource } from '../../../src/cli/check-files';
import { trainingScript } from '../../../bench/training-script';
import { parser, py, summary } from './helpers';

const SUM_BUG = py`
  import torch.distributed as dist

  def sync(model):
      for p in model.parameters():
          dist.all_reduce(p.grad)
`;

test('empty and whitespace-only files give nothing', async () => {
  for (const text of ['', '\n\n', '   \t\n', '# only a comment\n']) {
    const r = analyzePython(await parser(), text);
    assert.deepEqual(r.findings, []);
  }
});

test('a syntax error elsewhere in the file still leaves the finding in the part that parses, and names what it skipped', async () => {
  const text = `${SUM_BUG}\n\ndef broken(:\n    return )\n`;
  const r = analyzePython(await parser(), text);
  assert.deepEqual(summary(r.findings), ['CP001@5']);
  assert.deepEqual(r.notes, [
    'syntax error at line 8: lines 8-9 not analysed; findings come from the rest of the file',
  ]);
  assert.deepEqual(
    r.unanalysed?.map((u) => [u.reason, u.whole, u.line]),
    [['syntax-error', false, 7]],
  );
});

test('garbage text gives no findings and no exception', async () => {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const junk = Array.from({ length: 20_000 }, () => String.fromCharCode(Math.floor(rand() * 0x3000))).join('');
  const r = analyzePython(await parser(), junk);
  assert.deepEqual(r.findings, []);
});

test('pathological nesting is cut off instead of overflowing the stack', async () => {
  const deep = `lr = ${'('.repeat(3000)}1${')'.repeat(3000)}\n${'lr = ' + 'f('.repeat(2000) + '1' + ')'.repeat(2000)}\n${SUM_BUG}`;
  const r = analyzePython(await parser(), deep);
  assert.deepEqual(
    summary(r.findings).map((s) => s.split('@')[0]),
    ['CP001'],
  );
  assert.match(r.notes.join('\n'), /nested too deeply/);
});

test('a 5 MB file is analysed within the bounds (relevant parts only) and never throws', async () => {
  const unit = trainingScript(3000);
  const big = unit.repeat(Math.ceil((5 * 1024 * 1024) / unit.length));
  assert.ok(big.length >= 5 * 1024 * 1024);
  // A generous parse budget: CI machines are slow and shared; the budget itself is tested below.
  const r = analyzePython(await parser(), big, { parseBudgetMs: 120_000 });
  assert.ok(r.findings.length >= 1, `the sum bug of each copy is found (${r.notes.join('; ')})`);
  assert.ok(r.findings.every((f) => f.code === 'CP001'));
});

test('files over the size limit are skipped with a note', async () => {
  const r = analyzePython(await parser(), SUM_BUG, { maxChars: 10 });
  assert.deepEqual(r.findings, []);
  assert.match(r.notes[0], /over the 10 analysed; skipped/);
});

test('bytes that are not UTF-8 are decoded with replacement characters and a note', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-utf8-'));
  const path = join(dir, 'latin1.py');
  writeFileSync(
    path,
    Buffer.concat([Buffer.from('# caf'), Buffer.from([0xe9, 0xff, 0xfe]), Buffer.from(`\n${SUM_BUG}`)]),
  );
  const { text, notes } = readSource(path);
  assert.match(notes[0], /not valid UTF-8/);
  assert.ok(text.includes('\uFFFD'));
  assert.deepEqual(summary(analyzePython(await parser(), text).findings), ['CP001@6']);
});

test('a parse that exceeds its time budget is abandoned with a note, and the next parse starts afresh', async () => {
  const r = analyzePython(await parser(), trainingScript(3000), { parseBudgetMs: -1, splitAboveChars: 1e9 });
  assert.deepEqual(r.findings, []);
  assert.match(r.notes.join('\n'), /parsing took longer than -1 ms/);
  assert.deepEqual(summary(analyzePython(await parser(), SUM_BUG).findings), ['CP001@5']);
});

test('WebAssembly memory refused during a parse: the file is reported as not analysed, never as clean', async () => {
  const real = await parser();
  // The same parser, except that parse() fails the way web-tree-sitter does when WebAssembly memory cannot grow.
  const starved = new Proxy(real, {
    get(target, key, receiver) {
      if (key === 'parse')
        return () => {
          throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded');
        };
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  const r = analyzePython(starved, SUM_BUG);
  assert.deepEqual(r.findings, []);
  assert.equal(r.unanalysed?.[0]?.reason, 'failed');
  assert.match(r.notes.join('\n'), /analysis stopped early: WebAssembly\.Memory/);
  assert.deepEqual(summary(analyzePython(real, SUM_BUG).findings), ['CP001@5']);
});

// The TextMate grammars use Oniguruma regexes; the patterns here are written in the subset JavaScript shares, so
// they are checked with JS regexes against lines from the real fixtures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { needShared } from '../requirements';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const SHARED = join(ROOT, '..', 'shared', 'fixtures-real');
const load = (name: string) => JSON.parse(readFileSync(join(ROOT, 'syntaxes', `${name}.tmLanguage.json`), 'utf8'));
const tests = load('nccl-tests');
const log = load('nccl-log');

function patterns(grammar: unknown): string[] {
  const out: string[] = [];
  const walk = (o: unknown) => {
    if (Array.isArray(o)) o.forEach(walk);
    else if (o && typeof o === 'object')
      for (const [k, v] of Object.entries(o)) {
        if (['match', 'begin', 'end'].includes(k) && typeof v === 'string') out.push(v);
        else walk(v);
      }
  };
  walk(grammar);
  return out;
}

test('every grammar regex compiles', () => {
  for (const p of [...patterns(tests), ...patterns(log)]) assert.doesNotThrow(() => new RegExp(p), p);
});

test('the nccl-log grammar includes the nccl-tests grammar for the tables inside logs', () => {
  assert.ok(log.patterns.some((p: { include?: string }) => p.include === 'source.nccl-tests'));
});

const fixtures = needShared(SHARED, '../shared/fixtures-real');

test('result rows of every real nccl-tests file match the row rule', { skip: fixtures }, () => {
  const row = new RegExp(tests.repository.row.match);
  for (const name of [
    'nccl-tests-a100-8gpu-2024.txt',
    'nccl-tests-h100-2gpu-2026.txt',
    'nccl-tests-gh200-8gpu-2026.txt',
    'nccl-tests-v100-12gpu-2020.txt',
  ]) {
    const lines = readFileSync(join(SHARED, name), 'utf8').split(/\r?\n/);
    const numeric = lines.filter((l) => /^\s+\d+\s+\d+\s+\S+/.test(l));
    assert.ok(numeric.length > 3, name);
    const matched = numeric.filter((l) => row.test(l));
    assert.equal(matched.length, numeric.length, `${name}: ${numeric.find((l) => !row.test(l))}`);
  }
});

test(
  'NCCL INFO and WARN lines match the log rules, and the first line rule recognises logs',
  { skip: fixtures },
  () => {
    const info = new RegExp(log.repository.info.begin);
    const prefix = new RegExp(log.repository.prefix.match);
    const lines = readFileSync(join(SHARED, 'nccl-debug-a100-2gpu-graph-tuning.log'), 'utf8')
      .split(/\r?\n/)
      .filter((l) => / NCCL INFO /.test(l));
    assert.ok(lines.length > 100);
    assert.ok(lines.every((l) => info.test(l) && prefix.test(l)));
    // Ranks writing at once interleave output: an INFO line may start in the middle of a table row.
    const interleaved = lines.filter((l) => /^\s+\d/.test(l));
    assert.ok(interleaved.length > 0 && interleaved.every((l) => (prefix.exec(l)?.[1] ?? '') === 'mew0'));
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const firstLine = new RegExp(pkg.contributes.languages.find((l: { id: string }) => l.id === 'nccl-log').firstLine);
    assert.ok(firstLine.test(lines[0]));
    const testsFirst = new RegExp(
      pkg.contributes.languages.find((l: { id: string }) => l.id === 'nccl-tests').firstLine,
    );
    assert.ok(testsFirst.test(readFileSync(join(SHARED, 'nccl-tests-a100-8gpu-2024.txt'), 'utf8').split('\n')[0]));
  },
);

// Runs every labelled example (the shared corpus and our own extra cases) and checks the code and the line
// exactly; `none` files must give nothing. Prints the confusion table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  confusionTable,
  formatConfusionTable,
  parseCorpusHeader,
  type CorpusOutcome,
} from '../../../src/analysis/index';
import { analyze, EXTRA_CORPUS, pythonFiles, SHARED_CORPUS, summary } from './helpers';
import { needShared } from '../requirements';

async function checkFolder(t: { diagnostic(message: string): void }, dir: string): Promise<CorpusOutcome[]> {
  const outcomes: CorpusOutcome[] = [];
  for (const file of pythonFiles(dir)) {
    const expected = parseCorpusHeader(file.text);
    assert.ok(expected, `${file.name} has no # expect: header`);
    const findings = await analyze(file.text, { worldSize: expected.worldSize });
    outcomes.push({
      file: file.name,
      expected,
      found: findings.map((f) => ({ code: f.code, line: f.range.startLine + 1 })),
    });
    const want = expected.code === 'none' ? [] : [`${expected.code}@${expected.line}`];
    assert.deepEqual(summary(findings), want, `${file.name}: ${findings.map((f) => f.message).join(' | ')}`);
  }
  return outcomes;
}

test(
  'shared corpus: every labelled example gives exactly the expected finding',
  { skip: needShared(SHARED_CORPUS, 'the shared corpus') },
  async (t) => {
    const outcomes = await checkFolder(t, SHARED_CORPUS);
    assert.ok(outcomes.length >= 14, `expected the 14 shared examples, found ${outcomes.length}`);
    t.diagnostic(`\n${formatConfusionTable(confusionTable(outcomes))}`);
  },
);

test('extra corpus: hand-written realistic cases (positives and negatives) all match', async (t) => {
  const outcomes = await checkFolder(t, EXTRA_CORPUS);
  assert.ok(outcomes.length >= 20, 'at least 20 extra cases');
  const labels = new Set(outcomes.map((o) => o.expected.label));
  for (const label of ['sum-bug', 'double-average', 'wrong-divisor', 'average-ok', 'not-gradient'])
    assert.ok(labels.has(label), `extra corpus covers ${label}`);
  t.diagnostic(`\n${formatConfusionTable(confusionTable(outcomes))}`);
});

test('confusion table counts true and false positives per label', () => {
  const rows = confusionTable([
    { file: 'a', expected: { code: 'CP001', label: 'sum-bug', line: 3 }, found: [{ code: 'CP001', line: 3 }] },
    { file: 'b', expected: { code: 'CP001', label: 'sum-bug', line: 3 }, found: [{ code: 'CP001', line: 4 }] },
    { file: 'c', expected: { code: 'none', label: 'average-ok' }, found: [{ code: 'CP002', line: 1 }] },
    { file: 'd', expected: { code: 'CP003', label: 'wrong-divisor', line: 9 }, found: [] },
  ]);
  const byLabel = Object.fromEntries(rows.map((r) => [r.label, r]));
  assert.deepEqual([byLabel['sum-bug'].tp, byLabel['sum-bug'].fp, byLabel['sum-bug'].fn], [1, 1, 1]);
  assert.equal(byLabel['double-average'].fp, 1);
  assert.equal(byLabel['wrong-divisor'].fn, 1);
  assert.equal(byLabel['wrong-divisor'].recall, 0);
  assert.equal(byLabel.all.tp, 1);
});

test('corpus headers: code, label and line are read; files without a header are not labelled', () => {
  assert.deepEqual(parseCorpusHeader('# expect: CP004 (sum-bug)\n# line: 28\nimport jax\n'), {
    code: 'CP004',
    label: 'sum-bug',
    line: 28,
  });
  assert.deepEqual(parseCorpusHeader('# expect: none (not-gradient: no finding)\n# line: none\n'), {
    code: 'none',
    label: 'not-gradient',
    line: undefined,
  });
  assert.equal(parseCorpusHeader('import torch\n'), undefined);
});

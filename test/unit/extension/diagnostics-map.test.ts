import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findingsToDiagnostics, quickFixesAt, toRange, normaliseSeverity, ruleDocsPath, type FindingInput } from '../../../src/extension/glue/diagnostics-map';

const FINDINGS: FindingInput[] = [
  {
    code: 'CP001', severity: 'warning', message: 'gradients are the sum over N× (world size) ranks', line: 14, column: 9, endLine: 14, endColumn: 33,
    related: [{ line: 12, column: 5, message: 'the loop over model.parameters()' }],
    fixes: [
      { title: 'Use ReduceOp.AVG', edits: [{ line: 14, column: 34, endLine: 14, endColumn: 55, newText: 'op=dist.ReduceOp.AVG' }] },
      { title: 'Divide by dist.get_world_size()', edits: [{ line: 15, column: 1, endLine: 15, endColumn: 1, newText: '        p.grad /= dist.get_world_size()\n' }] },
    ],
  },
  { code: 'CP006', severity: 'info', message: 'ReduceOp.AVG on gloo', line: 20, column: 1, endLine: 20, endColumn: 10 },
  { code: 'CP003', severity: 'warning', message: 'divided by the local GPU count', line: 30, column: 5, endLine: 30, endColumn: 20 },
];
const docs = (code: string) => `file:///ext/${ruleDocsPath(code)}`;

test('findings map to 0-based diagnostics with a code that links to the rule docs', () => {
  const [first] = findingsToDiagnostics(FINDINGS, {}, docs);
  assert.deepEqual(first.range, { startLine: 13, startCharacter: 8, endLine: 13, endCharacter: 32 });
  assert.equal(first.severity, 'warning');
  assert.deepEqual(first.code, { value: 'CP001', target: 'file:///ext/docs/rules/CP001.md' });
  assert.equal(first.source, 'Collective Profiler');
  assert.deepEqual(first.related, [{ range: { startLine: 11, startCharacter: 4, endLine: 11, endCharacter: 4 }, message: 'the loop over model.parameters()' }]);
});

test('rules switched off disappear and overridden severities replace the rule\'s own', () => {
  const diagnostics = findingsToDiagnostics(FINDINGS, { CP006: 'off', CP003: 'error', CP001: 'default' }, docs);
  assert.deepEqual(diagnostics.map((d) => [d.code.value, d.severity, d.findingIndex]), [['CP001', 'warning', 0], ['CP003', 'error', 2]]);
});

test('analysis severity words are normalised', () => {
  assert.equal(normaliseSeverity('info'), 'information');
  assert.equal(normaliseSeverity('WARN'), 'warning');
  assert.equal(normaliseSeverity('error'), 'error');
  assert.equal(normaliseSeverity('bogus'), 'warning');
  assert.equal(findingsToDiagnostics(FINDINGS, {}, docs)[1].severity, 'information');
});

test('ranges are clamped: nothing negative and the end never before the start', () => {
  assert.deepEqual(toRange(0, 0), { startLine: 0, startCharacter: 0, endLine: 0, endCharacter: 0 });
  assert.deepEqual(toRange(5, 10, 4, 1), { startLine: 4, startCharacter: 9, endLine: 4, endCharacter: 9 });
});

test('quick fixes are offered where the cursor touches the diagnostic, the first preferred', () => {
  const diagnostics = findingsToDiagnostics(FINDINGS, {}, docs);
  const cursor = { startLine: 13, startCharacter: 20, endLine: 13, endCharacter: 20 };
  const actions = quickFixesAt(FINDINGS, diagnostics, cursor);
  assert.deepEqual(actions.map((a) => [a.title, a.preferred]), [['Use ReduceOp.AVG', true], ['Divide by dist.get_world_size()', false]]);
  assert.deepEqual(actions[1].edits[0].range, { startLine: 14, startCharacter: 0, endLine: 14, endCharacter: 0 });
  assert.equal(actions[0].diagnostic.code.value, 'CP001');
  assert.deepEqual(quickFixesAt(FINDINGS, diagnostics, { startLine: 0, startCharacter: 0, endLine: 0, endCharacter: 0 }), []);
});

test('a disabled rule offers no quick fixes either', () => {
  const diagnostics = findingsToDiagnostics(FINDINGS, { CP001: 'off' }, docs);
  assert.deepEqual(quickFixesAt(FINDINGS, diagnostics, { startLine: 13, startCharacter: 20, endLine: 13, endCharacter: 20 }), []);
});

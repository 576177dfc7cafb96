import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  findingsToDiagnostics,
  quickFixesAt,
  toRange,
  normaliseSeverity,
  ruleDocsPath,
  type FindingInput,
} from '../../../src/extension/glue/diagnostics-map';

const FINDINGS: FindingInput[] = [
  {
    code: 'CP001',
    severity: 'warning',
    message: 'gradients are the sum over N× (world size) ranks',
    range: { startLine: 13, startColumn: 8, endLine: 13, endColumn: 32 },
    related: [
      {
        range: { startLine: 11, startColumn: 4, endLine: 11, endColumn: 4 },
        message: 'the loop over model.parameters()',
      },
    ],
    fixes: [
      {
        title: 'Use ReduceOp.AVG',
        edits: [
          { range: { startLine: 13, startColumn: 33, endLine: 13, endColumn: 54 }, newText: 'op=dist.ReduceOp.AVG' },
        ],
      },
      {
        title: 'Divide by dist.get_world_size()',
        edits: [
          {
            range: { startLine: 14, startColumn: 0, endLine: 14, endColumn: 0 },
            newText: '        p.grad /= dist.get_world_size()\n',
          },
        ],
      },
    ],
  },
  {
    code: 'CP006',
    severity: 'info',
    message: 'ReduceOp.AVG on gloo',
    range: { startLine: 19, startColumn: 0, endLine: 19, endColumn: 9 },
    related: [],
    fixes: [],
  },
  {
    code: 'CP003',
    severity: 'warning',
    message: 'divided by the local GPU count',
    range: { startLine: 29, startColumn: 4, endLine: 29, endColumn: 19 },
    related: [],
    fixes: [],
  },
];
const docs = (code: string) => `file:///ext/${ruleDocsPath(code)}`;

test('findings map to 0-based diagnostics with a code that links to the rule docs', () => {
  const [first] = findingsToDiagnostics(FINDINGS, {}, docs);
  assert.deepEqual(first.range, { startLine: 13, startCharacter: 8, endLine: 13, endCharacter: 32 });
  assert.equal(first.severity, 'warning');
  assert.deepEqual(first.code, { value: 'CP001', target: 'file:///ext/docs/rules/CP001.md' });
  assert.equal(first.source, 'Collective Profiler');
  assert.deepEqual(first.related, [
    {
      range: { startLine: 11, startCharacter: 4, endLine: 11, endCharacter: 4 },
      message: 'the loop over model.parameters()',
    },
  ]);
});

test("rules switched off disappear and overridden severities replace the rule's own", () => {
  const diagnostics = findingsToDiagnostics(FINDINGS, { CP006: 'off', CP003: 'error', CP001: 'default' }, docs);
  assert.deepEqual(
    diagnostics.map((d) => [d.code.value, d.severity, d.findingIndex]),
    [
      ['CP001', 'warning', 0],
      ['CP003', 'error', 2],
    ],
  );
});

test('analysis severity words are normalised', () => {
  assert.equal(normaliseSeverity('info'), 'information');
  assert.equal(normaliseSeverity('WARN'), 'warning');
  assert.equal(normaliseSeverity('error'), 'error');
  assert.equal(normaliseSeverity('bogus'), 'warning');
  assert.equal(findingsToDiagnostics(FINDINGS, {}, docs)[1].severity, 'information');
});

test('ranges are clamped: nothing negative and the end never before the start', () => {
  assert.deepEqual(toRange({ startLine: -1, startColumn: -5, endLine: -1, endColumn: -5 }), {
    startLine: 0,
    startCharacter: 0,
    endLine: 0,
    endCharacter: 0,
  });
  assert.deepEqual(toRange({ startLine: 4, startColumn: 9, endLine: 3, endColumn: 0 }), {
    startLine: 4,
    startCharacter: 9,
    endLine: 4,
    endCharacter: 9,
  });
});

test('quick fixes are offered where the cursor touches the diagnostic, the first preferred', () => {
  const diagnostics = findingsToDiagnostics(FINDINGS, {}, docs);
  const cursor = { startLine: 13, startCharacter: 20, endLine: 13, endCharacter: 20 };
  const actions = quickFixesAt(FINDINGS, diagnostics, cursor);
  assert.deepEqual(
    actions.map((a) => [a.title, a.preferred]),
    [
      ['Use ReduceOp.AVG', true],
      ['Divide by dist.get_world_size()', false],
    ],
  );
  assert.deepEqual(actions[1].edits[0].range, { startLine: 14, startCharacter: 0, endLine: 14, endCharacter: 0 });
  assert.equal(actions[0].diagnostic.code.value, 'CP001');
  assert.deepEqual(
    quickFixesAt(FINDINGS, diagnostics, { startLine: 0, startCharacter: 0, endLine: 0, endCharacter: 0 }),
    [],
  );
});

test('a disabled rule offers no quick fixes either', () => {
  const diagnostics = findingsToDiagnostics(FINDINGS, { CP001: 'off' }, docs);
  assert.deepEqual(
    quickFixesAt(FINDINGS, diagnostics, { startLine: 13, startCharacter: 20, endLine: 13, endCharacter: 20 }),
    [],
  );
});

// The host validates every message a webview sends; these tests pin what gets through and what is rejected.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  validateWebviewMessage,
  validatePanelState,
  isValidationError,
  MAX_STATE_LIST,
  MAX_STRING_LENGTH,
} from '../../src/protocol';

const VALID = [
  { type: 'ready', panel: 'timeline' },
  { type: 'ready', panel: 'charts' },
  { type: 'openSource', file: '/work/train.py', line: 42 },
  { type: 'selectSpan', spanIndex: 0 },
  { type: 'exportTrace' },
  { type: 'log', level: 'warn', message: 'chart failed to draw' },
];

test('every well-formed message passes unchanged', () => {
  for (const message of VALID) assert.deepEqual(validateWebviewMessage(message), message);
});

const REJECTED: [unknown, RegExp][] = [
  [null, /not an object/],
  ['ready', /not an object/],
  [[{ type: 'ready' }], /not an object/],
  [{}, /unknown message type null/],
  [{ type: 'runShell', command: 'rm -rf /' }, /unknown message type "runShell"/],
  [{ type: 'toString' }, /unknown message type/],
  [{ type: '__proto__' }, /unknown message type/],
  [{ type: 'ready' }, /missing field "panel"/],
  [{ type: 'ready', panel: 'terminal' }, /ready.panel must be one of/],
  [{ type: 'openSource', file: '', line: 1 }, /must not be empty/],
  [{ type: 'openSource', file: 'a.py', line: 0 }, /between 1 and/],
  [{ type: 'openSource', file: 'a.py', line: 1.5 }, /must be an integer/],
  [{ type: 'openSource', file: 'a.py', line: '3' }, /must be an integer/],
  [{ type: 'openSource', file: 42, line: 3 }, /must be a string/],
  [{ type: 'openSource', file: 'x'.repeat(MAX_STRING_LENGTH + 1), line: 3 }, /at most/],
  [{ type: 'openSource', file: 'a.py', line: 3, command: 'x' }, /unexpected field "command"/],
  [{ type: 'selectSpan', spanIndex: -1 }, /between 0/],
  // A range's statistics are the panel's own work (issue 18): no message asks the host for them.
  [{ type: 'requestRange', startUs: 0, endUs: 10 }, /unknown message type "requestRange"/],
  [{ type: 'exportTrace', path: '/etc/passwd' }, /unexpected field "path"/],
  [{ type: 'log', level: 'fatal', message: 'x' }, /level must be one of/],
  [{ type: 'log', level: 'info', message: { toString: 1 } }, /must be a string/],
];

test('malformed and unknown messages are rejected with the reason', () => {
  for (const [message, reason] of REJECTED) {
    const result = validateWebviewMessage(message);
    assert.ok(isValidationError(result), `accepted ${JSON.stringify(message)?.slice(0, 80)}`);
    assert.match(result.error, reason);
  }
});

test('arbitrary values never throw and only valid shapes pass (property)', () => {
  let tried = 0;
  fc.assert(
    fc.property(
      fc.oneof(
        fc.anything(),
        fc.record(
          {
            type: fc.constantFrom('ready', 'openSource', 'selectSpan', 'requestRange', 'exportTrace', 'log', 'x'),
            panel: fc.anything(),
            file: fc.anything(),
            line: fc.anything(),
            spanIndex: fc.anything(),
            level: fc.anything(),
            message: fc.anything(),
          },
          { requiredKeys: ['type'] },
        ),
      ),
      (value) => {
        tried++;
        const result = validateWebviewMessage(value);
        if (!isValidationError(result)) {
          assert.ok(
            VALID.some((v) => v.type === result.type),
            'a passing message has a known type',
          );
          assert.equal(
            JSON.stringify(JSON.parse(JSON.stringify(result))),
            JSON.stringify(result),
            'a passing message is plain JSON',
          );
        }
      },
    ),
    { numRuns: 2000 },
  );
  assert.equal(tried, 2000);
});

test('panel state from a reload keeps known fields and drops malformed ones', () => {
  assert.equal(validatePanelState(undefined), undefined);
  assert.equal(validatePanelState({ panel: 'shell' }), undefined);
  assert.deepEqual(
    validatePanelState({
      panel: 'timeline',
      viewStartUs: 3,
      viewEndUs: 'x',
      filter: 'ring',
      source: { uri: 'file:///a.json', label: 'a' },
      selectedSpan: -2,
    }),
    {
      panel: 'timeline',
      source: { uri: 'file:///a.json', label: 'a' },
      viewStartUs: 3,
      viewEndUs: undefined,
      scrollTopPx: undefined,
      filter: 'ring',
      selectedSpan: undefined,
      folded: undefined,
      pinned: undefined,
    },
  );
  const charts = validatePanelState({ panel: 'charts', data: { title: 't' }, tab: 5 });
  assert.deepEqual(charts, { panel: 'charts', data: { title: 't' }, tab: undefined });
});

test('saved folds and pins keep their valid entries; a list that is not one, or is too long, is dropped', () => {
  const state = validatePanelState({
    panel: 'timeline',
    folded: ['node 1', 3, 'x'.repeat(65), 'counters', null],
    pinned: [4, -1, 2.5, '7', 0],
  });
  assert.ok(state?.panel === 'timeline');
  assert.deepEqual(state.folded, ['node 1', 'counters']);
  assert.deepEqual(state.pinned, [4, 0]);
  const odd = validatePanelState({ panel: 'timeline', folded: 'node 1', pinned: { 0: 1 } });
  assert.ok(odd?.panel === 'timeline');
  assert.equal(odd.folded, undefined);
  assert.equal(odd.pinned, undefined);
  const huge = validatePanelState({ panel: 'timeline', pinned: new Array(MAX_STATE_LIST + 1).fill(1) });
  assert.ok(huge?.panel === 'timeline');
  assert.equal(huge.pinned, undefined);
});

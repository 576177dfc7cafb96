// Positioned parsing and schema validation: every error a user can cause points at the right line and column.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ConfigError,
  parseAndValidate,
  parseDocument,
  positionOf,
  validateAgainstSchema,
  MAX_CONFIG_DEPTH,
} from '../../../src/config/positioned';
import { closestMatch, editDistance } from '../../../src/config/did-you-mean';
import { findJsonSyntaxError } from '../../../src/config/json-syntax';

const SCHEMA = {
  type: 'object',
  required: ['gpu', 'nodes'],
  additionalProperties: false,
  properties: {
    gpu: { type: 'string' },
    nodes: { type: 'integer', minimum: 1 },
    gpusPerNode: { type: 'integer', minimum: 1 },
    fabric: { enum: ['nvswitch', 'pcie'] },
    nic: {
      type: 'object',
      additionalProperties: false,
      required: ['gbps'],
      properties: { gbps: { type: 'number', exclusiveMinimum: 0 } },
    },
  },
};

function syntaxError(text: string, fileName: string): ConfigError {
  try {
    parseDocument(text, fileName);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail(`expected ${fileName} to be rejected`);
}

test('schema errors name the key and point at the offending value or key', () => {
  const doc = parseDocument('gpu: H100\nnodes: 2.5\ngpusPerNod: 8\nnic:\n  gbps: -4\nfabric: nvswich\n', 'sys.yaml');
  const issues = validateAgainstSchema(doc, SCHEMA).map((i) => `${i.line}:${i.column} ${i.message}`);
  assert.deepEqual(issues, [
    '2:8 nodes: must be an integer (got 2.5)',
    "3:1 unknown key 'gpusPerNod' (did you mean 'gpusPerNode'?)",
    '5:9 nic.gbps: must be greater than 0 (got -4)',
    "6:9 fabric: must be one of nvswitch, pcie; got 'nvswich' (did you mean 'nvswitch'?)",
  ]);
});

test('a missing key is reported at the mapping that lacks it', () => {
  const doc = parseDocument('gpu: A100\nnodes: 1\nnic:\n  perNode: 8\n', 'sys.yaml');
  const issues = validateAgainstSchema(doc, SCHEMA).map((i) => `${i.line}:${i.column} ${i.message}`);
  assert.deepEqual(issues.sort(), [
    "4:3 missing required key 'gbps' in nic",
    "4:3 nic: unknown key 'perNode' (expected one of: gbps)",
  ]);
});

test('parseAndValidate throws a ConfigError whose toString is file:line:col: message', () => {
  assert.throws(
    () => parseAndValidate('gpu: A100\nnodes: "two"\n', 'box.yaml', SCHEMA),
    (error: unknown) =>
      error instanceof ConfigError && String(error) === "box.yaml:2:8: nodes: must be an integer (got 'two')",
  );
  const { value } = parseAndValidate<{ gpu: string; nodes: number }>('{"gpu": "A100", "nodes": 4}', 'box.json', SCHEMA);
  assert.deepEqual(value, { gpu: 'A100', nodes: 4 });
});

test('JSON is detected by extension or content and checked strictly, with positions', () => {
  assert.equal(parseDocument('{"gpu": "x", "nodes": 1}', 'inline').format, 'json');
  assert.equal(parseDocument('gpu: x', 'inline').format, 'yaml');
  assert.equal(
    String(syntaxError('{\n  "gpu": "x",\n  "nodes": 1,\n}', 'a.json')),
    "a.json:3:13: invalid JSON: trailing comma before '}'",
  );
  assert.equal(
    String(syntaxError('{\n  gpu: "x"\n}', 'a.json')),
    "a.json:2:3: invalid JSON: expected a double-quoted key but found 'g'",
  );
  assert.equal(
    String(syntaxError('{"a": 1} x', 'a.json')),
    "a.json:1:10: invalid JSON: unexpected 'x' after the end of the document",
  );
  assert.equal(
    String(syntaxError('{"a": "b\n"}', 'a.json')),
    'a.json:1:9: invalid JSON: unterminated string (strings cannot span lines)',
  );
  assert.equal(String(syntaxError('', 'a.json')), 'a.json:1:1: invalid JSON: the file is empty');
  // A value JSON.parse accepts must be accepted too.
  for (const ok of ['[]', '{}', '{"a": [1, -2.5e3, true, null, "\\u00e9\\n"]}', ' 3 '])
    assert.equal(findJsonSyntaxError(ok, 8), undefined, ok);
});

test('malformed YAML gets a line and column', () => {
  const error = syntaxError('gpu: H100\nnodes: [1, 2\ngpusPerNode: 8\n', 'bad.yaml');
  assert.match(error.message, /^invalid YAML: /);
  assert.ok(error.line >= 2, `line ${error.line}`);
  assert.equal(
    String(syntaxError('gpu: x\ngpu: y\n', 'dup.yaml')),
    'dup.yaml:2:1: invalid YAML: the key gpu appears more than once in this mapping; keep one',
  );
  assert.match(String(syntaxError('gpu: x\n  nodes: 2\n', 'indent.yaml')), /^indent\.yaml:1:\d+: invalid YAML: /);
});

test('a billion-laughs alias bomb is refused instead of expanded', () => {
  const levels = 'abcdefghi'.split('');
  const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let k = 1; k < levels.length; k++)
    lines.push(
      `${levels[k]}: &${levels[k]} [${Array(9)
        .fill(`*${levels[k - 1]}`)
        .join(',')}]`,
    );
  const error = syntaxError(lines.join('\n'), 'bomb.yaml');
  assert.match(error.message, /too many YAML aliases/);
  // A few ordinary aliases remain allowed.
  assert.deepEqual(parseDocument('base: &b {gbps: 400}\nnic: *b\n', 'ok.yaml').value, {
    base: { gbps: 400 },
    nic: { gbps: 400 },
  });
});

test('huge and deeply nested input is refused with a position, quickly and without crashing', () => {
  const started = Date.now();
  const flow = syntaxError('x: "[[[["\ny: 1\na: ' + '['.repeat(100_000), 'deep.yaml');
  assert.deepEqual(
    [flow.line, flow.column, flow.message],
    [3, 4 + MAX_CONFIG_DEPTH, `nesting deeper than ${MAX_CONFIG_DEPTH} levels`],
  );
  assert.match(syntaxError('- '.repeat(100_000), 'dash.yaml').message, /nesting deeper/);
  assert.match(syntaxError('[ "]", '.repeat(1000), 'quoted.yaml').message, /nesting deeper/);
  assert.match(syntaxError('['.repeat(100_000), 'deep.json').message, /nesting deeper/);
  assert.match(syntaxError(`a: ${'z'.repeat(2 * 1024 * 1024)}`, 'big.yaml').message, /larger than/);
  assert.ok(Date.now() - started < 5000, 'guards must be cheap');
  // Nesting within the limit is fine.
  assert.ok(parseDocument(`a: ${'['.repeat(MAX_CONFIG_DEPTH - 1)}${']'.repeat(MAX_CONFIG_DEPTH - 1)}`, 'ok.yaml'));
});

test('a byte-order mark and CRLF line endings do not shift positions', () => {
  const json = parseDocument('\uFEFF{\r\n  "gpu": "x",\r\n  "nodes": 1.5\r\n}\r\n', 'bom.json');
  assert.deepEqual(
    validateAgainstSchema(json, SCHEMA).map((i) => `${i.line}:${i.column} ${i.message}`),
    ['3:12 nodes: must be an integer (got 1.5)'],
  );
  const yaml = parseDocument('\uFEFFgpu: x\r\nnodes: 1.5\r\n', 'bom.yaml');
  assert.deepEqual(
    validateAgainstSchema(yaml, SCHEMA).map((i) => `${i.line}:${i.column} ${i.message}`),
    ['2:8 nodes: must be an integer (got 1.5)'],
  );
  assert.match(
    String(syntaxError('gpu: x\r\n---\r\nnodes: 1\r\n', 'multi.yaml')),
    /^multi\.yaml:\d+:\d+: invalid YAML: /,
  );
});

test('positionOf maps paths to values and keys, falling back to the nearest ancestor', () => {
  const doc = parseDocument('gpu: H100\nnic:\n  gbps: 400\n  perNode: 8\n', 'p.yaml');
  assert.deepEqual(positionOf(doc, ['nic', 'perNode']), { line: 4, column: 12 });
  assert.deepEqual(positionOf(doc, ['nic', 'perNode'], { key: true }), { line: 4, column: 3 });
  assert.deepEqual(positionOf(doc, ['nic', 'missing']), { line: 3, column: 3 });
  assert.deepEqual(positionOf(doc, []), { line: 1, column: 1 });
});

test('empty and non-mapping documents are reported, not crashed on', () => {
  const issues = validateAgainstSchema(parseDocument('', 'empty.yaml'), SCHEMA);
  assert.equal(issues[0].message, 'must be a mapping of keys (got null)');
  assert.equal(
    validateAgainstSchema(parseDocument('- a\n- b\n', 'list.yaml'), SCHEMA)[0].message,
    'must be a mapping of keys (got ["a","b"])',
  );
});

test('did-you-mean suggests only plausible typos', () => {
  assert.equal(editDistance('kitten', 'sitting'), 3);
  assert.equal(closestMatch('gpusPerNod', ['gpu', 'gpusPerNode', 'nodes']), 'gpusPerNode');
  assert.equal(closestMatch('NVSWITCH', ['nvswitch', 'pcie']), 'nvswitch');
  assert.equal(closestMatch('banana', ['gpu', 'nodes']), undefined);
});

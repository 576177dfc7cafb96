// Valid Python is never reported as a syntax error, even where tree-sitter-python 0.25 misreads it (repair.ts);
// real syntax errors are, and only the statements they are in are left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { analyzePython } from '../../../src/analysis/index';
import { repairKnownGaps } from '../../../src/analysis/repair';
import { parser, parsesCleanly, py, summary } from './helpers';

/** A sum bug at line 5, so each case also shows that the rest of the file is still analysed. */
const SUM_BUG = py`
  import torch.distributed as dist

  def sync(model):
      for p in model.parameters():
          dist.all_reduce(p.grad)
`;

/** Valid Python 3.11 that tree-sitter-python 0.25 parses with an ERROR node (found in real code bases). */
const MISREAD: Record<string, string> = {
  'a starred product in a returned tuple (Megatron-LM cuda_graphs.py)': py`
    def backward(ctx, runner):
        return None, None, *runner.static_grad_inputs, *(None,) * len(runner.params_to_backprop)
  `,
  'a starred empty list on the right of an assignment (torch.distributed.elastic)': py`
    def parse(endpoint):
        host, *rest = endpoint, *[]
        return host, rest
  `,
  'starred brackets, strings and signs in bare tuples': py`
    def g(a, b):
        yield a, *[b]
        x = 1, *"ab", *-b
        for y in a, *[b]:
            pass
        return *{a: b}, *(b,)
  `,
  'a dedented continuation after a dot inside brackets (CPython test_compile.py)': py`
    class T:
        def test(self):
            def f():
                (bar.
            baz)
                y = (a +
            b)
            return f
  `,
};

/** Newer syntax that tree-sitter-python 0.25 reads correctly; kept here so a grammar change cannot regress it. */
const MODERN: Record<string, string> = {
  'match statements':
    'def f(cmd):\n    match cmd:\n        case [x, *rest] if x:\n            return rest\n        case {"a": 1, **kw}:\n            return kw\n        case Point(x=0) | None:\n            pass\n        case _:\n            pass\n',
  'except*': 'try:\n    pass\nexcept* (TypeError, KeyError) as eg:\n    pass\n',
  'PEP 646 star annotations': 'def f(*args: *Ts) -> tuple[*Ts]:\n    pass\ny = a[*b]\n',
  'walrus in comprehensions': 'ys = [y for x in data if (y := f(x)) is not None]\n',
  'parenthesised context managers': "with (open('a') as a, open('b') as b,):\n    pass\n",
  'nested f-strings': "x = f\"{f'{a!r:>{w}}'}\"\ny = f'{x=}'\n",
  'type aliases and type parameters': 'type X[T] = list[T]\ndef f[T](x: T) -> T:\n    return x\n',
  'decorators with any expression': '@buttons[0].clicked.connect\ndef f(): pass\n@(lambda f: f)\ndef g(): pass\n',
  'positional-only parameters': 'def f(a, b, /, c, *, d):\n    pass\n',
};

/** Not Python: each is reported, at its line, and the sum bug above it is still found. */
const INVALID: Record<string, { text: string; line: number }> = {
  'an unclosed bracket': { text: 'x = (1, 2\n', line: 7 },
  'a missing colon': { text: 'if x\n    pass\n', line: 7 },
  'an empty parameter': { text: 'def f(:\n    pass\n', line: 7 },
  'a dangling operator': { text: 'a = 1 +\n', line: 7 },
  'mismatched brackets': { text: 'x = [1, 2}\n', line: 7 },
};

/** True when the local python3 (when there is one) parses every text with `ast.parse`; undefined without one. */
function pythonAccepts(texts: readonly string[]): boolean[] | undefined {
  const script =
    'import ast, json, sys\nout = []\nfor t in json.load(sys.stdin):\n    try:\n        ast.parse(t); out.append(True)\n    except SyntaxError:\n        out.append(False)\nprint(json.dumps(out))';
  const r = spawnSync('python3', ['-c', script], { input: JSON.stringify(texts), encoding: 'utf8', timeout: 20_000 });
  return r.status === 0 ? (JSON.parse(r.stdout) as boolean[]) : undefined;
}

test(
  'the snippets are what they claim: Python accepts the misread and modern ones and rejects the invalid ones',
  { skip: pythonAccepts(['x = 1']) ? false : 'no python3' },
  async () => {
    const valid = [...Object.values(MISREAD), ...Object.values(MODERN).filter((t) => !/^type |def f\[/m.test(t))];
    assert.ok(pythonAccepts(valid)!.every(Boolean));
    assert.ok(pythonAccepts(Object.values(INVALID).map((c) => c.text))!.every((ok) => !ok));
  },
);

for (const [name, text] of Object.entries(MISREAD)) {
  test(`valid Python tree-sitter misreads is not a syntax error: ${name}`, async () => {
    assert.equal(
      await parsesCleanly(text),
      false,
      'tree-sitter-python still misreads this (if it parses now, the repair may go)',
    );
    assert.equal(await parsesCleanly(repairKnownGaps(text)), true);
    assert.equal(repairKnownGaps(text).length, text.length);
    const r = analyzePython(await parser(), `${SUM_BUG}\n${text}`);
    assert.deepEqual(r.notes, []);
    assert.equal(r.unanalysed, undefined);
    assert.deepEqual(summary(r.findings), ['CP001@5']);
  });
}

for (const [name, text] of Object.entries(MODERN)) {
  test(`newer syntax parses without a note: ${name}`, async () => {
    assert.equal(await parsesCleanly(text), true);
    const r = analyzePython(await parser(), `${SUM_BUG}\n${text}`);
    assert.deepEqual([r.notes, summary(r.findings)], [[], ['CP001@5']]);
  });
}

for (const [name, { text, line }] of Object.entries(INVALID)) {
  test(`a real syntax error is reported and only its statement is skipped: ${name}`, async () => {
    const r = analyzePython(await parser(), `${SUM_BUG}\n${text}`);
    assert.deepEqual(summary(r.findings), ['CP001@5']);
    assert.equal(r.unanalysed?.length, 1);
    const [u] = r.unanalysed!;
    assert.deepEqual([u.reason, u.whole, u.line! + 1], ['syntax-error', false, line]);
    assert.match(u.message, new RegExp(`^syntax error at line ${line}: lines ${line}(-\\d+)? not analysed`));
  });
}

test('the repair leaves strings, comments outside brackets and products alone', () => {
  const text = 'x = a * (b)\ny = "*(", \'*[\'  # *(\nz = [1,\n  2]  # kept\n';
  assert.equal(repairKnownGaps(text), 'x = a * (b)\ny = "*(", \'*[\'  # *(\nz = [1,   2]  # kept\n');
});

test("an error that spans the file in tree-sitter's recovery costs only its own statement", async () => {
  const text = `${SUM_BUG}\n\nclass Broken:\n    def f(self)\n        return 1\n\n\ndef g():\n    return 2\n`;
  const r = analyzePython(await parser(), text);
  assert.deepEqual(summary(r.findings), ['CP001@5']);
  assert.match(r.unanalysed![0].message, /^syntax error at line 8: lines 8-10 not analysed/);
});

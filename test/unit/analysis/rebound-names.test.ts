// Which names a function rebinds (nested-calls.ts `reboundNames`): only bindings of the name itself. `self.x = x`
// writes an attribute and `d[k] = v` an item; the value before `as` and after `:=` is read, not bound. A parameter a
// function rebinds is no longer what its call passed, so a name counted wrongly here keeps the contracts that follow
// arguments (wrapper-factory.ts, wrapper-loader.ts, call-contexts.ts, class-constructors.ts) silent. Cases written
// for this project.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FileModel } from '../../../src/analysis/scope';
import { Syntax } from '../../../src/analysis/syntax';
import { parseUnits } from '../../../src/analysis/parse';
import { reboundNames } from '../../../src/analysis/nested-calls';
import { parser, py } from './helpers';

async function rebound(code: string): Promise<string[]> {
  const parsed = parseUnits(await parser(), code, 10_000, undefined);
  assert.ok('module' in parsed);
  const model = new FileModel(parsed.module, new Syntax(parsed.source));
  const fn = model.functions.find((f) => f.name === 'f')!;
  return [...reboundNames(model, fn)].sort();
}

test('rebound: plain, tuple, augmented, for, with-as, except-as and walrus targets', async () => {
  const code = py`
    def f(a, b, c, d, e, g, h, k):
        a = 1
        (b, [c, *d]) = h()
        e += 1
        for g in range(3):
            pass
        with open(k) as fh:
            pass
        try:
            pass
        except ValueError as err:
            pass
        if (w := len(k)) > 0:
            pass
  `;
  assert.deepEqual(await rebound(code), ['a', 'b', 'c', 'd', 'e', 'err', 'fh', 'g', 'w']);
});

test('not rebound: an attribute or item written, the value before `as`, the value of `:=`', async () => {
  const code = py`
    def f(self, x, table, key, value, ctx, y):
        self.x = x
        self.items[key] = value
        table[key] = value
        a, self.y = y, x
        with ctx(x) as handle:
            pass
        if (n := len(y)) > 0:
            pass
  `;
  assert.deepEqual(await rebound(code), ['a', 'handle', 'n']);
});

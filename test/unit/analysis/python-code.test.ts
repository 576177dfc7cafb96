// Comments and string literals blanked as Python 3.11's tokenizer delimits them (python-code.ts). Each case shows the
// text and what is left of it; a kept character keeps its offset, so the expected text is the source with spaces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withoutComments, withoutCommentsAndStrings } from '../../../src/analysis/python-code';

/** Pairs of [source, expected]: `~` in the expected text marks a blanked character (a space in the output). */
function assertBlanked(cases: readonly (readonly [string, string])[]): void {
  const wrong = cases
    .map(([source, expected]) => [source, expected.replaceAll('~', ' '), withoutCommentsAndStrings(source)])
    .filter(([, expected, got]) => expected !== got)
    .map(
      ([source, expected, got]) => `${JSON.stringify(source)}: ${JSON.stringify(got)} != ${JSON.stringify(expected)}`,
    );
  assert.deepEqual(wrong, []);
}

test('comments and plain strings, with every prefix and both quote kinds', () => {
  assertBlanked([
    ['x.a *= f  # x.b *= f', 'x.a *= f  ~~~~~~~~~~'],
    ["s = 'a # b'  # c", 's = ~~~~~~~  ~~~'],
    ['s = "it\'s"', 's = ~~~~~~'],
    ['s = rb"x" + Br"y" + U"z" + b"w"', 's = ~~~~~ + ~~~~~ + ~~~~ + ~~~~'],
    // A word that is not a prefix is code; the string still starts at the quote.
    ['sorted"x"', 'sorted~~~'],
    ['rf = "x"', 'rf = ~~~'],
  ]);
});

test('escapes end nothing, raw strings included; a one-line string ends at a line break', () => {
  assertBlanked([
    ['s = "a\\"b" + t', 's = ~~~~~~ + t'],
    ['s = r"\\"" + t', 's = ~~~~~ + t'],
    ['s = "a\\\\" + t', 's = ~~~~~ + t'],
    ['s = "a\\\nb" + t', 's = ~~~\n~~ + t'],
    ['s = "open\nx.a *= f', 's = ~~~~~\nx.a *= f'],
  ]);
});

test('triple-quoted strings span lines, hold the other quotes, and end at the first unescaped triple', () => {
  assertBlanked([
    ['"""doc\n  x.a *= f\n"""\ny', '~~~~~~\n~~~~~~~~~~\n~~~\ny'],
    ["'''a \"\"\" b''' + c", '~~~~~~~~~~~~~ + c'],
    ['"""a\\""" b""" + c', '~~~~~~~~~~~~~ + c'],
    ['""""x""" + c', '~~~~~~~~ + c'],
    ['"" + "x"', '~~ + ~~~'],
  ]);
});

test('f-strings: literal text and specs blanked, field expressions kept, nested strings blanked', () => {
  assertBlanked([
    ['f"a {x.b} c"', '~~~~{x.b}~~~'],
    ['f"{{x.a *= f}}"', '~~~~~~~~~~~~~~~'],
    ['F"{x!r:>{w}} t"', '~~{x!r:~{w}}~~~'],
    ['f"{d[\'k\']}"', '~~{d[~~~]}~'],
    ['f"{f\'{y}\'}"', '~~{~~{y}~}~'],
    ['f"{ {1: 2}[1] }"', '~~{ {1: 2}[1] }~'],
    ['f"\\N{DASH} {x}"', '~~~~~~~~~~~{x}~'],
    ['rf"\\N{x}"', '~~~~~{x}~'],
    ['f"""a\n{x.m_()}\nb"""', '~~~~~\n{x.m_()}\n~~~~'],
  ]);
});

test('offsets, line breaks and text without comments or strings are kept', () => {
  const source = 'def f(x):\r\n    """doc"""\r\n    x.a *= 2  # twice\r\n';
  const out = withoutCommentsAndStrings(source);
  assert.equal(out.length, source.length);
  assert.equal(out, 'def f(x):\r\n    ~~~~~~~~~\r\n    x.a *= 2  ~~~~~~~\r\n'.replaceAll('~', ' '));
  const plain = 'x.a *= 2\n';
  assert.equal(withoutCommentsAndStrings(plain), plain);
});

test('withoutComments keeps strings, a # inside one included', () => {
  assert.equal(withoutComments('getattr(m, "scale#1")  # scale'), 'getattr(m, "scale#1")         ');
});

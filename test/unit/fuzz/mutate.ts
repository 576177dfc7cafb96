// Byte-level mutation of real files, as fast-check arbitraries: a mutation is a short list of edits (flip a bit,
// insert a hostile token, delete or duplicate a span, truncate, swap two lines, replace a number) applied to a
// seed file. Positions are drawn as fractions, so the same edit list works on seeds of any length and shrinks
// towards the start of the file.
import fc from 'fast-check';

/** Tokens that have broken parsers before: structure characters, numbers at the edges, YAML tricks, odd bytes. */
export const HOSTILE_TOKENS: readonly string[] = [
  '{',
  '}',
  '[',
  ']',
  '"',
  "'",
  ',',
  ':',
  '\n',
  '\r\n',
  '\t',
  '\0',
  '\\',
  '\\u',
  '\uFEFF',
  '\uD800',
  '#',
  '- ',
  '? ',
  '0',
  '-1',
  '-0',
  '1e309',
  '-1e309',
  '1e-400',
  'NaN',
  'Infinity',
  '99999999999999999999',
  '2147483648',
  '0x10',
  '.5',
  '5.',
  '1_000',
  'null',
  'true',
  '~',
  '&a',
  '*a',
  '!!binary',
  '!!js/function',
  '<<: *a',
  '---',
  '...',
  '%YAML 1.2',
  '|',
  '>',
  '__proto__',
  'constructor',
  '"__proto__":{}',
  'toString',
  '<img src=x onerror=alert(1)>',
  'B',
  'KB',
  'MB',
  'GiB',
  'TB',
  'us',
  'ms',
  'N/A',
  'nan',
  'inf',
  '        ',
  '\u00e9',
  '\u{1F600}',
  '\u202E',
];

const NUMBERS: readonly string[] = [
  '0',
  '-1',
  '1e309',
  'NaN',
  '99999999999999999999',
  '0.0000001',
  '-0',
  '',
  '1e-400',
  '3.5',
  '65536',
];

export type Edit =
  | { readonly kind: 'flip'; readonly at: number; readonly bit: number }
  | { readonly kind: 'byte'; readonly at: number; readonly value: number }
  | { readonly kind: 'insert'; readonly at: number; readonly text: string }
  | { readonly kind: 'delete'; readonly at: number; readonly length: number }
  | { readonly kind: 'duplicate'; readonly at: number; readonly length: number; readonly times: number }
  | { readonly kind: 'truncate'; readonly at: number }
  | { readonly kind: 'swapLines'; readonly a: number; readonly b: number }
  | { readonly kind: 'number'; readonly nth: number; readonly text: string };

const fraction = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true });

export const editArbitrary: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fraction, bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('byte' as const), at: fraction, value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fraction,
    text: fc.oneof(
      fc.constantFrom(...HOSTILE_TOKENS),
      fc.string({ maxLength: 12 }),
      fc.string({ unit: 'binary', maxLength: 6 }),
    ),
  }),
  fc.record({ kind: fc.constant('delete' as const), at: fraction, length: fc.integer({ min: 1, max: 200 }) }),
  fc.record({
    kind: fc.constant('duplicate' as const),
    at: fraction,
    length: fc.integer({ min: 1, max: 120 }),
    times: fc.integer({ min: 1, max: 8 }),
  }),
  fc.record({ kind: fc.constant('truncate' as const), at: fraction }),
  fc.record({ kind: fc.constant('swapLines' as const), a: fraction, b: fraction }),
  fc.record({ kind: fc.constant('number' as const), nth: fraction, text: fc.constantFrom(...NUMBERS) }),
);

export const editsArbitrary = fc.array(editArbitrary, { minLength: 1, maxLength: 6 });

const encoder = new TextEncoder();

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function applyEdit(bytes: Uint8Array, edit: Edit): Uint8Array {
  const pos = (f: number): number => Math.floor(f * (bytes.length + 1));
  switch (edit.kind) {
    case 'flip': {
      if (bytes.length === 0) return bytes;
      const out = bytes.slice();
      const i = Math.min(pos(edit.at), bytes.length - 1);
      out[i] ^= 1 << edit.bit;
      return out;
    }
    case 'byte': {
      const i = pos(edit.at);
      return concat(bytes.subarray(0, i), Uint8Array.of(edit.value), bytes.subarray(i));
    }
    case 'insert': {
      const i = pos(edit.at);
      return concat(bytes.subarray(0, i), encoder.encode(edit.text), bytes.subarray(i));
    }
    case 'delete': {
      const i = pos(edit.at);
      return concat(bytes.subarray(0, i), bytes.subarray(i + edit.length));
    }
    case 'duplicate': {
      const i = pos(edit.at);
      const span = bytes.subarray(i, i + edit.length);
      return concat(
        bytes.subarray(0, i),
        ...Array.from({ length: edit.times + 1 }, () => span),
        bytes.subarray(i + edit.length),
      );
    }
    case 'truncate':
      return bytes.subarray(0, pos(edit.at));
    case 'swapLines': {
      const lines = Buffer.from(bytes).toString('latin1').split('\n');
      const a = Math.floor(edit.a * lines.length);
      const b = Math.floor(edit.b * lines.length);
      [lines[a], lines[b]] = [lines[b], lines[a]];
      return Uint8Array.from(Buffer.from(lines.join('\n'), 'latin1'));
    }
    case 'number': {
      const text = Buffer.from(bytes).toString('latin1');
      const numbers = [...text.matchAll(/-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g)];
      if (numbers.length === 0) return bytes;
      const m = numbers[Math.floor(edit.nth * numbers.length)];
      const start = m.index ?? 0;
      return Uint8Array.from(Buffer.from(text.slice(0, start) + edit.text + text.slice(start + m[0].length), 'latin1'));
    }
  }
}

export function mutate(seed: Uint8Array, edits: readonly Edit[]): Uint8Array {
  return edits.reduce(applyEdit, seed);
}

const decoder = new TextDecoder('utf-8');

export function mutateText(seed: string, edits: readonly Edit[]): string {
  return decoder.decode(mutate(encoder.encode(seed), edits));
}

/** A seed file picked from `seeds` with a list of edits applied. */
export function mutatedText(
  seeds: readonly { readonly name: string; readonly text: string }[],
): fc.Arbitrary<{ name: string; text: string }> {
  return fc.record({ index: fc.nat(), edits: editsArbitrary }).map(({ index, edits }) => {
    const seed = seeds[index % seeds.length];
    return { name: seed.name, text: mutateText(seed.text, edits) };
  });
}

/** A window of whole lines from a longer file, so big fixtures can seed fuzzing without making each input slow. */
export function lineWindow(text: string, startFraction: number, lineCount: number): string {
  const lines = text.split('\n');
  const start = Math.floor(startFraction * Math.max(1, lines.length - lineCount));
  return lines.slice(start, start + lineCount).join('\n');
}

const numberToken = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 1 << 30 }).map(String) },
  { weight: 2, arbitrary: fc.double({ min: 0, max: 1e6, noNaN: true }).map((d) => d.toFixed(2)) },
  { weight: 1, arbitrary: fc.constantFrom(...NUMBERS) },
);

/**
 * Files recombined from the seeds' own lines, in any order, with their numbers replaced: the line shapes stay
 * real (so the input gets past format detection into the deep parsing paths) while the values and the order are
 * arbitrary.
 */
export function recombinedLines(seeds: readonly { readonly text: string }[], maxLines = 60): fc.Arbitrary<string> {
  const pool = [...new Set(seeds.flatMap((s) => s.text.split('\n')))];
  return fc
    .array(fc.record({ line: fc.nat(), numbers: fc.array(numberToken, { maxLength: 6 }) }), {
      minLength: 1,
      maxLength: maxLines,
    })
    .map((picks) =>
      picks
        .map(({ line, numbers }) => {
          const source = pool[line % pool.length];
          let k = 0;
          return numbers.length === 0 ? source : source.replace(/\d+(?:\.\d+)?/g, () => numbers[k++ % numbers.length]);
        })
        .join('\n'),
    );
}

/** Like mutatedText, but big seeds contribute a window of at most `maxLines` lines, keeping each input quick. */
export function mutatedWindow(
  seeds: readonly { readonly name: string; readonly text: string }[],
  maxLines = 250,
): fc.Arbitrary<{ name: string; text: string }> {
  return fc.record({ index: fc.nat(), start: fraction, edits: editsArbitrary }).map(({ index, start, edits }) => {
    const seed = seeds[index % seeds.length];
    const lines = seed.text.split('\n').length;
    const text = lines > maxLines ? lineWindow(seed.text, start, maxLines) : seed.text;
    return { name: seed.name, text: mutateText(text, edits) };
  });
}

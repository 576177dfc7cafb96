// The code of a Python file with its comments and string literals blanked out, for the scans that read texts rather
// than parse trees (scaled-attributes.ts): a comment `# self.grad_data *= f` or a docstring that shows such a line
// is not a rescaling. The scan follows Python 3.11's tokenizer, where an f-string is one string token that ends at
// its first unescaped closing quote whatever its braces hold; the expressions of its replacement fields are code and
// stay, its literal parts and format specs are blanked. Every blanked character but a line break becomes a space, so
// offsets, line numbers and the indentation of code lines are those of the original text.

/** The string prefixes of Python 3 (any case): a word before a quote that is not one of them is not a prefix. */
const PREFIX = /^(?:[rRuUbBfF]|[rR][bBfF]|[bBfF][rR])$/;

/** What ends a string body, by quote count and quote: the closing quotes, an escape to step over, a line break. */
const CLOSING: Record<string, RegExp> = {
  "3'": /\\[^]|'''/g,
  '3"': /\\[^]|"""/g,
  "1'": /\\(?:\r\n|[^])|'|[\r\n]/g,
  '1"': /\\(?:\r\n|[^])|"|[\r\n]/g,
};

/** Half-open ranges [from, to) to blank, in increasing order. */
class Blanks {
  readonly ranges: number[] = [];

  add(from: number, to: number): void {
    if (to <= from) return;
    const last = this.ranges.length - 1;
    if (last > 0 && this.ranges[last] === from) this.ranges[last] = to;
    else this.ranges.push(from, to);
  }

  apply(text: string): string {
    if (this.ranges.length === 0) return text;
    const parts: string[] = [];
    let kept = 0;
    for (let i = 0; i < this.ranges.length; i += 2) {
      const [from, to] = [this.ranges[i], this.ranges[i + 1]];
      const blanked = text.slice(from, to);
      parts.push(
        text.slice(kept, from),
        /[\r\n]/.test(blanked) ? blanked.replace(/[^\r\n]/g, ' ') : ' '.repeat(to - from),
      );
      kept = to;
    }
    parts.push(text.slice(kept));
    return parts.join('');
  }
}

/** The text with comments and the literal parts of string literals blanked (see the file comment). */
export function withoutCommentsAndStrings(text: string): string {
  return blank(text, true);
}

/** The text with comments blanked; string literals stay as they are (a string can name a function: getattr). */
export function withoutComments(text: string): string {
  return blank(text, false);
}

function blank(text: string, strings: boolean): string {
  if (!/[#'"]/.test(text)) return text;
  const blanks = new Blanks();
  const next = /[#'"]/g;
  for (let m = next.exec(text); m; m = next.exec(text)) {
    if (m[0] === '#') {
      const end = lineEnd(text, m.index, text.length);
      blanks.add(m.index, end);
      next.lastIndex = end;
    } else {
      next.lastIndex = stringLiteral(text, m.index, text.length, strings ? blanks : undefined);
    }
  }
  return blanks.apply(text);
}

function lineEnd(text: string, from: number, to: number): number {
  const lineBreak = /[\r\n]/g;
  lineBreak.lastIndex = from;
  const m = lineBreak.exec(text);
  return m && m.index < to ? m.index : to;
}

/** The prefix letters right before a quote, or '' when the word there is not a string prefix. */
function prefixBefore(text: string, quoteAt: number): string {
  let start = quoteAt;
  while (start > 0 && /\w/.test(text[start - 1])) start--;
  const word = text.slice(start, quoteAt);
  return PREFIX.test(word) ? word : '';
}

/**
 * Reads the string literal whose opening quote is at `quoteAt`, within text[.., to), and notes its blanks when
 * `blanks` is given; returns the index after its closing quote. A backslash escapes the next character in every
 * string, raw ones included (`r"\""` is one string). A one-line string that meets a line break before its quote is
 * unterminated: it ends there, as a tokenizer that reports the error and goes on would end it.
 */
function stringLiteral(text: string, quoteAt: number, to: number, blanks: Blanks | undefined): number {
  const prefix = prefixBefore(text, quoteAt);
  const quote = text[quoteAt];
  const triple = text.startsWith(quote.repeat(3), quoteAt) && quoteAt + 3 <= to;
  const bodyFrom = quoteAt + (triple ? 3 : 1);
  const closing = CLOSING[`${triple ? 3 : 1}${quote}`];
  closing.lastIndex = bodyFrom;
  let bodyTo = to;
  let end = to;
  for (let m = closing.exec(text); m && m.index < to; m = closing.exec(text)) {
    if (m[0][0] === '\\') continue;
    bodyTo = m.index;
    end = m[0][0] === quote ? Math.min(m.index + m[0].length, to) : m.index;
    break;
  }
  if (!blanks) return end;
  blanks.add(quoteAt - prefix.length, bodyFrom);
  if (/f/i.test(prefix)) formatted(text, bodyFrom, bodyTo, /r/i.test(prefix), blanks);
  else blanks.add(bodyFrom, bodyTo);
  blanks.add(bodyTo, end);
  return end;
}

/**
 * The body of an f-string, text[from, to): literal text is blanked, `{{` and `}}` are literal braces, `\N{NAME}` is
 * an escape in a string that is not raw (and `\\N{x}` a backslash before a field), and a lone `{` opens a
 * replacement field whose expression stays; a backslash before a brace does not escape it.
 */
function formatted(text: string, from: number, to: number, raw: boolean, blanks: Blanks): void {
  const next = raw ? /\{\{|\}\}|[{}]/g : /\\N\{[^}]*\}?|\\\\|\{\{|\}\}|[{}]/g;
  let literalFrom = from;
  next.lastIndex = from;
  for (let m = next.exec(text); m && m.index < to; m = next.exec(text)) {
    if (m[0] !== '{') continue;
    blanks.add(literalFrom, m.index);
    const close = field(text, m.index + 1, to, blanks);
    literalFrom = Math.min(close + 1, to);
    next.lastIndex = literalFrom;
  }
  blanks.add(literalFrom, to);
}

/**
 * A replacement field's expression, from text[from] to its closing `}` at bracket depth 0, whose index it returns
 * (or `to` when there is none). A `:` at depth 0 starts the format spec: literal text that may hold nested fields.
 * Strings inside the expression are literals of their own (3.11 forbids the enclosing quote in them).
 */
function field(text: string, from: number, to: number, blanks: Blanks): number {
  const next = /['"]|[([{]|[)\]}]|:/g;
  let depth = 0;
  next.lastIndex = from;
  for (let m = next.exec(text); m && m.index < to; m = next.exec(text)) {
    const c = m[0];
    if (c === "'" || c === '"') next.lastIndex = stringLiteral(text, m.index, to, blanks);
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ':' && depth === 0) return formatSpec(text, m.index + 1, to, blanks);
    else if (c !== ':' && depth === 0) return c === '}' ? m.index : to;
    else if (c !== ':') depth--;
  }
  return to;
}

/** A format spec from text[from]: blanked but for nested fields; returns the index of the `}` that closes it. */
function formatSpec(text: string, from: number, to: number, blanks: Blanks): number {
  const next = /[{}]/g;
  let literalFrom = from;
  next.lastIndex = from;
  for (let m = next.exec(text); m && m.index < to; m = next.exec(text)) {
    blanks.add(literalFrom, m.index);
    if (m[0] === '}') return m.index;
    const close = field(text, m.index + 1, to, blanks);
    literalFrom = Math.min(close + 1, to);
    next.lastIndex = literalFrom;
  }
  blanks.add(literalFrom, to);
  return to;
}

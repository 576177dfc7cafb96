// Valid Python that tree-sitter-python 0.25 does not parse, rewritten (same length, so every offset stays) into
// Python it does parse. Found by parsing 68,000 files with tree-sitter and with Python 3.11's own parser:
//   1. A star before a bracket, a string, a sign or `await` in a tuple without parentheses: `return a, *(b,) * n`,
//      `h, *r = e, *[]`. The star is replaced by a space; the element then reads as the tuple it unpacks.
//   2. A line inside brackets indented less than its statement, after an operator or a dot: `(bar.\n  baz)` in a
//      method. Python joins lines inside brackets, so the line break (and a comment before it) becomes spaces.
// Only the statements that fail to parse are rewritten (see parse.ts), and only where the rewrite then parses.

/** The text with both rewrites applied between `start` and `end`; the rest is unchanged. */
export function repairKnownGaps(text: string, start = 0, end = text.length): string {
  const out = text.slice(start, end).split('');
  let depth = 0;
  let quote = '';
  // The last significant character at bracket depth 0, to tell a unary star (after `,`, `=`, a keyword) from a product.
  let previous = '';
  let word = '';
  for (let i = start; i < end; i++) {
    const c = text[i];
    if (quote !== '') {
      if (c === '\\') i++;
      else if (text.startsWith(quote, i)) {
        i += quote.length - 1;
        quote = '';
        previous = 'x';
      } else if (c === '\n' && quote.length === 1) quote = '';
      continue;
    }
    if (c === '#') {
      const stop = text.indexOf('\n', i);
      const lineEnd = stop < 0 || stop > end ? end : stop;
      if (depth > 0) for (let j = i; j < lineEnd; j++) out[j - start] = ' ';
      i = lineEnd - 1;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = text.startsWith(c.repeat(3), i) ? c.repeat(3) : c;
      i += quote.length - 1;
      continue;
    }
    if (c === '\n' || c === '\r') {
      if (depth > 0) out[i - start] = ' ';
      else previous = '';
      continue;
    }
    if (c === '(' || c === '[' || c === '{') depth++;
    else if ((c === ')' || c === ']' || c === '}') && depth > 0) depth--;
    if (
      c === '*' &&
      depth === 0 &&
      text[i + 1] !== '*' &&
      text[i - 1] !== '*' &&
      unaryAfter(previous, word) &&
      opensOperand(text, i + 1)
    ) {
      out[i - start] = ' ';
      continue;
    }
    if (/\w/.test(c)) {
      word = /\w/.test(text[i - 1] ?? '') ? word + c : c;
      previous = 'w';
    } else if (c !== ' ' && c !== '\t' && c !== '\\') {
      previous = c;
      word = '';
    }
  }
  return text.slice(0, start) + out.join('') + text.slice(end);
}

/** A star is unary after a comma, an `=`, or the keywords that start a tuple (`return`, `yield`, `in`). */
function unaryAfter(previous: string, word: string): boolean {
  if (previous === ',' || previous === '=') return true;
  return previous === 'w' && /^(return|yield|in)$/.test(word);
}

/** What follows the star is one of the operands tree-sitter trips on. */
function opensOperand(text: string, from: number): boolean {
  let i = from;
  while (text[i] === ' ' || text[i] === '\t') i++;
  const c = text[i];
  if (c === '(' || c === '[' || c === '{' || c === '"' || c === "'" || c === '-' || c === '+' || c === '~') return true;
  if (/^(await\b|[rRbBuUfF]{1,2}['"])/.test(text.slice(i, i + 6))) return true;
  return false;
}

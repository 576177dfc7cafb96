// Text edits as plain data: building them from syntax nodes, and applying them to a text (used by the tests,
// the CLI's fix checks and the extension's previews).
import { named, type PyNode, type Source } from './tree';
import type { TextEdit } from './types';

export class EditBuilder {
  constructor(private readonly source: Source) {}

  replace(node: PyNode, newText: string): TextEdit {
    return { range: this.source.range(node), newText };
  }

  replaceSpan(start: number, end: number, newText: string): TextEdit {
    return { range: this.source.rangeOf(start, end), newText };
  }

  insertAt(offset: number, newText: string): TextEdit {
    return { range: this.source.rangeOf(offset, offset), newText };
  }

  /** The indentation of the line a node starts on. */
  indentOf(node: PyNode): string {
    const line = this.source.position(node.start).line;
    const start = this.source.lineStarts[line];
    return /^[ \t]*/.exec(this.source.text.slice(start, node.start))?.[0] ?? '';
  }

  /** A new statement on its own line after `statement`, at the same indentation. */
  insertStatementAfter(statement: PyNode, code: string): TextEdit {
    return this.insertAt(statement.end, `\n${this.indentOf(statement)}${code}`);
  }

  /**
   * Removes a statement. A block must keep one statement, so a lone statement becomes `pass`; a statement
   * sharing its line with others (`a; b`) is replaced by `pass` too.
   */
  deleteStatement(statement: PyNode): TextEdit {
    const block = statement.parent;
    const siblings = block ? named(block) : [];
    const text = this.source.text;
    const lineStart = this.source.lineStarts[this.source.position(statement.start).line];
    let lineEnd = text.indexOf('\n', statement.end);
    if (lineEnd < 0) lineEnd = text.length;
    const ownsLine =
      text.slice(lineStart, statement.start).trim() === '' && /^\s*(#.*)?$/.test(text.slice(statement.end, lineEnd));
    if (siblings.length <= 1 || !ownsLine) return this.replace(statement, 'pass');
    return this.replaceSpan(lineStart, Math.min(lineEnd + 1, text.length), '');
  }

  /** Inserts a keyword argument before the closing parenthesis of an argument list. */
  addKeyword(argumentList: PyNode, keyword: string): TextEdit {
    const close = argumentList.end - 1;
    const inner = this.source.text.slice(argumentList.start + 1, close);
    const trimmed = inner.trimEnd();
    const sep = trimmed === '' ? '' : trimmed.endsWith(',') ? ' ' : ', ';
    return this.insertAt(argumentList.start + 1 + trimmed.length, `${sep}${keyword}`);
  }
}

/** Applies edits (0-based line/column ranges) to a text; overlapping edits are applied last-first. */
export function applyEdits(text: string, edits: readonly TextEdit[]): string {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  const offset = (line: number, column: number) =>
    Math.min((starts[Math.min(line, starts.length - 1)] ?? 0) + column, text.length);
  const spans = edits
    .map((e) => ({
      start: offset(e.range.startLine, e.range.startColumn),
      end: offset(e.range.endLine, e.range.endColumn),
      text: e.newText,
    }))
    .sort((a, b) => b.start - a.start || b.end - a.end);
  let out = text;
  for (const s of spans) out = out.slice(0, s.start) + s.text + out.slice(s.end);
  return out;
}

// A plain-object copy of the parts of the tree-sitter syntax tree the rules read. Every property read on a
// web-tree-sitter node is a call into WebAssembly, so the tree is copied once with a cursor and the rules then
// walk ordinary objects; only the top-level statements that can matter are copied (see select.ts).
import type { Language, TreeCursor } from 'web-tree-sitter';
import type { SourceRange } from './types';

export interface PyNode {
  readonly type: string;
  /** False for tree-sitter's anonymous tokens (punctuation, operators, keywords). */
  readonly named: boolean;
  /** The field this node fills in its parent ("left", "function", "arguments"...), or null. */
  readonly field: string | null;
  readonly start: number;
  readonly end: number;
  readonly children: PyNode[];
  parent: PyNode | null;
}

/** Nodes deeper than this are not copied: pathological nesting must not overflow the stack of the rules. */
export const MAX_DEPTH = 150;

/** The text and its line index; offsets are UTF-16 code units as tree-sitter reports them for JS strings. */
export class Source {
  readonly lineStarts: number[] = [0];
  constructor(readonly text: string) {
    // A lone CR ends a line too, as in the editor and in Python (old Mac line endings); otherwise every finding
    // after one would be reported a line too high.
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) this.lineStarts.push(i + 1);
    }
  }
  textOf(node: PyNode): string {
    return this.text.slice(node.start, node.end);
  }
  position(offset: number): { line: number; column: number } {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo, column: offset - this.lineStarts[lo] };
  }
  offsetOf(line: number, column: number): number {
    const start = this.lineStarts[Math.min(Math.max(line, 0), this.lineStarts.length - 1)];
    return Math.min(start + Math.max(column, 0), this.text.length);
  }
  rangeOf(start: number, end: number): SourceRange {
    const a = this.position(start);
    const b = this.position(end);
    return { startLine: a.line, startColumn: a.column, endLine: b.line, endColumn: b.column };
  }
  range(node: PyNode): SourceRange {
    return this.rangeOf(node.start, node.end);
  }
  lineOf(node: PyNode): number {
    return this.position(node.start).line;
  }
}

/** Copies the subtree under the cursor (iteratively, so deep trees cannot overflow the stack). */
export function copySubtree(cursor: TreeCursor, language: Language): { node: PyNode; truncated: boolean } {
  const namedById = namedTable(language);
  const make = (parent: PyNode | null): PyNode => {
    const typeId = cursor.nodeTypeId;
    return {
    type: language.types[typeId] ?? 'ERROR',
    named: namedById[typeId] ?? true,
    field: language.fields[cursor.currentFieldId] ?? null,
    start: cursor.startIndex,
    end: cursor.endIndex,
    children: [],
    parent,
    };
  };
  const root = make(null);
  let truncated = false;
  const stack: PyNode[] = [root];
  if (!cursor.gotoFirstChild()) return { node: root, truncated };
  for (;;) {
    const parent = stack[stack.length - 1];
    const node = make(parent);
    parent.children.push(node);
    const skip = node.type === 'string' || node.type === 'comment';
    if (!skip && stack.length < MAX_DEPTH && cursor.gotoFirstChild()) {
      stack.push(node);
      continue;
    }
    if (!skip && stack.length >= MAX_DEPTH && cursor.gotoFirstChild()) {
      truncated = true;
      cursor.gotoParent();
    }
    while (!cursor.gotoNextSibling()) {
      if (!cursor.gotoParent() || stack.length === 1) return { node: root, truncated };
      stack.pop();
    }
  }
}

const namedTables = new WeakMap<Language, boolean[]>();

function namedTable(language: Language): boolean[] {
  let table = namedTables.get(language);
  if (!table) {
    table = language.types.map((_, id) => language.nodeTypeIsNamed(id));
    namedTables.set(language, table);
  }
  return table;
}

// ---- small navigation helpers shared by every rule ----

export function child(node: PyNode | undefined | null, field: string): PyNode | undefined {
  return node?.children.find((c) => c.field === field);
}

export function childrenOf(node: PyNode, field: string): PyNode[] {
  return node.children.filter((c) => c.field === field);
}

/** Named children, without comments. */
export function named(node: PyNode): PyNode[] {
  return node.children.filter((c) => c.named && c.type !== 'comment');
}

export function unparen(node: PyNode): PyNode {
  let n = node;
  while (n.type === 'parenthesized_expression') {
    const inner = named(n)[0];
    if (!inner) break;
    n = inner;
  }
  return n;
}

/** Depth-first pre-order visit; `enter` returning false skips the children. */
export function visit(node: PyNode, enter: (n: PyNode) => boolean | void): void {
  const stack: PyNode[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (enter(n) === false) continue;
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
  }
}

export function ancestors(node: PyNode): PyNode[] {
  const out: PyNode[] = [];
  for (let p = node.parent; p; p = p.parent) out.push(p);
  return out;
}

/** The statement (a direct child of a block or the module) that contains the node. */
export function statementOf(node: PyNode): PyNode {
  let n = node;
  while (n.parent && n.parent.type !== 'block' && n.parent.type !== 'module') n = n.parent;
  return n;
}

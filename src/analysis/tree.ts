// A plain-object copy of the parts of the tree-sitter syntax tree the rules read. Every property read on a
// web-tree-sitter node is a call into WebAssembly, so the tree is copied once with a cursor and the rules then
// walk ordinary objects; only the top-level statements that can matter are copied (see select.ts).
import type { Language, Tree, TreeCursor } from 'web-tree-sitter';
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
  return copyWith(copySubtreeReader(cursor), language);
}

/**
 * Copies the module's statements under `module`. With the runtime's raw cursor functions (see
 * useTreeSitterModule) this is about three times faster than through TreeCursor, whose every property read
 * copies the cursor into WebAssembly memory and back.
 */
export function copyModule(tree: Tree, language: Language, module: PyNode): { truncated: boolean } {
  // One level more than a statement's copy: the module itself is on the stack.
  const depth = MAX_DEPTH + 1;
  const cursor = tree.walk();
  const raw = rawAgrees === false ? undefined : rawCursor(tree, cursor);
  let copy: { node: PyNode; truncated: boolean };
  try {
    copy = copyWith(raw ?? copySubtreeReader(cursor), language, depth);
  } finally {
    raw?.release();
    cursor.delete();
  }
  if (rawAgrees === undefined && wasm) {
    // The first tree is also copied through TreeCursor: a runtime whose internals differ falls back for good.
    const check = tree.walk();
    const slow = copyWith(copySubtreeReader(check), language, depth);
    check.delete();
    rawAgrees = JSON.stringify(strip(slow.node)) === JSON.stringify(strip(copy.node));
    copy = slow;
  }
  for (const top of copy.node.children) {
    top.parent = module;
    module.children.push(top);
  }
  return { truncated: copy.truncated };
}

interface CursorReader {
  typeId(): number;
  fieldId(): number;
  start(): number;
  end(): number;
  firstChild(): boolean;
  nextSibling(): boolean;
  parent(): boolean;
}

function copySubtreeReader(cursor: TreeCursor): CursorReader {
  return {
    typeId: () => cursor.nodeTypeId,
    fieldId: () => cursor.currentFieldId,
    start: () => cursor.startIndex,
    end: () => cursor.endIndex,
    firstChild: () => cursor.gotoFirstChild(),
    nextSibling: () => cursor.gotoNextSibling(),
    parent: () => cursor.gotoParent(),
  };
}

function copyWith(at: CursorReader, language: Language, maxDepth = MAX_DEPTH): { node: PyNode; truncated: boolean } {
  const namedById = namedTable(language);
  const types = language.types;
  const fields = language.fields;
  const make = (parent: PyNode | null): PyNode => {
    const typeId = at.typeId();
    return {
      type: types[typeId] ?? 'ERROR',
      named: namedById[typeId] ?? true,
      field: fields[at.fieldId()] ?? null,
      start: at.start(),
      end: at.end(),
      children: [],
      parent,
    };
  };
  const root = make(null);
  let truncated = false;
  const stack: PyNode[] = [root];
  if (!at.firstChild()) return { node: root, truncated };
  for (;;) {
    const parent = stack[stack.length - 1];
    const node = make(parent);
    parent.children.push(node);
    const skip = node.type === 'string' || node.type === 'comment';
    if (!skip && stack.length < maxDepth && at.firstChild()) {
      stack.push(node);
      continue;
    }
    if (!skip && stack.length >= maxDepth && at.firstChild()) {
      truncated = true;
      at.parent();
    }
    while (!at.nextSibling()) {
      if (!at.parent() || stack.length === 1) return { node: root, truncated };
      stack.pop();
    }
  }
}

// ---- the raw cursor: web-tree-sitter's own exports, called without its per-call copying ----

/** What the runtime's module object holds after Parser.init (emscripten assigns its exports to it). */
interface TreeSitterModule {
  _ts_init(): number;
  _ts_tree_cursor_current_node_type_id_wasm(tree: number): number;
  _ts_tree_cursor_current_field_id_wasm(tree: number): number;
  _ts_tree_cursor_start_index_wasm(tree: number): number;
  _ts_tree_cursor_end_index_wasm(tree: number): number;
  _ts_tree_cursor_goto_first_child_wasm(tree: number): number;
  _ts_tree_cursor_goto_next_sibling_wasm(tree: number): number;
  _ts_tree_cursor_goto_parent_wasm(tree: number): number;
  HEAP32: Int32Array;
}

let wasm: { module: TreeSitterModule; buffer: number } | undefined;
/** Set once the raw copy has been compared with the TreeCursor copy on a real tree; false disables it. */
let rawAgrees: boolean | undefined;

/**
 * Hands tree.ts the object that was passed to `Parser.init`, which emscripten fills with the runtime's exports.
 * Every cursor function reads the cursor from the runtime's transfer buffer and writes it back after a move, so
 * the buffer can hold the cursor for a whole walk. Anything unexpected leaves the TreeCursor path in place.
 */
export function useTreeSitterModule(module: object): void {
  const m = module as Partial<TreeSitterModule>;
  const names = [
    '_ts_init',
    '_ts_tree_cursor_current_node_type_id_wasm',
    '_ts_tree_cursor_current_field_id_wasm',
    '_ts_tree_cursor_start_index_wasm',
    '_ts_tree_cursor_end_index_wasm',
    '_ts_tree_cursor_goto_first_child_wasm',
    '_ts_tree_cursor_goto_next_sibling_wasm',
    '_ts_tree_cursor_goto_parent_wasm',
  ] as const;
  if (!names.every((n) => typeof m[n] === 'function') || !(m.HEAP32 instanceof Int32Array)) return;
  // ts_init only writes the language versions into the transfer buffer and returns its address.
  wasm = { module: m as TreeSitterModule, buffer: (m as TreeSitterModule)._ts_init() };
  rawAgrees = undefined;
}

function rawCursor(tree: Tree, cursor: TreeCursor): (CursorReader & { release(): void }) | undefined {
  if (!wasm) return undefined;
  const { module: m, buffer } = wasm;
  const treeId = (tree as unknown as { [0]: number })[0];
  const handle = cursor as unknown as { [i: number]: number };
  if (typeof treeId !== 'number' || typeof handle[0] !== 'number') return undefined;
  const words = buffer >> 2;
  for (let i = 0; i < 4; i++) m.HEAP32[words + i] = handle[i];
  return {
    typeId: () => m._ts_tree_cursor_current_node_type_id_wasm(treeId),
    fieldId: () => m._ts_tree_cursor_current_field_id_wasm(treeId),
    start: () => m._ts_tree_cursor_start_index_wasm(treeId),
    end: () => m._ts_tree_cursor_end_index_wasm(treeId),
    firstChild: () => m._ts_tree_cursor_goto_first_child_wasm(treeId) === 1,
    nextSibling: () => m._ts_tree_cursor_goto_next_sibling_wasm(treeId) === 1,
    parent: () => m._ts_tree_cursor_goto_parent_wasm(treeId) === 1,
    // The cursor's stack may have been reallocated during the walk, so its object must learn the new address
    // before it is deleted (and memory may have grown, so HEAP32 is read again).
    release: () => {
      for (let i = 0; i < 4; i++) handle[i] = m.HEAP32[words + i];
    },
  };
}

function strip(n: PyNode): unknown[] {
  return [n.type, n.field, n.start, n.end, n.children.map(strip)];
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
/** True where a call's argument list has a `*args` or `**kwargs`: what those pass is not read. */
export function hasSplat(argList: PyNode | undefined | null): boolean {
  return !!argList && argList.children.some((c) => c.type === 'list_splat' || c.type === 'dictionary_splat');
}

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

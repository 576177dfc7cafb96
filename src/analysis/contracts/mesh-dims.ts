// Device-mesh dimensions by name, read from torch's DeviceMesh contract. `init_device_mesh(device, shape,
// mesh_dim_names=names)` builds a mesh whose dimensions carry those names; `mesh[("a", "b")]._flatten(
// mesh_dim_name="ab")` adds a name for the product of those dimensions; `mesh["ab"]` or `mesh[tuple(names)]` selects
// a sub-mesh whose size is the product of the sizes of the dimensions it names. So two meshes selected by names from
// the same built mesh compare by their base dimensions: the ranks one holds beyond the other are the dimensions it
// names and the other does not.
//
// Read per function: the name lists it builds (`names = []` and `names.append("a")` under the branches that guard
// each append, or a literal tuple per branch), the meshes it builds (the names `init_device_mesh` may get: a literal
// list, or the names of a `for size, name in zip(sizes, [...])` loop appended to the list), and the names it
// flattens. A list the code computes otherwise is not read.
import { child, named, unparen, visit, type PyNode } from '../tree';
import { guardsOf, type Cond } from './branch-guards';
import { stringValue, type FileSyntax } from './placement-syntax';

export interface DimEntry {
  readonly name: string;
  /** The branches under which the dimension is in the list (empty: always). */
  readonly guards: readonly Cond[];
}

/** One way a name list may be built: its entries, and the branch that chose this way. */
export interface NameList {
  readonly entries: readonly DimEntry[];
  readonly guards: readonly Cond[];
}

export interface MeshBuilder {
  readonly fn: string;
  /** The dimension names `init_device_mesh` may be given. */
  readonly names: ReadonlySet<string>;
  /** Flattened names → the dimensions each is the product of. */
  readonly flattens: ReadonlyMap<string, readonly DimEntry[]>;
}

const INIT_DEVICE_MESH = /^torch\.distributed\.(device_mesh\.)?init_device_mesh$/;

/** The ways a local list of names is built in `fn`, or undefined when it is not read. */
export function nameLists(syntax: FileSyntax, fn: PyNode, name: string): NameList[] | undefined {
  const assigned: PyNode[] = [];
  const appends: PyNode[] = [];
  let other = false;
  visit(fn, (n) => {
    if (n !== fn && (n.type === 'function_definition' || n.type === 'class_definition')) return false;
    if (n.type === 'assignment' && valueAssigned(syntax, n, name)) assigned.push(n);
    else if (n.type === 'call' && syntax.callee(n) === `${name}.append`) appends.push(n);
    else if (n.type === 'call' && syntax.callee(n).startsWith(`${name}.`)) other = true;
    return undefined;
  });
  if (other || assigned.length === 0) return undefined;
  const literal = (n: PyNode) => {
    const value = valueAssigned(syntax, n, name);
    const v = value ? unparen(value) : undefined;
    if (!v || (v.type !== 'list' && v.type !== 'tuple')) return undefined;
    const items = named(v).map((i) => stringValue(syntax.source.textOf(i)));
    return items.every((i) => i !== undefined) ? (items as string[]) : undefined;
  };
  const lists = assigned.map((a) => ({ a, items: literal(a) }));
  if (lists.some((l) => l.items === undefined)) return undefined;
  if (appends.length === 0) {
    return lists.map((l) => ({
      entries: l.items!.map((n) => ({ name: n, guards: [] })),
      guards: guardsOf(syntax, l.a, fn),
    }));
  }
  // Built by appends: one empty start, each append a literal name under its own branches.
  if (lists.length !== 1 || lists[0].items!.length !== 0) return undefined;
  const entries: DimEntry[] = [];
  for (const call of appends) {
    const arg = named(child(call, 'arguments') ?? call)[0];
    const value = arg ? stringValue(syntax.source.textOf(arg)) : undefined;
    if (value === undefined) return undefined;
    entries.push({ name: value, guards: guardsOf(syntax, call, fn) });
  }
  return [{ entries, guards: guardsOf(syntax, lists[0].a, fn) }];
}

/** The value an assignment gives `name`: `name = v`, or element-wise `a, name = x, v`. */
function valueAssigned(syntax: FileSyntax, assignment: PyNode, name: string): PyNode | undefined {
  const left = child(assignment, 'left');
  const right = child(assignment, 'right');
  if (!left || !right) return undefined;
  if (left.type === 'identifier') return syntax.text(left) === name ? right : undefined;
  if (left.type !== 'pattern_list' && left.type !== 'tuple_pattern') return undefined;
  const targets = named(left).map((t) => syntax.text(t));
  const values = right.type === 'expression_list' || right.type === 'tuple' ? named(right) : [];
  const index = targets.indexOf(name);
  return index >= 0 && values.length === targets.length ? values[index] : undefined;
}

/** The dimension names a mesh selection `mesh["a"]`, `mesh["a", "b"]` or `mesh[tuple(names)]` may hold. */
export function selectionLists(syntax: FileSyntax, fn: PyNode, subscript: PyNode): NameList[] | undefined {
  const index = named(subscript).slice(1);
  const strings = index.map((i) => stringValue(syntax.source.textOf(i)));
  if (index.length > 0 && strings.every((s) => s !== undefined)) {
    return [{ entries: (strings as string[]).map((name) => ({ name, guards: [] })), guards: [] }];
  }
  if (index.length !== 1) return undefined;
  const inner = unparen(index[0]);
  const listName =
    inner.type === 'call' && syntax.callee(inner) === 'tuple'
      ? named(child(inner, 'arguments') ?? inner)[0]
      : inner.type === 'identifier'
        ? inner
        : undefined;
  return listName?.type === 'identifier' ? nameLists(syntax, fn, syntax.text(listName)) : undefined;
}

export function readMeshBuilders(syntax: FileSyntax): MeshBuilder[] {
  const out: MeshBuilder[] = [];
  visit(syntax.module, (fn) => {
    if (fn.type !== 'function_definition') return undefined;
    let init: PyNode | undefined;
    const flattenCalls: PyNode[] = [];
    visit(fn, (n) => {
      if (n !== fn && n.type === 'function_definition') return false;
      if (n.type !== 'call') return undefined;
      if (INIT_DEVICE_MESH.test(syntax.qualified(syntax.callee(n)))) init = n;
      if (syntax.callee(n).endsWith('._flatten')) flattenCalls.push(n);
      return undefined;
    });
    const names = init && initNames(syntax, fn, init);
    if (!names) return false;
    const flattens = new Map<string, readonly DimEntry[]>();
    for (const call of flattenCalls) {
      const flat = syntax.arg(call, 0, 'mesh_dim_name');
      const flatName = flat ? stringValue(syntax.source.textOf(flat)) : undefined;
      const object = unparen(child(child(call, 'function'), 'object') ?? call);
      const lists = object.type === 'subscript' ? selectionLists(syntax, fn, object) : undefined;
      // A name flattened twice, or from a list built in more than one way, is not read.
      if (!flatName || !lists || lists.length !== 1 || flattens.has(flatName)) {
        if (flatName) flattens.set(flatName, []);
        continue;
      }
      flattens.set(flatName, lists[0].entries);
    }
    for (const [flatName, entries] of flattens) if (entries.length === 0) flattens.delete(flatName);
    out.push({ fn: syntax.text(child(fn, 'name') ?? fn), names, flattens });
    return false;
  });
  return out;
}

/** The names `init_device_mesh` may be given: a literal list, or the names of a `zip` loop appended to a list. */
function initNames(syntax: FileSyntax, fn: PyNode, init: PyNode): Set<string> | undefined {
  const arg = syntax.arg(init, 2, 'mesh_dim_names');
  if (!arg) return undefined;
  const v = unparen(arg);
  if (v.type === 'list' || v.type === 'tuple') {
    const items = named(v).map((i) => stringValue(syntax.source.textOf(i)));
    return items.every((i) => i !== undefined) ? new Set(items as string[]) : undefined;
  }
  if (v.type !== 'identifier') return undefined;
  const list = syntax.text(v);
  const names = new Set<string>();
  let unread = false;
  visit(fn, (n) => {
    if (n.type !== 'call' || syntax.callee(n) !== `${list}.append`) return undefined;
    const item = named(child(n, 'arguments') ?? n)[0];
    const literal = item ? stringValue(syntax.source.textOf(item)) : undefined;
    if (literal !== undefined) names.add(literal);
    else if (!item || !zipNames(syntax, n, syntax.text(item), names)) unread = true;
    return undefined;
  });
  return unread || names.size === 0 ? undefined : names;
}

/** `for size, name in zip(sizes, ["a", "b"])` around `at`: the literal names `name` takes. */
function zipNames(syntax: FileSyntax, at: PyNode, variable: string, into: Set<string>): boolean {
  for (let n = at.parent; n; n = n.parent) {
    if (n.type !== 'for_statement') continue;
    const left = child(n, 'left');
    const right = child(n, 'right');
    if (!left || !right || right.type !== 'call' || syntax.callee(right) !== 'zip') return false;
    const targets = named(left).map((t) => syntax.text(t));
    const position = targets.indexOf(variable);
    const source = named(child(right, 'arguments') ?? right)[position];
    if (position < 0 || !source || source.type !== 'list') return false;
    const items = named(source).map((i) => stringValue(syntax.source.textOf(i)));
    if (items.some((i) => i === undefined)) return false;
    items.forEach((i) => into.add(i!));
    return true;
  }
  return false;
}

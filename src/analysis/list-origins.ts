// What a list passed to a constructor holds, when its function shows every element put in it. Frameworks rarely
// write the list at the site: they gather it first (`buckets = []`, `buckets.append(Bucket(grads, factor))`,
// `buckets.extend([...])`, `[first] + rest`). A local list counts only when the function proves its contents: it is
// bound once, to a list expression that is followed in turn, and every other use of its name is an `append` or
// `extend` in the same function, or the site's argument itself. Any other use (a call that may
// grow it, an index write, an alias, a nested function, `global`) leaves its contents unknown; reading it into a
// new list (`[x] + name`, `other.extend(name)`) does not change it.
import { child, named, unparen, visit, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';

/** Whether an element is one the caller can read (a construction of a known class). */
export type IsElement = (item: PyNode) => boolean;

/**
 * The nodes the list expression holds: a list literal's items, the two sides of `+`, or a local list's items;
 * undefined when one of them is not an element, or the list's contents are not all in view.
 */
export function listItems(model: FileModel, node: PyNode, isElement: IsElement): PyNode[] | undefined {
  const fn = model.enclosingFunction(node);
  return fn ? itemsOf(model, fn, unparen(node), { isElement, site: node, following: new Set() }) : undefined;
}

/** The reader's state: what an element is, the site's argument, and the local lists being followed (no cycles). */
interface Reading {
  readonly isElement: IsElement;
  readonly site: PyNode;
  readonly following: Set<string>;
}

function itemsOf(model: FileModel, fn: FunctionInfo, node: PyNode, r: Reading): PyNode[] | undefined {
  if (node.type === 'list') {
    const items = named(node);
    return items.every((item) => item.type !== 'list_splat' && r.isElement(item)) ? items : undefined;
  }
  if (node.type === 'binary_operator' && model.syntax.operator(node) === '+') {
    const left = child(node, 'left');
    const right = child(node, 'right');
    const a = left ? itemsOf(model, fn, unparen(left), r) : undefined;
    const b = right && a ? itemsOf(model, fn, unparen(right), r) : undefined;
    return a && b ? [...a, ...b] : undefined;
  }
  if (node.type !== 'identifier') return undefined;
  const name = model.syntax.text(node);
  if (r.following.has(name) || fn.node.type !== 'function_definition' || fn.params.some((p) => p.name === name))
    return undefined;
  r.following.add(name);
  const items = localListItems(model, fn, name, r);
  r.following.delete(name);
  return items;
}

/** The items of a local list `name`: its one binding's, then those of each `append` and `extend`. */
function localListItems(model: FileModel, fn: FunctionInfo, name: string, r: Reading): PyNode[] | undefined {
  const s = model.syntax;
  let binding: PyNode | undefined;
  const grown: PyNode[] = [];
  let unknown = false;
  visit(fn.node, (n) => {
    if (unknown) return false;
    if (/^(global|nonlocal)_statement$/.test(n.type) && s.text(n).includes(name)) unknown = true;
    if (n.type !== 'identifier' || s.text(n) !== name || n === child(fn.node, 'name') || !isVariable(n)) return true;
    const use = n === r.site ? 'read' : useOf(model, fn, n, r.isElement);
    if (use === 'binding' && !binding) binding = n.parent!;
    else if (use === 'read') return true;
    else if (use && use !== 'binding') grown.push(use);
    else unknown = true;
    return true;
  });
  const right = binding ? child(binding, 'right') : undefined;
  if (unknown || !right) return undefined;
  const items = itemsOf(model, fn, unparen(right), r);
  if (!items) return undefined;
  for (const g of grown) {
    if (r.isElement(g)) items.push(g);
    else {
      const more = itemsOf(model, fn, unparen(g), r);
      if (!more) return undefined;
      items.push(...more);
    }
  }
  return items;
}

/**
 * What one occurrence of the list's name does: binds it (`name = ...`, in the function itself), reads it into a new
 * list (`read`), or grows it by the returned node (an appended element, or an extending list expression); undefined
 * for anything else.
 */
function useOf(
  model: FileModel,
  fn: FunctionInfo,
  n: PyNode,
  isElement: IsElement,
): 'binding' | 'read' | PyNode | undefined {
  const parent = n.parent;
  if (!parent || model.enclosingFunction(n) !== fn) return undefined;
  if (parent.type === 'assignment' && child(parent, 'left') === n && !child(parent, 'type')) return 'binding';
  if (parent.type === 'binary_operator' && model.syntax.operator(parent) === '+') return 'read';
  if (parent.type === 'argument_list' && isExtend(model, parent.parent)) return 'read';
  // A loop over the list, an element read by index, `len(...)` and `return` (alone or in a tuple) read it.
  if (parent.type === 'for_statement' && child(parent, 'right') === n) return 'read';
  if (parent.type === 'subscript' && child(parent, 'value') === n && !isTarget(parent)) return 'read';
  if (parent.type === 'argument_list' && named(parent).length === 1 && isCall(model, parent.parent, 'len'))
    return 'read';
  if (parent.type === 'return_statement') return 'read';
  if (parent.type === 'expression_list' && parent.parent?.type === 'return_statement') return 'read';
  if (parent.type !== 'attribute' || child(parent, 'object') !== n) return undefined;
  const method = model.syntax.text(child(parent, 'attribute') ?? parent);
  const call = parent.parent;
  if (call?.type !== 'call' || child(call, 'function') !== parent || (method !== 'append' && method !== 'extend'))
    return undefined;
  const args = named(child(call, 'arguments') ?? call);
  if (args.length !== 1 || args[0].type === 'keyword_argument' || args[0].type === 'list_splat') return undefined;
  return method === 'append' && !isElement(args[0]) ? undefined : args[0];
}

/** A subscript written, deleted or augmented (`xs[0] = ...`, `del xs[0]`, `xs[0] += ...`). */
function isTarget(n: PyNode): boolean {
  const p = n.parent;
  if (p?.type === 'delete_statement' || p?.type === 'expression_list' || p?.type === 'pattern_list') return true;
  return !!p && /^(augmented_)?assignment$/.test(p.type) && child(p, 'left') === n;
}

function isCall(model: FileModel, call: PyNode | null | undefined, name: string): boolean {
  const callee = call?.type === 'call' ? child(call, 'function') : undefined;
  return callee?.type === 'identifier' && model.syntax.text(callee) === name;
}

function isExtend(model: FileModel, call: PyNode | null | undefined): boolean {
  const callee = call?.type === 'call' ? child(call, 'function') : undefined;
  return callee?.type === 'attribute' && model.syntax.text(child(callee, 'attribute') ?? callee) === 'extend';
}

/** An identifier that names a variable: not an attribute's name (`self.experts`) nor a keyword (`experts=...`). */
function isVariable(n: PyNode): boolean {
  const p = n.parent;
  if (p?.type === 'attribute') return child(p, 'object') === n;
  if (p?.type === 'keyword_argument') return child(p, 'value') === n;
  return true;
}

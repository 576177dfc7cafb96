// The caller's side of a top-level function's per-call sites (parameter-paths.ts, per-call-links.ts). DDP's nested
// `_allocate_buffers_for_parameters` gathers `buffers` from one construction of `_ParamAndGradBuffer` appended in a
// loop and passes the list to `partition_buckets`, imported from the buffer's file. Each construction site of the
// file notes the calls of a top-level function (imported, or defined in the same file) whose argument is a local
// list holding only that construction (list-origins.ts: bound once, grown only by its appends, otherwise only read
// or passed to that call), and which of its arguments change between the iterations of a loop around it: an
// element's argument pairs with another element's only when every element was built with the same value.
import { child, hasSplat, named, visit, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import { listItems } from './list-origins';
import { loopIterable } from './listed-elements';

/** A call's argument slot that receives a list of the site's objects: the function by its module and name. */
export interface CallSlot {
  /** The dotted module the function is imported from; undefined when it is defined in the same file. */
  readonly module?: string;
  readonly function: string;
  readonly position?: number;
  readonly keyword?: string;
}

/** The slots that receive a local list holding only the construction `call` of `fn`. */
export function listedSlots(model: FileModel, call: PyNode, fn: FunctionInfo): CallSlot[] {
  let known = slotsByFunction.get(fn);
  if (!known) slotsByFunction.set(fn, (known = slotsOf(model, fn)));
  return known.get(call) ?? [];
}

/** Per function, the slots each construction's list reaches (read once per function: files have many sites). */
const slotsByFunction = new WeakMap<FunctionInfo, Map<PyNode, CallSlot[]>>();

/**
 * Every call in `fn` of a top-level function whose argument is a local list, bound in `fn` to a list literal, that
 * holds one construction only, by that construction. Top-level code holds no such list (list-origins.ts).
 */
function slotsOf(model: FileModel, fn: FunctionInfo): Map<PyNode, CallSlot[]> {
  const s = model.syntax;
  const out = new Map<PyNode, CallSlot[]>();
  if (fn.node.type !== 'function_definition') return out;
  const lists = new Set(
    fn.assignments.flatMap((a) => {
      const left = child(a, 'left');
      const right = child(a, 'right');
      return left?.type === 'identifier' && right?.type === 'list' ? [s.text(left)] : [];
    }),
  );
  if (lists.size === 0) return out;
  const held = new Map<string, PyNode | undefined>();
  const construction = (name: string): PyNode | undefined => {
    if (!held.has(name)) held.set(name, oneConstruction(model, fn, name));
    return held.get(name);
  };
  for (const other of fn.calls) {
    const callee = child(other, 'function');
    if (callee?.type !== 'identifier') continue;
    const argList = child(other, 'arguments');
    const args = s.args(other);
    const named = [...args.positional, ...[...args.keywords.values()].map((k) => k.value)];
    if (!named.some((node) => node.type === 'identifier' && lists.has(s.text(node)))) continue;
    const target = topLevelFunction(model, s.text(callee));
    if (!target || hasSplat(argList)) continue;
    const add = (node: PyNode, slot: CallSlot) => {
      const built = node.type === 'identifier' && lists.has(s.text(node)) ? construction(s.text(node)) : undefined;
      if (!built) return;
      // The list is read at this call: the call is its site, so listItems counts the argument as a read.
      const items = listItems(model, node, (item) => item === built);
      if (items && items.length > 0 && items.every((item) => item === built))
        out.set(built, [...(out.get(built) ?? []), slot]);
    };
    args.positional.forEach((node, position) => add(node, { ...target, position }));
    for (const [keyword, k] of args.keywords) add(k.value, { ...target, keyword });
  }
  return out;
}

/**
 * The one construction a local list of `fn` is grown by (`name.append(C(...))`), when no element of it is written;
 * the list's other uses are checked at each call that reads it.
 */
function oneConstruction(model: FileModel, fn: FunctionInfo, name: string): PyNode | undefined {
  if (elementWritten(model, fn, name)) return undefined;
  const s = model.syntax;
  const appended = fn.calls.flatMap((c) => {
    const callee = child(c, 'function');
    const object = callee?.type === 'attribute' ? child(callee, 'object') : undefined;
    if (object?.type !== 'identifier' || s.text(object) !== name) return [];
    if (s.text(child(callee!, 'attribute') ?? callee!) !== 'append') return [];
    const args = named(child(c, 'arguments') ?? c);
    return args.length === 1 && args[0].type === 'call' ? [args[0]] : [];
  });
  return appended.length === 1 ? appended[0] : undefined;
}

/**
 * The function a name calls: one imported from another module (`from .buffers import partition`), or defined once
 * at the top level of this file; undefined for anything else (a class, a local, a method).
 */
function topLevelFunction(model: FileModel, name: string): { module?: string; function: string } | undefined {
  let known = resolved.get(model);
  if (!known) resolved.set(model, (known = new Map()));
  if (!known.has(name)) known.set(name, resolveFunction(model, name));
  return known.get(name);
}

/** The functions each name calls, per file model (a file has many constructions, each asking of every call). */
const resolved = new WeakMap<FileModel, Map<string, { module?: string; function: string } | undefined>>();

function resolveFunction(model: FileModel, name: string): { module?: string; function: string } | undefined {
  const imported = model.moduleOf(name);
  if (imported) {
    const cut = imported.lastIndexOf('.');
    return cut > 0 && imported.slice(cut + 1) === name && !/^[A-Z_]*[A-Z]/.test(name)
      ? { module: imported.slice(0, cut), function: name }
      : undefined;
  }
  const defined = model.functions.filter((f) => f.name === name && f.enclosing?.node.type === 'module');
  const local = model.functions.some((f) => f.name === name && f.enclosing?.node.type !== 'module');
  return defined.length === 1 && !defined[0].className && !local ? { function: name } : undefined;
}

/**
 * The site's arguments (positions, then keyword names) that read a name a loop around the construction binds in its
 * function: they may differ between the list's elements.
 */
export function loopVaryingArguments(model: FileModel, call: PyNode, fn: FunctionInfo): Set<string> {
  const s = model.syntax;
  const args = s.args(call);
  const loopBound = new Set<string>();
  for (let at = call.parent; at && at !== fn.node; at = at.parent) {
    if (at.type !== 'for_statement' && at.type !== 'while_statement') continue;
    visit(at, (n) => {
      if (n.type !== 'identifier' && n.type !== 'attribute') return true;
      let target = n;
      while (target.parent && /^(pattern_list|tuple_pattern|list_pattern|tuple|list)$/.test(target.parent.type))
        target = target.parent;
      const holder = target.parent;
      if (holder && /^(augmented_)?assignment$|^for_statement$|^for_in_clause$/.test(holder.type))
        if (child(holder, 'left') === target) loopBound.add(s.text(n));
      if (n.parent?.type === 'named_expression') loopBound.add(s.text(n));
      return true;
    });
  }
  const reads = (node: PyNode) => {
    let found = false;
    visit(node, (n) => {
      if ((n.type === 'identifier' || n.type === 'attribute') && loopBound.has(s.text(n))) found = true;
      return !found;
    });
    return found;
  };
  const out = new Set<string>();
  args.positional.forEach((node, i) => {
    if (reads(node)) out.add(String(i));
  });
  for (const [name, k] of args.keywords) if (reads(k.value)) out.add(name);
  return out;
}

/**
 * The function writes an attribute of an element of the list (`buffers[0].group = ...`, or of the variable of a loop
 * over it): the element no longer holds what its construction passed.
 */
function elementWritten(model: FileModel, fn: FunctionInfo, list: string): boolean {
  const s = model.syntax;
  let found = false;
  visit(fn.node, (n) => {
    if (found) return false;
    const holder = n.parent;
    if (n.type !== 'attribute' || !holder || !/^(augmented_)?assignment$/.test(holder.type)) return true;
    if (child(holder, 'left') !== n) return true;
    let object = child(n, 'object');
    while (object?.type === 'attribute') object = child(object, 'object');
    const base = object?.type === 'subscript' ? child(object, 'value') : object;
    const iterable = object?.type === 'identifier' ? loopIterable(model, object, fn) : undefined;
    found =
      (object?.type === 'subscript' && base?.type === 'identifier' && s.text(base) === list) ||
      (iterable?.type === 'identifier' && s.text(iterable) === list);
    return !found;
  });
  return found;
}

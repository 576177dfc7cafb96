// The construction sites of a top-level function, as paths over its list parameters. Megatron's `partition_buckets`
// (param_and_grad_buffer.py) builds every bucket group from `buffers`, its parameter: the group is
// `buffer.data_parallel_group` of `for buffer in buffers` (or of `buffers[0]`), the buckets are the elements of
// `buffer.buckets`. The function cannot say what those are, but a caller in another file that passes a list of one
// construction can (per-call-links.ts): so the file that defines the function records, for each site in it, each
// argument as a path from a parameter to the constructor argument of the list's element class that it reads, with
// the constructor parameter by name and by position, because the caller's construction may pass it either way.
import { child, hasSplat, named, unparen, visit, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import { listItems } from './list-origins';
import { builtElementClass, builtElementParam, classInit, storedParameter } from './built-elements';
import { extends_, loopIterable, onlyRead, storedAttribute } from './listed-elements';
import { placeOf, type ProgramPlace } from './constructor-request';

/** A constructor parameter of a class of the defining file, by name and by its position among the call's. */
export interface ConstructorSlot {
  readonly param: string;
  readonly position: number;
}

/** `e.attr` for an element `e` of the list parameter: per element class of the file, the slot the attribute stores. */
export interface ElementAttributePath {
  readonly kind: 'attribute';
  readonly listParam: string;
  readonly byClass: ReadonlyMap<string, ConstructorSlot>;
}

/**
 * A list whose every item is an element of `e.items` for an element `e` of the list parameter: per owner class, the
 * class of the objects it builds into `self.items` and, per parameter of theirs, the owner's slot that fills it.
 */
export interface OwnedListPath {
  readonly kind: 'owned';
  readonly listParam: string;
  readonly byClass: ReadonlyMap<string, OwnedElements>;
}

export interface OwnedElements {
  readonly elementClass: string;
  readonly slots: ReadonlyMap<string, ConstructorSlot>;
}

export type ParameterPath = ElementAttributePath | OwnedListPath;

/** A construction site in the function: the class (of the same file) and each argument's path, if it has one. */
export interface TemplateSite {
  readonly className: string;
  readonly place: ProgramPlace;
  readonly positional: readonly (ParameterPath | undefined)[];
  readonly keywords: ReadonlyMap<string, ParameterPath | undefined>;
}

/** A top-level function whose sites read its list parameters, with its parameters in order. */
export interface FunctionTemplate {
  readonly name: string;
  readonly params: readonly string[];
  readonly sites: readonly TemplateSite[];
}

const MAX_FOLLOW = 3;

/** The templates of the file's top-level functions (each defined once) whose sites read a list parameter. */
export function functionTemplates(model: FileModel): FunctionTemplate[] {
  const topLevel = model.functions.filter(
    (f) => f.node.type === 'function_definition' && f.enclosing?.node.type === 'module' && !f.className,
  );
  const out: FunctionTemplate[] = [];
  for (const fn of topLevel) {
    if (topLevel.filter((f) => f.name === fn.name).length !== 1) continue;
    const lists = new Set(fn.params.map((p) => p.name).filter((name) => onlyRead(model, fn, name)));
    if (lists.size === 0) continue;
    const sites: TemplateSite[] = [];
    for (const call of fn.calls) {
      const callee = child(call, 'function');
      const className = callee?.type === 'identifier' ? model.syntax.text(callee) : undefined;
      const argList = child(call, 'arguments');
      if (!className || !classInit(model, className)) continue;
      if (hasSplat(argList)) continue;
      const args = model.syntax.args(call);
      const positional = args.positional.map((node) => argumentPath(model, fn, lists, node, 0));
      const keywords = new Map(
        [...args.keywords].map(([name, k]) => [name, argumentPath(model, fn, lists, k.value, 0)] as const),
      );
      if (positional.some(Boolean) || [...keywords.values()].some(Boolean))
        sites.push({ className, place: placeOf(model, call), positional, keywords });
    }
    if (sites.length > 0) out.push({ name: fn.name, params: fn.params.map((p) => p.name), sites });
  }
  return out;
}

/** The path of one argument: a list of owned elements, an element's attribute, or a local bound once to either. */
function argumentPath(
  model: FileModel,
  fn: FunctionInfo,
  lists: ReadonlySet<string>,
  node: PyNode,
  depth: number,
): ParameterPath | undefined {
  const v = unparen(node);
  const owned = ownedList(model, fn, lists, v);
  if (owned) return owned;
  if (v.type === 'attribute') {
    const object = child(v, 'object');
    const attribute = child(v, 'attribute');
    const listParam = object ? elementOfParameter(model, fn, lists, unparen(object), depth) : undefined;
    return listParam && attribute ? attributePath(model, listParam, model.syntax.text(attribute)) : undefined;
  }
  const bound = v.type === 'identifier' && depth < MAX_FOLLOW ? singleBinding(model, fn, v) : undefined;
  return bound ? argumentPath(model, fn, lists, bound, depth + 1) : undefined;
}

function attributePath(model: FileModel, listParam: string, attribute: string): ElementAttributePath | undefined {
  const byClass = new Map<string, ConstructorSlot>();
  for (const className of classNames(model)) {
    const init = classInit(model, className)!;
    const param = storedParameter(model, init, attribute);
    const slot = param ? slotOf(model, init, param) : undefined;
    if (slot) byClass.set(className, slot);
  }
  return byClass.size > 0 ? { kind: 'attribute', listParam, byClass } : undefined;
}

/** A list every item of which is an element of the same `e.items`, `e` an element of a list parameter. */
function ownedList(
  model: FileModel,
  fn: FunctionInfo,
  lists: ReadonlySet<string>,
  node: PyNode,
): OwnedListPath | undefined {
  if (node.type !== 'list' && node.type !== 'binary_operator' && node.type !== 'identifier') return undefined;
  if (node.type === 'identifier' && fn.params.some((p) => p.name === model.syntax.text(node))) return undefined;
  const origin = new Map<PyNode, string>();
  const isItem = (item: PyNode): boolean => {
    let list: PyNode | undefined;
    if (item.type === 'attribute' && extends_(model, item)) list = item;
    else if (item.type === 'identifier' && !extends_(model, item)) list = loopIterable(model, item, fn);
    const owned = list ? ownedListKey(model, fn, lists, unparen(list)) : undefined;
    if (owned) origin.set(item, owned);
    return !!owned;
  };
  const items = listItems(model, node, isItem);
  const keys = new Set(items?.map((item) => origin.get(item)));
  if (!items || items.length === 0 || keys.size !== 1) return undefined;
  const [listParam, itemsName] = [...keys][0]!.split('.');
  const byClass = new Map<string, OwnedElements>();
  for (const className of classNames(model)) {
    const ownerInit = classInit(model, className)!;
    const elementClass = builtElementClass(model, ownerInit, `self.${itemsName}`);
    const elementInit = elementClass ? classInit(model, elementClass) : undefined;
    if (!elementClass || !elementInit) continue;
    const slots = new Map<string, ConstructorSlot>();
    for (const p of model.callableParams(elementInit)) {
      const stored = storedAttribute(model, elementInit, p.name);
      const ownerParam = stored ? builtElementParam(model, ownerInit, `self.${itemsName}`, stored) : undefined;
      const slot = ownerParam ? slotOf(model, ownerInit, ownerParam) : undefined;
      if (slot) slots.set(p.name, slot);
    }
    if (slots.size > 0) byClass.set(className, { elementClass, slots });
  }
  return byClass.size > 0 ? { kind: 'owned', listParam, byClass } : undefined;
}

/** `param.items` for `e.items`, `e` an element of a list parameter, when the function only loops over it. */
function ownedListKey(
  model: FileModel,
  fn: FunctionInfo,
  lists: ReadonlySet<string>,
  list: PyNode,
): string | undefined {
  const object = list.type === 'attribute' ? child(list, 'object') : undefined;
  const items = list.type === 'attribute' ? child(list, 'attribute') : undefined;
  const listParam = object ? elementOfParameter(model, fn, lists, unparen(object), 0) : undefined;
  if (!listParam || !items) return undefined;
  const name = model.syntax.text(items);
  return onlyIterated(model, fn, name) ? `${listParam}.${name}` : undefined;
}

/** Every `x.items` in the function is a loop's iterable, an `extend` argument or measured by `len`: never grown. */
function onlyIterated(model: FileModel, fn: FunctionInfo, items: string): boolean {
  let ok = true;
  visit(fn.node, (n) => {
    if (!ok || n.type !== 'attribute' || model.syntax.text(child(n, 'attribute') ?? n) !== items) return ok;
    const p = n.parent;
    const call = p?.type === 'argument_list' ? p.parent : undefined;
    const measured = call?.type === 'call' && model.syntax.calleeText(call) === 'len' && named(p!).length === 1;
    ok = (p?.type === 'for_statement' && child(p, 'right') === n) || extends_(model, n) || measured;
    return ok;
  });
  return ok;
}

/** The list parameter whose element the node is: `param[k]`, a loop variable over it, or a local bound once to one. */
function elementOfParameter(
  model: FileModel,
  fn: FunctionInfo,
  lists: ReadonlySet<string>,
  node: PyNode,
  depth: number,
): string | undefined {
  let list: PyNode | undefined;
  if (node.type === 'subscript') {
    const index = child(node, 'subscript');
    if (index?.type === 'integer') list = child(node, 'value');
  } else if (node.type === 'identifier') {
    list = loopIterable(model, node, fn);
    if (!list && depth < MAX_FOLLOW) {
      const bound = singleBinding(model, fn, node);
      return bound ? elementOfParameter(model, fn, lists, unparen(bound), depth + 1) : undefined;
    }
  }
  const name = list && unparen(list).type === 'identifier' ? model.syntax.text(unparen(list)) : undefined;
  return name && lists.has(name) ? name : undefined;
}

/** The value of a local bound exactly once in the function, by a plain `name = value`; undefined otherwise. */
function singleBinding(model: FileModel, fn: FunctionInfo, use: PyNode): PyNode | undefined {
  const s = model.syntax;
  const name = s.text(use);
  if (fn.params.some((p) => p.name === name)) return undefined;
  let value: PyNode | undefined;
  let bindings = 0;
  visit(fn.node, (n) => {
    if (n.type !== 'identifier' || s.text(n) !== name) return true;
    let target = n;
    while (target.parent && /^(pattern_list|tuple_pattern|list_pattern|tuple|list)$/.test(target.parent.type))
      target = target.parent;
    const holder = target.parent;
    if (holder && /^(augmented_)?assignment$|^for_statement$|^for_in_clause$/.test(holder.type)) {
      if (child(holder, 'left') !== target) return true;
      bindings++;
      if (holder.type === 'assignment' && target === n) value = child(holder, 'right') ?? undefined;
    } else if (/^(named_expression|as_pattern_target|global_statement|nonlocal_statement)$/.test(n.parent?.type ?? ''))
      bindings++;
    return true;
  });
  return bindings === 1 && value && value.start < use.start ? value : undefined;
}

function classNames(model: FileModel): string[] {
  const names = new Set(model.functions.filter((f) => f.name === '__init__' && f.className).map((f) => f.className!));
  return [...names].filter((name) => classInit(model, name));
}

function slotOf(model: FileModel, init: FunctionInfo, param: string): ConstructorSlot | undefined {
  const position = model.callableParams(init).findIndex((p) => p.name === param);
  return position >= 0 ? { param, position } : undefined;
}

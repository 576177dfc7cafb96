// The elements of a list read one at a time: Megatron's `partition_buckets` builds each bucket group from
// `for buffer in buffers: for bucket in buffer.buckets:` with `buffer.data_parallel_group`, or from every buffer's
// buckets with `buffers[0].data_parallel_group`. An attribute read from such an element is what the element's
// construction passed for the constructor parameter the attribute stores; an element of a list the element built
// itself (`buffer.buckets`, built-elements.ts) holds what its builder's construction passed. A group read from one
// element pairs with a factor read from another only because both are the same construction: so the list must hold
// one construction node (appended in a loop), its argument must not change between the loop's iterations, and the
// list must be in view whole (list-origins.ts), only read where the element is read.
import { child, hasSplat, named, unparen, visit, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { Env } from './sizes';
import { listItems } from './list-origins';
import { builtElementClass, builtElementParam, classInit, storedParameter } from './built-elements';

/** A construction of a class of this file, with the environment its arguments are read in. */
interface Built {
  readonly call: PyNode;
  readonly env: Env;
  readonly className: string;
}

/** An element is an object built at one construction, or an element of a list attribute such an object built. */
type Element = { readonly built: Built } | { readonly owner: Built; readonly items: string };

/** An argument node and the environment to read it in. */
export interface PassedArgument {
  readonly node: PyNode;
  readonly env: Env;
}

const MAX_DEPTH = 3;

/** What `element.attr` holds, read as the argument its construction passed; undefined unless every step is proven. */
export function listedElementArgument(model: FileModel, n: PyNode, env: Env): PassedArgument | undefined {
  const object = child(n, 'object');
  const attribute = child(n, 'attribute');
  if (n.type !== 'attribute' || !object || !attribute) return undefined;
  const element = elementOf(model, unparen(object), env, 0);
  return element ? attributeArgument(model, element, model.syntax.text(attribute)) : undefined;
}

/**
 * An element read at a site's list argument as the elements' constructor arguments by name (element-sites.ts):
 * `buffer` of a list of one construction gives that construction's arguments; `bucket` of `buffer.buckets`, or
 * `buffer.buckets` itself where a list extends by it, gives what the buffer's construction passed for each
 * parameter its buckets store.
 */
export function listedElementCall(
  model: FileModel,
  item: PyNode,
): { className: string; positionalCount: number; names: string[]; nodes: PyNode[] } | undefined {
  const fn = model.enclosingFunction(item);
  if (!fn || fn.node.type !== 'function_definition') return undefined;
  const env: Env = { fn };
  const extending = extends_(model, item);
  let element: Element | undefined;
  if (item.type === 'identifier' && !extending) element = elementOf(model, item, env, 0);
  else if (item.type === 'attribute' && extending) element = ownedList(model, item, env, 0);
  if (!element) return undefined;
  if ('built' in element) {
    const args = model.syntax.args(element.built.call);
    if (!unpacked(element.built.call) || !loopInvariant(model, element.built, element.built.call)) return undefined;
    const names = [...args.keywords.keys()];
    const nodes = [...args.positional, ...names.map((name) => args.keywords.get(name)!.value)];
    return { className: element.built.className, positionalCount: args.positional.length, names, nodes };
  }
  const ownerInit = classInit(model, element.owner.className);
  const className = ownerInit ? builtElementClass(model, ownerInit, `self.${element.items}`) : undefined;
  const elementInit = className ? classInit(model, className) : undefined;
  if (!ownerInit || !className || !elementInit) return undefined;
  const names: string[] = [];
  const nodes: PyNode[] = [];
  for (const p of model.callableParams(elementInit)) {
    const stored = storedAttribute(model, elementInit, p.name);
    const ownerParam = stored ? builtElementParam(model, ownerInit, `self.${element.items}`, stored) : undefined;
    const passed = ownerParam ? passedFor(model, element.owner, ownerInit, ownerParam) : undefined;
    if (!passed) continue;
    names.push(p.name);
    nodes.push(passed.node);
  }
  return names.length > 0 ? { className, positionalCount: 0, names, nodes } : undefined;
}

/**
 * What `attribute` of every element of a list expression holds (a literal, `a + b`, or a local list), read in `env`:
 * each element a construction of a class of this file or an element read from another list, and all of them the
 * same argument of the same construction; else undefined.
 */
export function elementsArgument(
  model: FileModel,
  list: PyNode,
  env: Env,
  attribute: string,
): PassedArgument | undefined {
  const read = new Map<PyNode, PassedArgument | undefined>();
  const argumentOf = (item: PyNode): PassedArgument | undefined => {
    if (!read.has(item)) {
      const className = constructedClass(model, item);
      const element: Element | undefined = className
        ? { built: { call: item, env, className } }
        : item.type === 'identifier' && !extends_(model, item)
          ? elementOf(model, item, env, 0)
          : item.type === 'attribute' && extends_(model, item)
            ? ownedList(model, item, env, 0)
            : undefined;
      read.set(item, element ? attributeArgument(model, element, attribute) : undefined);
    }
    return read.get(item);
  };
  const items = listItems(model, unparen(list), (item) => !!argumentOf(item));
  const first = items?.[0] ? argumentOf(items[0]) : undefined;
  if (!items || !first) return undefined;
  return items.every((item) => argumentOf(item)?.node === first.node) ? first : undefined;
}

function attributeArgument(model: FileModel, element: Element, attribute: string): PassedArgument | undefined {
  if ('built' in element) {
    const init = classInit(model, element.built.className);
    const param = init ? storedParameter(model, init, attribute) : undefined;
    return init && param ? passedFor(model, element.built, init, param) : undefined;
  }
  const init = classInit(model, element.owner.className);
  const param = init ? builtElementParam(model, init, `self.${element.items}`, attribute) : undefined;
  return init && param ? passedFor(model, element.owner, init, param) : undefined;
}

/** The element the object stands for: `L[k]`, or the variable of the innermost loop over a list around the use. */
function elementOf(model: FileModel, object: PyNode, env: Env, depth: number): Element | undefined {
  if (depth > MAX_DEPTH) return undefined;
  let list: PyNode | undefined;
  if (object.type === 'subscript') {
    const index = child(object, 'subscript');
    if (index?.type === 'integer' || index?.type === 'unary_operator') list = child(object, 'value');
  } else if (object.type === 'identifier') list = loopIterable(model, object, env.fn);
  if (!list) return undefined;
  list = unparen(list);
  if (list.type === 'identifier') {
    const built = oneConstruction(model, list, env);
    return built ? { built } : undefined;
  }
  return list.type === 'attribute' ? ownedList(model, list, env, depth + 1) : undefined;
}

/** `owner.items`, where `owner` is an element built at one construction of a class of this file. */
function ownedList(model: FileModel, list: PyNode, env: Env, depth: number): Element | undefined {
  const object = child(list, 'object');
  const items = child(list, 'attribute');
  const owner = object && items ? elementOf(model, unparen(object), env, depth) : undefined;
  return owner && 'built' in owner ? { owner: owner.built, items: model.syntax.text(items!) } : undefined;
}

/**
 * The iterable of the innermost `for <name> in <iterable>:` of the function whose body holds the use, when nothing
 * in that body binds the name again.
 */
export function loopIterable(model: FileModel, use: PyNode, fn: FunctionInfo): PyNode | undefined {
  const s = model.syntax;
  const name = s.text(use);
  for (let at: PyNode | null = use; at && at.parent && at.parent !== fn.node; at = at.parent) {
    const p: PyNode = at.parent;
    if (p.type === 'function_definition' || p.type === 'class_definition' || p.type === 'lambda') return undefined;
    if (p.type !== 'for_statement' || at.field !== 'body') continue;
    const left = child(p, 'left');
    if (left?.type !== 'identifier' || s.text(left) !== name) continue;
    return bindsIn(model, at, new Set([name])) ? undefined : (child(p, 'right') ?? undefined);
  }
  return undefined;
}

/** Whether the node binds one of the names (or attributes, as written) anywhere inside it. */
function bindsIn(model: FileModel, node: PyNode, names: ReadonlySet<string>): boolean {
  const s = model.syntax;
  let found = false;
  visit(node, (n) => {
    if (found) return false;
    const p = n.parent;
    if ((n.type !== 'identifier' && n.type !== 'attribute') || !p || !names.has(s.text(n))) return true;
    let target = n;
    while (target.parent && /^(pattern_list|tuple_pattern|list_pattern|tuple|list)$/.test(target.parent.type))
      target = target.parent;
    const holder = target.parent;
    if (holder && /^(augmented_)?assignment$|^for_statement$|^for_in_clause$/.test(holder.type))
      found = child(holder, 'left') === target;
    else if (p.type === 'named_expression' || p.type === 'as_pattern_target' || p.type === 'global_statement')
      found = true;
    return true;
  });
  return found;
}

/**
 * The one construction every element of the list is: a local list of the function in view whole, or a parameter
 * the call in view binds to one, only read in the function.
 */
function oneConstruction(model: FileModel, list: PyNode, env: Env): Built | undefined {
  const name = model.syntax.text(list);
  let node = list;
  let at = env;
  if (env.fn.params.some((p) => p.name === name)) {
    const binding = env.bindings?.get(name);
    if (!binding || binding.isDefault || !onlyRead(model, env.fn, name)) return undefined;
    node = unparen(binding.node);
    at = binding.env;
  }
  const isConstruction = (item: PyNode) => !!constructedClass(model, item);
  const items = listItems(model, node, isConstruction);
  const className = items && items.length > 0 ? constructedClass(model, items[0]) : undefined;
  if (!items || !className || items.some((item) => item !== items[0])) return undefined;
  return { call: items[0], env: at, className };
}

function constructedClass(model: FileModel, item: PyNode): string | undefined {
  const callee = item.type === 'call' ? child(item, 'function') : undefined;
  const name = callee?.type === 'identifier' ? model.syntax.text(callee) : undefined;
  return name && classInit(model, name) ? name : undefined;
}

/** Every use of the parameter in its function is a loop's iterable, an element read by index, or `len(...)`. */
export function onlyRead(model: FileModel, fn: FunctionInfo, name: string): boolean {
  const s = model.syntax;
  let ok = true;
  visit(fn.node, (n) => {
    if (!ok) return false;
    if (n.type !== 'identifier' || s.text(n) !== name || n.parent?.type === 'parameters') return true;
    const p = n.parent;
    if (p?.type === 'attribute' && child(p, 'object') !== n) return true;
    if (p?.type === 'keyword_argument' && child(p, 'name') === n) return true;
    if (p?.type === 'typed_parameter' || p?.type === 'default_parameter' || p?.type === 'typed_default_parameter')
      return true;
    if (p?.type === 'for_statement' && child(p, 'right') === n) return true;
    if (p?.type === 'subscript' && child(p, 'value') === n && !isWritten(p)) return true;
    if (p?.type === 'argument_list' && named(p).length === 1 && isCallOf(model, p.parent, 'len')) return true;
    ok = false;
    return false;
  });
  return ok;
}

function isWritten(n: PyNode): boolean {
  const p = n.parent;
  if (p?.type === 'delete_statement' || p?.type === 'expression_list') return true;
  return !!p && /^(augmented_)?assignment$/.test(p.type) && child(p, 'left') === n;
}

/** The argument a construction passes for a parameter, when it is the same on every iteration of its loops. */
function passedFor(model: FileModel, built: Built, init: FunctionInfo, param: string): PassedArgument | undefined {
  if (!unpacked(built.call)) return undefined;
  const args = model.syntax.args(built.call);
  const position = model.callableParams(init).findIndex((p) => p.name === param);
  const node = args.keywords.get(param)?.value ?? (position >= 0 ? args.positional[position] : undefined);
  return node && loopInvariant(model, built, node) ? { node, env: built.env } : undefined;
}

/** No `*args` or `**kwargs` hides which argument is which. */
function unpacked(call: PyNode): boolean {
  const list = child(call, 'arguments');
  return !hasSplat(list);
}

/** No loop around the construction in its function binds a name (or attribute) the argument reads. */
function loopInvariant(model: FileModel, built: Built, argument: PyNode): boolean {
  const s = model.syntax;
  const read = new Set<string>();
  visit(argument, (n) => {
    if (n.type === 'identifier' || n.type === 'attribute') read.add(s.text(n));
    return true;
  });
  for (let at = built.call.parent; at && at !== built.env.fn.node; at = at.parent)
    if ((at.type === 'for_statement' || at.type === 'while_statement') && bindsIn(model, at, read)) return false;
  return true;
}

/** The attribute `__init__` stores the parameter in (`self.attr = param`), when it is one. */
export function storedAttribute(model: FileModel, init: FunctionInfo, param: string): string | undefined {
  const s = model.syntax;
  const attributes = init.assignments.flatMap((a) => {
    const left = child(a, 'left');
    const right = child(a, 'right');
    const object = left?.type === 'attribute' ? child(left, 'object') : undefined;
    if (object?.type !== 'identifier' || s.text(object) !== 'self' || right?.type !== 'identifier') return [];
    return s.text(right) === param ? [s.text(child(left!, 'attribute') ?? left!)] : [];
  });
  const found = attributes.find((a) => storedParameter(model, init, a) === param);
  return found;
}

/** The node is the argument of a list's `extend`: its elements, not itself, are added. */
export function extends_(model: FileModel, item: PyNode): boolean {
  return item.parent?.type === 'argument_list' && isMethodCall(model, item.parent.parent, 'extend');
}

function isMethodCall(model: FileModel, call: PyNode | null | undefined, method: string): boolean {
  const callee = call?.type === 'call' ? child(call, 'function') : undefined;
  return callee?.type === 'attribute' && model.syntax.text(child(callee, 'attribute') ?? callee) === method;
}

function isCallOf(model: FileModel, call: PyNode | null | undefined, name: string): boolean {
  const callee = call?.type === 'call' ? child(call, 'function') : undefined;
  return callee?.type === 'identifier' && model.syntax.text(callee) === name;
}

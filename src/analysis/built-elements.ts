// A list attribute an object builds itself: Megatron's gradient buffer starts `self.buckets = []` in `__init__` and
// grows it there with `self.buckets.append(self._new_bucket(...))`, where `_new_bucket` returns
// `_ParamAndGradBucket(..., gradient_scaling_factor=self.gradient_scaling_factor)`. An attribute read from an element
// (`bucket.gradient_scaling_factor`) is then the owner's own constructor parameter that `self.gradient_scaling_factor`
// holds, so the owner's construction sites answer it as they answer `self.gradient_scaling_factor`. Every step must be
// proven: the list is bound once to `[]`, only grown in `__init__` by appends of one method's result and otherwise only
// read; the method is defined once among the related classes of the file and returns a construction of one class of
// the file; and each construction passes, for the element's stored parameter, the same owner attribute.
import { child, hasSplat, named, unparen, visit, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';

/**
 * The `__init__` parameter of `init`'s class that the attribute `attribute` of every element of `items` (`self.xs`)
 * holds, when `init` builds the list as above; else undefined.
 */
export function builtElementParam(
  model: FileModel,
  init: FunctionInfo,
  items: string,
  attribute: string,
): string | undefined {
  const stored = model.valuesSeenBy(items, init);
  const empty = stored.length === 1 && stored[0].fn === init ? unparen(stored[0].value) : undefined;
  if (empty?.type !== 'list' || named(empty).length > 0) return undefined;
  const appended = appendedValues(model, init, items, empty);
  if (!appended || appended.length === 0) return undefined;
  let owner: string | undefined;
  for (const value of appended) {
    const constructions = value.type === 'call' ? returnedConstructions(model, init, value) : undefined;
    if (!constructions) return undefined;
    for (const call of constructions) {
      const param = ownerParameterPassed(model, init, call, attribute);
      if (!param || (owner !== undefined && owner !== param)) return undefined;
      owner = param;
    }
  }
  return owner;
}

/** The one class of the file whose objects `init` appends to its list `items` (`self.xs`), built as above. */
export function builtElementClass(model: FileModel, init: FunctionInfo, items: string): string | undefined {
  const stored = model.valuesSeenBy(items, init);
  const empty = stored.length === 1 && stored[0].fn === init ? unparen(stored[0].value) : undefined;
  if (empty?.type !== 'list' || named(empty).length > 0) return undefined;
  const names = new Set<string>();
  for (const value of appendedValues(model, init, items, empty) ?? []) {
    const built = value.type === 'call' ? returnedConstructions(model, init, value) : undefined;
    if (!built) return undefined;
    for (const call of built) names.add(model.syntax.text(child(call, 'function') ?? call));
  }
  return names.size === 1 ? [...names][0] : undefined;
}

/**
 * The values appended to the list in `__init__`, when every other occurrence of it in the related classes is its one
 * binding to `empty` or a read (`len(...)`, `enumerate(...)`, a `for` loop's iterable, an element read by index).
 */
function appendedValues(model: FileModel, init: FunctionInfo, items: string, empty: PyNode): PyNode[] | undefined {
  const s = model.syntax;
  const [, name] = items.split('.');
  const out: PyNode[] = [];
  let unknown = false;
  visit(model.module, (n) => {
    if (unknown) return false;
    if (n.type !== 'attribute' || s.text(child(n, 'attribute') ?? n) !== name) return true;
    const object = child(n, 'object');
    if (object?.type !== 'identifier' || s.text(object) !== 'self') return true;
    const fn = model.enclosingFunction(n);
    if (!fn?.className || !related(model, fn.className, init.className!)) return true;
    const p = n.parent;
    if (p?.type === 'assignment' && child(p, 'left') === n && child(p, 'right') === empty) return true;
    if (p?.type === 'for_statement' && child(p, 'right') === n) return true;
    if (p?.type === 'subscript' && child(p, 'value') === n && !isWriteTarget(p)) return true;
    if (p?.type === 'argument_list' && named(p).length === 1 && isCallOf(model, p.parent, /^(len|enumerate)$/))
      return true;
    const call = p?.type === 'attribute' && child(p, 'object') === n ? p.parent : undefined;
    const method = p?.type === 'attribute' ? s.text(child(p, 'attribute') ?? p) : '';
    const args = call?.type === 'call' && child(call, 'function') === p ? named(child(call, 'arguments') ?? call) : [];
    if (fn === init && method === 'append' && args.length === 1 && args[0].type !== 'keyword_argument') {
      out.push(unparen(args[0]));
      return true;
    }
    unknown = true;
    return false;
  });
  return unknown ? undefined : out;
}

/** `self.m(...)`: the constructions every `return` of the method returns, directly or through one local. */
function returnedConstructions(model: FileModel, init: FunctionInfo, call: PyNode): PyNode[] | undefined {
  const s = model.syntax;
  const callee = child(call, 'function');
  const object = callee?.type === 'attribute' ? child(callee, 'object') : undefined;
  if (!callee || object?.type !== 'identifier' || s.text(object) !== 'self') return undefined;
  const name = s.text(child(callee, 'attribute') ?? callee);
  const defs = model.functions.filter(
    (f) => f.name === name && f.className !== undefined && related(model, f.className, init.className!),
  );
  const method = defs.length === 1 && defs[0].className === init.className ? defs[0] : undefined;
  if (!method) return undefined;
  const returned: PyNode[] = [];
  let unknown = false;
  visit(method.node, (n) => {
    if (n !== method.node && (n.type === 'function_definition' || n.type === 'lambda')) return false;
    if (n.type === 'yield') unknown = true;
    if (n.type !== 'return_statement') return true;
    const value = named(n)[0];
    const built = value ? constructionOf(model, method, unparen(value)) : undefined;
    if (built) returned.push(built);
    else unknown = true;
    return false;
  });
  if (unknown || returned.length === 0) return undefined;
  const classes = new Set(returned.map((c) => s.text(child(c, 'function') ?? c)));
  return classes.size === 1 ? returned : undefined;
}

/** A call of a class of the file, returned as written or through a local bound once to it in the method. */
function constructionOf(model: FileModel, method: FunctionInfo, value: PyNode): PyNode | undefined {
  const s = model.syntax;
  let call = value;
  if (value.type === 'identifier') {
    const bindings = method.assignments.filter((a) => {
      const left = child(a, 'left');
      return left?.type === 'identifier' && s.text(left) === s.text(value);
    });
    const right = bindings.length === 1 ? child(bindings[0], 'right') : undefined;
    if (!right || method.params.some((p) => p.name === s.text(value))) return undefined;
    call = unparen(right);
  }
  const callee = call.type === 'call' ? child(call, 'function') : undefined;
  return callee?.type === 'identifier' && classInit(model, s.text(callee)) ? call : undefined;
}

/** The owner's `__init__` parameter held by the `self.x` the construction passes for the element's attribute. */
function ownerParameterPassed(
  model: FileModel,
  init: FunctionInfo,
  call: PyNode,
  attribute: string,
): string | undefined {
  const s = model.syntax;
  const elementInit = classInit(model, s.text(child(call, 'function') ?? call));
  const elementParam = elementInit ? storedParameter(model, elementInit, attribute) : undefined;
  if (!elementInit || !elementParam) return undefined;
  const list = child(call, 'arguments');
  if (hasSplat(list)) return undefined;
  const args = s.args(call);
  const position = model.callableParams(elementInit).findIndex((p) => p.name === elementParam);
  const passed = args.keywords.get(elementParam)?.value ?? args.positional[position];
  const value = passed ? unparen(passed) : undefined;
  const object = value?.type === 'attribute' ? child(value, 'object') : undefined;
  if (!value || object?.type !== 'identifier' || s.text(object) !== 'self') return undefined;
  return storedParameter(model, init, s.text(child(value, 'attribute') ?? value));
}

/** The one `__init__` at the top level of the file's class `className`. */
export function classInit(model: FileModel, className: string): FunctionInfo | undefined {
  const inits = model.functions.filter(
    (f) => f.name === '__init__' && f.className === className && f.enclosing?.node.type === 'module',
  );
  return inits.length === 1 ? inits[0] : undefined;
}

/**
 * The `__init__` parameter an attribute holds: `self.attr = param` is the only write of `.attr` in the file that an
 * object of the class can see (a `self.attr` write in a method of an unrelated class of the file writes another
 * object's), and the constructor does not rebind the parameter.
 */
export function storedParameter(model: FileModel, init: FunctionInfo, attribute: string): string | undefined {
  const s = model.syntax;
  let writes = 0;
  visit(model.module, (n) => {
    if (n.type !== 'attribute' || s.text(child(n, 'attribute') ?? n) !== attribute || !isWriteTarget(n)) return true;
    const object = child(n, 'object');
    const fn = model.enclosingFunction(n);
    const own = object?.type === 'identifier' && s.text(object) === 'self' && fn?.className;
    if (!own || related(model, own, init.className!)) writes++;
    return true;
  });
  const stored = model.valuesSeenBy(`self.${attribute}`, init).filter((v) => v.fn === init);
  if (writes !== 1 || stored.length !== 1 || stored[0].value.type !== 'identifier') return undefined;
  const param = s.text(stored[0].value);
  const rebound = init.assignments.some((a) => {
    const left = child(a, 'left');
    return left?.type === 'identifier' && s.text(left) === param;
  });
  return init.params.some((p) => p.name === param) && !rebound ? param : undefined;
}

/** The node is written: the target of an assignment or augmented assignment, alone or inside a tuple of targets. */
function isWriteTarget(n: PyNode): boolean {
  let at = n;
  while (at.parent && /^(pattern_list|tuple_pattern|list_pattern|tuple|list)$/.test(at.parent.type)) at = at.parent;
  const p = at.parent;
  return !!p && /^(augmented_)?assignment$/.test(p.type) && child(p, 'left') === at;
}

function isCallOf(model: FileModel, call: PyNode | null | undefined, name: RegExp): boolean {
  const callee = call?.type === 'call' ? child(call, 'function') : undefined;
  return callee?.type === 'identifier' && name.test(model.syntax.text(callee));
}

/**
 * Whether an object of class `a` may be an object of class `b`: the same class, one above the other, or either
 * with a base that is not a class of this file (its ancestry is unknown).
 */
export function related(model: FileModel, a: string, b: string): boolean {
  if (a === b) return true;
  const upA = ancestors(model, a);
  const upB = ancestors(model, b);
  return !upA || !upB || upA.has(b) || upB.has(a);
}

function ancestors(model: FileModel, cls: string, seen = new Set<string>()): Set<string> | undefined {
  const bases = model.classBasesOf(cls);
  if (!bases || seen.has(cls)) return undefined;
  seen.add(cls);
  const out = new Set<string>();
  for (const b of bases) {
    const up = ancestors(model, b, seen);
    if (!up) return undefined;
    out.add(b);
    for (const x of up) out.add(x);
  }
  return out;
}

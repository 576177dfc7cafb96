// How an object of a class of this file is built, followed through the two indirections Python code uses most:
// a classmethod constructor (`Loader.from_data_loader(dl, distributed=True)` whose body returns `cls(...)`) and a
// subclass whose `__init__` hands its arguments to the base (`super().__init__(dataset, sampler=sampler)`). Both
// are followed only where the file proves them: the classmethod is decorated `@classmethod`, every return in it is
// one `cls(...)` call and `cls` is never rebound; the `__init__` calls the base's `__init__` exactly once. A value
// read inside such a body is carried back to the caller only when it is a parameter the body never rebinds, so a
// fact proven about the caller's argument is a fact about what the body used.
import { hasSplat, named, unparen, type PyNode } from './tree';
import { reboundNames } from './nested-calls';
import type { FileModel, FunctionInfo } from './scope';

/** A call and the function whose names its arguments are written in. */
export interface ScopedCall {
  readonly call: PyNode;
  readonly fn: FunctionInfo;
}

/** A value and the function whose names it is written in. */
export interface ScopedValue {
  readonly node: PyNode;
  readonly fn: FunctionInfo;
}

/**
 * The `cls(...)` call a classmethod constructor returns, for a call `C.m(...)` where `C` is a class of this file and
 * `m` its classmethod; the class built is `C` itself, since the call names it and not a subclass.
 */
export function classmethodConstruction(
  model: FileModel,
  call: PyNode,
): { readonly className: string; readonly built: ScopedCall } | undefined {
  const s = model.syntax;
  const object = s.calleeObject(call);
  if (object?.type !== 'identifier') return undefined;
  const className = s.text(object);
  if (!model.classBasesOf(className)) return undefined;
  const method = model.byName.get(s.calleeName(call))?.filter((f) => f.className === className);
  if (method?.length !== 1 || !isClassmethod(model, method[0])) return undefined;
  const fn = method[0];
  const clsName = fn.params[0]?.name;
  if (!clsName || rebound(model, fn, clsName)) return undefined;
  const returns = fn.nodes.filter((n) => n.type === 'return_statement');
  if (returns.length !== 1) return undefined;
  const value = named(returns[0])[0];
  const built = value ? unparen(value) : undefined;
  if (built?.type !== 'call' || s.calleeText(built) !== clsName) return undefined;
  return { className, built: { call: built, fn } };
}

/** The one `super().__init__(...)` (or `Base.__init__(self, ...)`) call of a class's `__init__` in this file. */
export function baseInitCall(model: FileModel, className: string): ScopedCall | undefined {
  const init = model.initOf(className);
  if (!init) return undefined;
  const bases = model.classBasesOf(className) ?? [];
  const calls = init.calls.filter((c) => {
    const callee = model.syntax.calleeText(c);
    return callee === 'super().__init__' || bases.some((b) => callee === `${b}.__init__`);
  });
  if (calls.length !== 1) return undefined;
  // `Base.__init__(self, ...)` passes self first: its arguments are read as the base's, after self.
  const call = calls[0];
  return model.syntax.calleeText(call) === 'super().__init__' ? { call, fn: init } : undefined;
}

/**
 * The caller's value for `value` when it is a parameter of `site.fn`'s callee (`callee`) that the callee never
 * rebinds: the argument the site passes for it by keyword or position, or the parameter's default when the site
 * passes none. Anything else (a local, an expression) stays in the callee's scope.
 */
export function atCaller(
  model: FileModel,
  value: ScopedValue,
  callee: FunctionInfo,
  site: ScopedCall,
): ScopedValue | undefined {
  const s = model.syntax;
  const node = unparen(value.node);
  if (value.fn !== callee || node.type !== 'identifier') return value;
  const params = model.callableParams(callee);
  const param = params.find((p) => p.name === s.text(node));
  if (!param) return value;
  if (rebound(model, callee, param.name)) return undefined;
  const args = s.args(site.call);
  if (hasSplat(args.list)) return undefined;
  const position = keywordOnly(param.node) ? -1 : param.index - (params[0]?.index ?? 0);
  const given = args.keywords.get(param.name)?.value ?? (position >= 0 ? args.positional[position] : undefined);
  if (given) return { node: given, fn: site.fn };
  return param.defaultValue ? { node: param.defaultValue, fn: callee } : undefined;
}

function isClassmethod(model: FileModel, fn: FunctionInfo): boolean {
  const decorated = fn.node.parent;
  if (decorated?.type !== 'decorated_definition') return false;
  const decorators = named(decorated).filter((c) => c.type === 'decorator');
  return decorators.length === 1 && model.syntax.text(decorators[0]).replace(/\s+/g, '') === '@classmethod';
}

/** The function writes the name (`cls = ...`, `dataset = wrap(dataset)`): it is no longer what was passed. */
function rebound(model: FileModel, fn: FunctionInfo, name: string): boolean {
  return reboundNames(model, fn).has(name);
}

/** A parameter after `*` or `*args` is bound by keyword only. */
function keywordOnly(param: PyNode): boolean {
  const list = param.parent;
  if (!list) return false;
  for (const p of named(list)) {
    if (p === param) return false;
    if (p.type === 'keyword_separator' || p.type === 'list_splat_pattern') return true;
  }
  return false;
}

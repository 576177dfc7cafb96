// Per-call contexts for functions nested in another function. Frameworks build their objects in a local helper
// called once per kind of parameter (Megatron's DDP calls `_allocate_buffers_for_parameters(params, group,
// gradient_scaling_factor=...)` once for the dense and once for the expert gradients), so what the helper passes to
// a constructor is a parameter, and it denotes a different group at each call. A nested function can only be called
// from inside the function that defines it, unless its name escapes (returned, stored, passed on), so when every
// use of its name there is a call that resolves to it, these calls are all of its contexts: each gives the helper's
// parameters the values the call passes.
import { child, hasSplat, type PyNode } from './tree';
import { nestedCalls, reboundNames } from './nested-calls';
import type { FileModel, FunctionInfo } from './scope';
import type { Binding, Env } from './sizes';

/** One call of a nested function: the environment its body runs in there, or none when the call hides arguments. */
export interface CallContext {
  readonly call: PyNode;
  /** Undefined when `*args` or `**kwargs` hide which argument binds which parameter. */
  readonly env?: Env;
}

/**
 * Every call of a nested function (nested-calls.ts), each with its parameters bound to what the call passes;
 * undefined when not every call is in view.
 */
export function nestedCallContexts(model: FileModel, fn: FunctionInfo): CallContext[] | undefined {
  return nestedCalls(model, fn)?.map((call) => ({ call, env: contextOf(model, fn, call) }));
}

function contextOf(model: FileModel, fn: FunctionInfo, call: PyNode): Env | undefined {
  const argList = child(call, 'arguments');
  if (hasSplat(argList)) return undefined;
  const caller = model.enclosingFunction(call);
  if (!caller) return undefined;
  const args = model.syntax.args(call);
  const bindings = new Map<string, Binding>();
  const rebound = reboundNames(model, fn);
  fn.params.forEach((p, i) => {
    if (rebound.has(p.name)) return;
    const given = args.keywords.get(p.name)?.value ?? args.positional[i];
    if (given)
      bindings.set(p.name, { node: given, env: { fn: caller }, callSite: call, isDefault: false, param: p.name });
    else if (p.defaultValue)
      bindings.set(p.name, {
        node: p.defaultValue,
        env: { fn: fn.enclosing ?? caller },
        callSite: call,
        isDefault: true,
        param: p.name,
      });
  });
  return { fn, bindings };
}

// Per-call contexts for functions nested in another function. Frameworks build their objects in a local helper
// called once per kind of parameter (Megatron's DDP calls `_allocate_buffers_for_parameters(params, group,
// gradient_scaling_factor=...)` once for the dense and once for the expert gradients), so what the helper passes to
// a constructor is a parameter, and it denotes a different group at each call. A nested function can only be called
// from inside the function that defines it, unless its name escapes (returned, stored, passed on), so when every
// use of its name there is a call that resolves to it, these calls are all of its contexts: each gives the helper's
// parameters the values the call passes.
import { child, visit, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { Binding, Env } from './sizes';

/** One call of a nested function: the environment its body runs in there, or none when the call hides arguments. */
export interface CallContext {
  readonly call: PyNode;
  /** Undefined when `*args` or `**kwargs` hide which argument binds which parameter. */
  readonly env?: Env;
}

const PLAIN_PARAMETER = new Set([
  'identifier',
  'default_parameter',
  'typed_parameter',
  'typed_default_parameter',
  'comment',
]);

// A helper called more often than this is judged without contexts, as before: its parameters stay unknown.
const MAX_CONTEXTS = 8;

/**
 * Every call of a nested function, each with its parameters bound to what the call passes; undefined when the
 * function is not nested in another function, is never called, may be called where the analysis cannot see (its
 * name escapes), or its name is ambiguous in the file.
 */
export function nestedCallContexts(model: FileModel, fn: FunctionInfo): CallContext[] | undefined {
  const outer = fn.enclosing;
  if (!outer || outer.node.type !== 'function_definition' || fn.node.type !== 'function_definition') return undefined;
  if (fn.params.length === 0 || (model.byName.get(fn.name) ?? []).length !== 1) return undefined;
  // `*args`, `**kwargs` and the `*` / `/` markers make positions differ from the parameters' order.
  const list = child(fn.node, 'parameters');
  if (list?.children.some((c) => !PLAIN_PARAMETER.has(c.type) && c.type !== '(' && c.type !== ')' && c.type !== ','))
    return undefined;
  // Nested in the function's own body, not in a class defined inside it (a method is called through its objects).
  if (definingScope(fn.node) !== outer.node) return undefined;
  const calls: PyNode[] = [];
  let escapes = false;
  visit(outer.node, (n) => {
    if (escapes) return false;
    if (n.type !== 'identifier' || model.syntax.text(n) !== fn.name) return true;
    const parent = n.parent;
    if (parent && parent === fn.node && n.field === 'name') return true;
    if (parent?.type === 'call' && n.field === 'function' && model.resolveCall(parent) === fn) calls.push(parent);
    else escapes = true;
    return true;
  });
  if (escapes || calls.length === 0 || calls.length > MAX_CONTEXTS) return undefined;
  return calls.map((call) => ({ call, env: contextOf(model, fn, call) }));
}

/** The function or class whose body defines this function. */
function definingScope(def: PyNode): PyNode | undefined {
  for (let n = def.parent; n; n = n.parent) {
    if (n.type === 'function_definition' || n.type === 'class_definition') return n;
  }
  return undefined;
}

function contextOf(model: FileModel, fn: FunctionInfo, call: PyNode): Env | undefined {
  const argList = child(call, 'arguments');
  if (argList?.children.some((c) => c.type === 'list_splat' || c.type === 'dictionary_splat')) return undefined;
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

/**
 * The names a function writes on a left side (an assignment, a `for` target, `with ... as`, `:=`), even inside a
 * tuple: a parameter among them is not, everywhere in the body, what the call passed (`group = group or default`).
 */
export function reboundNames(model: FileModel, fn: FunctionInfo): Set<string> {
  const rebound = new Set<string>();
  for (const n of fn.nodes) {
    const left =
      n.type === 'assignment' || n.type === 'augmented_assignment' || n.type === 'for_statement'
        ? child(n, 'left')
        : n.type === 'as_pattern' || n.type === 'named_expression'
          ? n
          : undefined;
    if (left) visit(left, (m) => void (m.type === 'identifier' && rebound.add(model.syntax.text(m))));
  }
  return rebound;
}

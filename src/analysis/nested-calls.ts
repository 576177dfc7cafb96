// The calls of a function nested in another function, when the file shows them all. A nested function can only be
// called from inside the function that defines it, unless its name escapes (returned, stored, passed on), so when
// every use of its name there is a call that resolves to it, these calls are all there are: what holds for a
// parameter at every one of them holds for the parameter inside the function (call-contexts.ts binds the values;
// sharded-loader.ts follows a loader parameter to each call's argument).
import { child, visit, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';

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
 * Every call of a nested function; undefined when the function is not nested in another function, is never
 * called, may be called where the analysis cannot see (its name escapes), its name is ambiguous in the file, or its
 * parameters are not bound by plain position and keyword.
 */
export function nestedCalls(model: FileModel, fn: FunctionInfo): PyNode[] | undefined {
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
  return calls;
}

/** The function or class whose body defines this function. */
function definingScope(def: PyNode): PyNode | undefined {
  for (let n = def.parent; n; n = n.parent) {
    if (n.type === 'function_definition' || n.type === 'class_definition') return n;
  }
  return undefined;
}

/**
 * What a statement or expression binds names in: an assignment's or a `for`'s left side, the target after `as` in
 * `with ... as x` and `except E as x`, the name of `x := ...`. The expression before `as` and the value of `:=` bind
 * nothing.
 */
export function bindingTarget(n: PyNode): PyNode | undefined {
  if (n.type === 'assignment' || n.type === 'augmented_assignment' || n.type === 'for_statement')
    return child(n, 'left');
  if (n.type === 'as_pattern') return child(n, 'alias');
  return n.type === 'named_expression' ? child(n, 'name') : undefined;
}

/**
 * The names a binding target rebinds: the identifiers of `x = ...` and `a, (b, c) = ...`, not those inside an
 * attribute or a subscript (`self.x = x` and `d[k] = v` write into an object and leave `self`, `x`, `d` and `k`
 * bound as they were).
 */
export function boundIdentifiers(target: PyNode, found: (identifier: PyNode) => void): void {
  visit(target, (m) => {
    if (m.type === 'attribute' || m.type === 'subscript') return false;
    if (m.type === 'identifier') found(m);
    return true;
  });
}

/**
 * The names a function rebinds (an assignment, a `for` target, `with ... as`, `except ... as`, `:=`), even inside a
 * tuple: a parameter among them is not, everywhere in the body, what the call passed (`group = group or default`).
 */
export function reboundNames(model: FileModel, fn: FunctionInfo): Set<string> {
  const rebound = new Set<string>();
  for (const n of fn.nodes) {
    const left = bindingTarget(n);
    if (left) boundIdentifiers(left, (m) => rebound.add(model.syntax.text(m)));
  }
  return rebound;
}

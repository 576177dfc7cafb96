// Every call of a function, when the file proves it has them all: a function defined inside another function's body
// (`def _allocate(params, group, factor):` inside `__init__`) can be called only from that body, as long as its name
// never escapes it (is never passed, returned, stored or rebound). What holds for a parameter at every one of those
// call sites then holds for the parameter inside the function. A top-level function or a method is not followed:
// another module, or a subclass, may call it with anything.
import { child, visit, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { ScopedCall } from './class-constructors';

/** At most this many call sites are followed (each is judged on its own). */
const MAX_SITES = 8;

/**
 * The calls of `fn` when it is a function nested in another function's body and every mention of its name there
 * is a call of it; undefined otherwise, or when it is never called.
 */
export function nestedCallSites(model: FileModel, fn: FunctionInfo): ScopedCall[] | undefined {
  const outer = fn.enclosing;
  if (!outer || outer.node.type !== 'function_definition' || !definedDirectlyIn(fn.node, outer.node)) return undefined;
  const body = child(outer.node, 'body');
  if (!body) return undefined;
  const s = model.syntax;
  const sites: ScopedCall[] = [];
  let escapes = false;
  let definitions = 0;
  visit(body, (n) => {
    if (escapes) return false;
    if (n.type === 'function_definition' && s.text(child(n, 'name') ?? n) === fn.name) definitions++;
    if (n.type !== 'identifier' || s.text(n) !== fn.name) return true;
    const parent = n.parent;
    if (parent?.type === 'function_definition' && child(parent, 'name') === n) return true;
    if (parent?.type === 'call' && child(parent, 'function') === n) {
      const caller = model.enclosingFunction(parent);
      if (caller) sites.push({ call: parent, fn: caller });
      else escapes = true;
      return true;
    }
    escapes = true;
    return false;
  });
  if (escapes || definitions !== 1 || sites.length === 0 || sites.length > MAX_SITES) return undefined;
  return sites;
}

/** The def is a statement of the function's own body (in any block), not a method of a class inside it. */
function definedDirectlyIn(def: PyNode, outer: PyNode): boolean {
  for (let p = def.parent; p; p = p.parent) {
    if (p === outer) return true;
    if (p.type === 'class_definition' || p.type === 'function_definition') return false;
  }
  return false;
}

// Where a value of one file comes from, followed through the ways JAX training code passes functions around: a local
// assignment (also a position of an unpacked tuple), a closure's variable, a parameter bound at the file's call
// sites, a function's return value, a tuple built and unpacked again, optax's `GradientTransformation(init, update)`
// pair, and a nested function called through a value that holds it (an optax `update` called as `opt_update_fn`).
// A value is its origin expressions ("terminals") with the function each one is written in; anything the file does
// not show (a conditional assignment, a parameter nobody in view passes, a call into another module) makes the
// answer `undefined`, which the rules read as "unknown" and stay silent on.
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';

export interface Origin {
  /** The expression the value was made by: a call, a literal, a nested `def`'s function_definition. */
  readonly node: PyNode;
  readonly fn: FunctionInfo;
}

/**
 * A parameter whose arguments no call in the file shows, but a library's documented protocol does: the function
 * that produces what the parameter receives (its return value, whole).
 */
export type ParameterContract = (fn: FunctionInfo, param: string) => { producer: FunctionInfo } | undefined;

const MAX_DEPTH = 24;
/**
 * Steps one file's questions may take together: a parameter bound at several call sites, each a parameter bound at
 * several more, grows exponentially with the depth, and past this budget every answer is "unknown".
 */
const MAX_STEPS = 20_000;
const BLOCKS = new Set(['if_statement', 'for_statement', 'while_statement', 'try_statement', 'match_statement']);

export class ValueOrigins {
  /** Functions whose callers are being searched for, so a call through a value that comes back to them stops. */
  private readonly searching = new Set<FunctionInfo>();
  private readonly callers = new Map<FunctionInfo, { call: PyNode; caller: FunctionInfo }[] | undefined>();
  private steps = 0;

  constructor(
    private readonly model: FileModel,
    private readonly contract?: ParameterContract,
  ) {}

  /**
   * The origins of `expr` (read in `fn`), at `path` inside it (positions of nested tuples). `trail` collects the
   * call sites whose arguments the answer went through, for a finding's related locations.
   */
  of(expr: PyNode, fn: FunctionInfo, path: readonly number[] = [], depth = 0, trail?: PyNode[]): Origin[] | undefined {
    if (depth > MAX_DEPTH || ++this.steps > MAX_STEPS) return undefined;
    const e = unparen(expr);
    if (e.type === 'tuple' || e.type === 'expression_list') {
      if (path.length === 0) return [{ node: e, fn }];
      const element = named(e)[path[0]];
      return element && element.type !== 'list_splat'
        ? this.of(element, fn, path.slice(1), depth + 1, trail)
        : undefined;
    }
    if (e.type === 'call') return this.ofCall(e, fn, path, depth, trail);
    if (e.type === 'identifier') return this.ofName(this.model.syntax.text(e), e.start, fn, path, depth, trail);
    return path.length === 0 ? [{ node: e, fn }] : undefined;
  }

  /** The function definitions a call's callee may be (empty when it is not a function of this file). */
  calleeDefinitions(call: PyNode, fn: FunctionInfo): FunctionInfo[] | undefined {
    const callee = child(call, 'function');
    if (!callee || callee.type !== 'identifier') return undefined;
    const origins = this.of(callee, fn);
    if (!origins) return undefined;
    const defs = origins.map((o) => this.model.functionOf.get(o.node) ?? this.definitionAt(o.node));
    return defs.every((d) => d !== undefined) ? (defs as FunctionInfo[]) : undefined;
  }

  private definitionAt(node: PyNode): FunctionInfo | undefined {
    return node.type === 'function_definition' ? this.model.functions.find((f) => f.node === node) : undefined;
  }

  private ofCall(
    call: PyNode,
    fn: FunctionInfo,
    path: readonly number[],
    depth: number,
    trail?: PyNode[],
  ): Origin[] | undefined {
    const syntax = this.model.syntax;
    // optax.GradientTransformation(init, update) is a NamedTuple: position 0 is `init`, position 1 is `update`.
    if (syntax.calleeName(call) === 'GradientTransformation' && path.length > 0) {
      const arg = syntax.arg(call, path[0] === 0 ? 'init' : 'update', path[0]);
      return arg && path[0] <= 1 ? this.of(arg, fn, path.slice(1), depth + 1, trail) : undefined;
    }
    const callee = child(call, 'function');
    const target = callee?.type === 'identifier' ? this.model.resolveCall(call) : undefined;
    if (target && !target.className && target.node.type === 'function_definition') {
      const returns = target.nodes.filter((n) => n.type === 'return_statement');
      if (returns.length === 0) return undefined;
      const out: Origin[] = [];
      for (const r of returns) {
        const value = named(r)[0];
        const origins = value ? this.of(value, target, path, depth + 1, trail) : undefined;
        if (!origins) return undefined;
        out.push(...origins);
      }
      return out;
    }
    return path.length === 0 ? [{ node: call, fn }] : undefined;
  }

  private ofName(
    name: string,
    at: number,
    fn: FunctionInfo,
    path: readonly number[],
    depth: number,
    trail?: PyNode[],
  ): Origin[] | undefined {
    const assigned = reachingAssignment(this.model, name, at, fn);
    if (assigned === 'unknown') return undefined;
    if (assigned) {
      const right = child(assigned.node, 'right');
      return right ? this.of(right, fn, [...assigned.position, ...path], depth + 1, trail) : undefined;
    }
    const nested = this.model.functions.find((f) => f.enclosing === fn && f.name === name && !f.className);
    if (nested) return path.length === 0 ? [{ node: nested.node, fn }] : undefined;
    const param = fn.params.find((p) => p.name === name);
    if (param) return this.ofParameter(fn, param.name, param.index, path, depth, trail);
    if (fn.enclosing) return this.ofName(name, fn.node.start, fn.enclosing, path, depth + 1, trail);
    return undefined;
  }

  private ofParameter(
    fn: FunctionInfo,
    name: string,
    index: number,
    path: readonly number[],
    depth: number,
    trail?: PyNode[],
  ): Origin[] | undefined {
    const sites = this.callersOf(fn);
    if (sites && sites.length > 0) {
      const out: Origin[] = [];
      for (const s of sites) {
        const arg = this.model.syntax.arg(s.call, name, index);
        const origins = arg ? this.of(arg, s.caller, path, depth + 1, trail) : undefined;
        if (!origins) return undefined;
        trail?.push(s.call);
        out.push(...origins);
      }
      return out;
    }
    const produced = this.contract?.(fn, name);
    if (!produced) return undefined;
    const returns = produced.producer.nodes.filter((n) => n.type === 'return_statement');
    const out: Origin[] = [];
    for (const r of returns) {
      const value = named(r)[0];
      const origins = value ? this.of(value, produced.producer, path, depth + 1, trail) : undefined;
      if (!origins) return undefined;
      out.push(...origins);
    }
    return returns.length > 0 ? out : undefined;
  }

  /**
   * The calls of the file that invoke `fn`: by its name for a top-level function, and for a nested one every call
   * whose callee's value is that definition (an optax `update` returned inside a GradientTransformation).
   */
  callersOf(fn: FunctionInfo): { call: PyNode; caller: FunctionInfo }[] | undefined {
    if (this.callers.has(fn)) return this.callers.get(fn);
    if (this.searching.has(fn)) return undefined;
    this.searching.add(fn);
    const out: { call: PyNode; caller: FunctionInfo }[] = [];
    if (!fn.enclosing || fn.enclosing.node.type === 'module') {
      for (const s of this.model.callSites.get(fn.name) ?? [])
        if (child(s.call, 'function')?.type === 'identifier' && this.model.resolveCall(s.call) === fn) out.push(s);
    } else {
      for (const caller of this.model.functions)
        for (const call of caller.calls) {
          const callee = child(call, 'function');
          if (callee?.type !== 'identifier') continue;
          // A call by another definition's name is that definition (resolveCall), not a value holding this one.
          const text = this.model.syntax.text(callee);
          if (text !== fn.name && this.model.byName.has(text)) continue;
          if (this.calleeDefinitions(call, caller)?.includes(fn)) out.push({ call, caller });
        }
    }
    this.searching.delete(fn);
    this.callers.set(fn, out);
    return out;
  }
}

/**
 * The assignment of `fn` that gives `name` its value at offset `at`: the last one that ends before it, with the
 * position of `name` in its unpacked target. 'unknown' when that assignment is under a condition or a loop (another
 * path may skip it) or is an augmented assignment, or when an assignment later in a loop around `at` reaches it on
 * the loop's next iteration (unless the one found is inside that loop, before `at`, and so replaces it); undefined
 * when `fn` assigns no such name before `at`.
 */
export function reachingAssignment(
  model: FileModel,
  name: string,
  at: number,
  fn: FunctionInfo,
): { node: PyNode; position: number[] } | 'unknown' | undefined {
  let found: { node: PyNode; position: number[] } | 'unknown' | undefined;
  const backEdges: PyNode[] = [];
  for (const a of fn.assignments) {
    const left = child(a, 'left');
    const position = left ? bindingPosition(model, left, name) : undefined;
    if (!position) continue;
    if (a.end > at) {
      const loop = loopAround(a, at, fn);
      if (loop) backEdges.push(loop);
      continue;
    }
    found = a.type !== 'assignment' || underBlock(a, fn) ? 'unknown' : { node: a, position };
  }
  // An assignment before `at` in the same loop body kills the one the back edge brings.
  const killed = (loop: PyNode) => typeof found === 'object' && found.node.start >= loop.start;
  return backEdges.every(killed) ? found : 'unknown';
}

/** The position of `name` in an assignment target (`[]` for the whole target), or undefined when it is not bound. */
export function bindingPosition(model: FileModel, target: PyNode, name: string): number[] | undefined {
  const t = unparen(target);
  if (t.type === 'identifier') return model.syntax.text(t) === name ? [] : undefined;
  if (!['pattern_list', 'tuple_pattern', 'tuple', 'expression_list', 'list_pattern'].includes(t.type)) return undefined;
  const parts = named(t);
  for (let i = 0; i < parts.length; i++) {
    const inner = bindingPosition(model, parts[i], name);
    if (inner) return [i, ...inner];
  }
  return undefined;
}

/** The outermost loop of `fn` around both `node` and the offset `at`, if any. */
function loopAround(node: PyNode, at: number, fn: FunctionInfo): PyNode | undefined {
  let loop: PyNode | undefined;
  for (let p = node.parent; p && p !== fn.node; p = p.parent)
    if ((p.type === 'for_statement' || p.type === 'while_statement') && p.start <= at && at < p.end) loop = p;
  return loop;
}

function underBlock(node: PyNode, fn: FunctionInfo): boolean {
  for (let p = node.parent; p && p !== fn.node; p = p.parent) if (BLOCKS.has(p.type)) return true;
  return false;
}

/** The part of an assignment target (or tuple) at `path`. */
export function subtreeAt(target: PyNode, path: readonly number[]): PyNode | undefined {
  let t: PyNode | undefined = unparen(target);
  for (const i of path) {
    if (!t || !['pattern_list', 'tuple_pattern', 'tuple', 'expression_list'].includes(t.type)) return undefined;
    const next: PyNode | undefined = named(t)[i];
    t = next ? unparen(next) : undefined;
  }
  return t;
}

/** The name at `path` of an assignment target, when that part is a plain name. */
export function nameAt(model: FileModel, target: PyNode, path: readonly number[]): string | undefined {
  const t = subtreeAt(target, path);
  return t?.type === 'identifier' ? model.syntax.text(t) : undefined;
}

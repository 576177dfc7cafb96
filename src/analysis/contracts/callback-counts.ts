// How many backward passes a function runs, on every path, on the losses a callback parameter returns
// (callback-schedule.ts). A value is a callback loss when every assignment to its name is a call of the callback, the
// first element unpacked from one (`loss, stats = output`), a copy of one, or a `pop` from a queue into which every
// `append`, in every function the queue is passed to, puts one. A backward pass is `torch.autograd.backward(v, …)`,
// `v.backward()`, `opt.backward(v, …)`, or a call of a helper that runs one on the parameter it passes `v` to. Counts
// are linear forms over names (`range(k - w)` runs its body k − w times), so that loops that split the micro-batches
// between them are added up; a count that differs between branches, a loop that is not a `range`, an early exit after
// a backward pass, or a bound value handed to code not in view gives no count at all.
import { child, named, unparen, visit, type PyNode, type Source } from '../tree';
import { assignedNames, boundParameters, type CallbackFile, visitBody } from './callback-files';
import { compact } from './loss-scaler-classes';

/** Coefficients by name; the empty name is the constant term. */
export type Linear = ReadonlyMap<string, number>;

export interface Located {
  readonly path: string;
  readonly file: CallbackFile;
  readonly def: PyNode;
  readonly name: string;
}

export interface Bindings {
  /** Names that hold the callback. */
  readonly callbacks: ReadonlySet<string>;
  /** Names that hold the queue of callback losses. */
  readonly queues: ReadonlySet<string>;
  /** Parameters that hold a callback loss. */
  readonly seeds: ReadonlySet<string>;
}

export interface CountContext {
  resolve(at: Located, callee: string): Located | undefined;
}

export interface Counted {
  readonly count: Linear;
  /** The backward calls, where they are. */
  readonly backwards: readonly { readonly at: Located; readonly node: PyNode }[];
  /** Every function the count went through (the schedule first). */
  readonly functions: readonly Located[];
}

const MAX_DEPTH = 6;
const ZERO: Linear = new Map();

export function countBackwards(
  fn: Located,
  bindings: Bindings,
  ctx: CountContext,
  stack: string[] = [],
): Counted | undefined {
  const key = `${fn.path}\u0000${fn.name}`;
  if (stack.length >= MAX_DEPTH || stack.includes(key)) return undefined;
  const { source } = fn.file;
  const assigned = assignedNames(fn.def, source);
  for (const name of bindings.callbacks) if (assigned.has(name)) return undefined;
  for (const name of bindings.queues) {
    const at = assigned.get(name) ?? [];
    if (at.some((a) => !createsEmptyList(a, source)) || at.length > 1) return undefined;
  }
  const outputs = callbackOutputs(assigned, bindings, source);
  if (!queuesHoldOutputs(fn, bindings, outputs, ctx)) return undefined;
  const backwards: { at: Located; node: PyNode }[] = [];
  const functions: Located[] = [fn];
  /** This function's calls that run a backward pass, directly or in a helper. */
  const passes: PyNode[] = [];
  let failed = false;

  const events = (n: PyNode): Linear => {
    let total: Linear = ZERO;
    visit(n, (m) => {
      if (failed) return false;
      if (m.type === 'function_definition' || m.type === 'class_definition' || m.type === 'lambda') return false;
      if (m.type !== 'call') return true;
      const callee = child(m, 'function');
      if (!callee) return true;
      const text = compact(source, callee);
      const args = named(child(m, 'arguments') ?? m).filter((a) => a.type !== 'keyword_argument');
      const bare = (a: PyNode | undefined) => (a?.type === 'identifier' ? source.textOf(a) : undefined);
      if (/(^|\.)backward$/.test(text)) {
        const object = callee.type === 'attribute' ? child(callee, 'object') : undefined;
        const target = object && !/^(torch\.)?autograd$/.test(compact(source, object)) ? bare(object) : undefined;
        const first = bare(args[0]);
        if ((target && outputs.has(target)) || (first && outputs.has(first))) {
          backwards.push({ at: fn, node: m });
          passes.push(m);
          total = add(total, new Map([['', 1]]));
        }
        return true;
      }
      const passed = [...argumentNames(m, source)].filter(
        (a) => bindings.callbacks.has(a) || bindings.queues.has(a) || outputs.has(a),
      );
      if (passed.length === 0 || (callee.type === 'identifier' && bindings.callbacks.has(text))) return true;
      if (text === 'len' && passed.every((a) => bindings.queues.has(a))) return true;
      const target = callee.type === 'identifier' ? ctx.resolve(fn, text) : undefined;
      if (!target) {
        // A tensor handed to a library call (a send, a reduction) runs no backward pass; a callback, a queue, or a
        // loss given to an unknown helper that may run backward proves nothing.
        if (passed.some((a) => !outputs.has(a)) || /backward/i.test(text)) failed = true;
        return true;
      }
      const bound = boundParameters(m, target.def, target.file.source, source);
      if (!bound) {
        failed = true;
        return true;
      }
      const next = { callbacks: new Set<string>(), queues: new Set<string>(), seeds: new Set<string>() };
      for (const a of passed) {
        for (const param of bound.get(a) ?? []) {
          if (param === undefined) failed = true;
          else if (bindings.callbacks.has(a)) next.callbacks.add(param);
          else if (bindings.queues.has(a)) next.queues.add(param);
          else next.seeds.add(param);
        }
      }
      const inner = failed ? undefined : countBackwards(target, next, ctx, [...stack, key]);
      if (!inner) failed = true;
      else {
        total = add(total, inner.count);
        if (!isZero(inner.count)) passes.push(m);
        backwards.push(...inner.backwards);
        functions.push(...inner.functions);
      }
      return true;
    });
    return total;
  };

  const block = (n: PyNode | undefined): Linear | undefined => {
    let total: Linear = ZERO;
    for (const s of n ? named(n) : []) {
      const c = statement(s);
      if (!c) return undefined;
      total = add(total, c);
    }
    return total;
  };

  const statement = (n: PyNode): Linear | undefined => {
    switch (n.type) {
      case 'if_statement': {
        let condition = events(child(n, 'condition') ?? n);
        const branches = [block(child(n, 'consequence'))];
        let otherwise = false;
        for (const alt of n.children.filter((c) => c.field === 'alternative')) {
          if (alt.type === 'else_clause') otherwise = true;
          if (alt.type === 'elif_clause') condition = add(condition, events(child(alt, 'condition') ?? alt));
          branches.push(block(child(alt, alt.type === 'else_clause' ? 'body' : 'consequence')));
        }
        if (!otherwise) branches.push(ZERO);
        const first = branches[0];
        if (!first || branches.some((b) => !b || !equal(b, first))) return undefined;
        return add(condition, first);
      }
      case 'for_statement': {
        const body = block(child(n, 'body'));
        const right = child(n, 'right');
        if (!body || !right || child(n, 'alternative')) return undefined;
        if (isZero(body)) return events(right);
        const times = rangeCount(right, source);
        const per = body.get('') ?? 0;
        if (!times || body.size !== 1 || hasExit(child(n, 'body'))) return undefined;
        return scale(times, per);
      }
      case 'while_statement': {
        const body = block(child(n, 'body'));
        return body && isZero(body) ? events(child(n, 'condition') ?? n) : undefined;
      }
      case 'with_statement': {
        const body = block(child(n, 'body'));
        return body && add(events(child(n, 'with_clause') ?? n), body);
      }
      case 'try_statement': {
        const before = backwards.length;
        for (const part of named(n)) if (part.type === 'block' ? !block(part) : !statement(part)) return undefined;
        return backwards.length === before ? ZERO : undefined;
      }
      case 'function_definition':
      case 'class_definition':
      case 'decorated_definition':
        return ZERO;
      default:
        return events(n);
    }
  };

  const total = block(child(fn.def, 'body'));
  if (!total || failed || returnsBefore(fn.def, passes)) return undefined;
  return { count: total, backwards, functions };
}

/**
 * Names whose every assignment gives them a callback loss: the greatest fixed point, so that `loss, stats = output`
 * and `output = loss` in one function hold each other (the seed parameters hold one unless reassigned).
 */
function callbackOutputs(assigned: Map<string, PyNode[]>, b: Bindings, source: Source): Set<string> {
  const out = new Set<string>([...b.seeds, ...assigned.keys()]);
  for (let changed = true; changed;) {
    changed = false;
    for (const [name, nodes] of assigned) {
      if (!out.has(name) || nodes.every((n) => gives(n, name))) continue;
      out.delete(name);
      changed = true;
    }
  }
  return out;

  function producer(right: PyNode): boolean {
    const r = unparen(right);
    if (r.type === 'identifier') return out.has(source.textOf(r));
    if (r.type !== 'call') return false;
    const callee = child(r, 'function');
    if (callee?.type === 'identifier') return b.callbacks.has(source.textOf(callee));
    if (callee?.type !== 'attribute') return false;
    const object = child(callee, 'object');
    const method = source.textOf(child(callee, 'attribute') ?? callee);
    return method === 'pop' && object?.type === 'identifier' && b.queues.has(source.textOf(object));
  }

  function gives(n: PyNode, name: string): boolean {
    if (n.type !== 'assignment') return false;
    const left = child(n, 'left');
    const right = child(n, 'right');
    if (!left || !right || !producer(right)) return false;
    if (left.type === 'identifier') return true;
    // `loss, stats = output`: only the first element is the loss.
    const first = left.type === 'pattern_list' || left.type === 'tuple_pattern' ? named(left)[0] : undefined;
    return first?.type === 'identifier' && source.textOf(first) === name;
  }
}

/** Every use of a queue in the function appends a callback loss, pops, is `len`, or passes it on whole. */
function queuesHoldOutputs(fn: Located, b: Bindings, outputs: ReadonlySet<string>, ctx: CountContext): boolean {
  const { source } = fn.file;
  let ok = true;
  visitBody(fn.def, (n) => {
    if (!ok || n.type !== 'identifier' || !b.queues.has(source.textOf(n))) return ok;
    const p = n.parent;
    if (p?.type === 'assignment' && child(p, 'left') === n) return true;
    if (p?.type === 'attribute' && child(p, 'object') === n) {
      const method = source.textOf(child(p, 'attribute') ?? p);
      const call = p.parent?.type === 'call' ? p.parent : undefined;
      const arg = call ? named(child(call, 'arguments') ?? call)[0] : undefined;
      if (method === 'pop' && call) return true;
      ok = method === 'append' && arg?.type === 'identifier' && outputs.has(source.textOf(arg));
      return ok;
    }
    const call = p?.type === 'argument_list' ? p.parent : undefined;
    const callee = call ? child(call, 'function') : undefined;
    ok = callee?.type === 'identifier' && (source.textOf(callee) === 'len' || !!ctx.resolve(fn, source.textOf(callee)));
    return ok;
  });
  return ok;
}

function argumentNames(call: PyNode, source: Source): Set<string> {
  const out = new Set<string>();
  for (const a of named(child(call, 'arguments') ?? call)) {
    const value = a.type === 'keyword_argument' ? child(a, 'value') : a;
    if (value?.type === 'identifier') out.add(source.textOf(value));
  }
  return out;
}

function createsEmptyList(n: PyNode, source: Source): boolean {
  const right = n.type === 'assignment' ? child(n, 'right') : undefined;
  return child(n, 'left')?.type === 'identifier' && !!right && compact(source, right) === '[]';
}

/** `range(e)`: e as a linear form over names; other iterables have no count. */
export function rangeCount(n: PyNode, source: Source): Linear | undefined {
  const r = unparen(n);
  if (r.type !== 'call' || compact(source, child(r, 'function') ?? r) !== 'range') return undefined;
  const args = named(child(r, 'arguments') ?? r);
  return args.length === 1 ? linear(args[0], source) : undefined;
}

export function linear(n: PyNode, source: Source): Linear {
  const e = unparen(n);
  if (e.type === 'integer') return new Map([['', Number(source.textOf(e))]]);
  if (e.type === 'binary_operator') {
    const op = e.children.find((c) => !c.named);
    const left = child(e, 'left');
    const right = child(e, 'right');
    const text = op ? source.textOf(op) : '';
    if (left && right && (text === '+' || text === '-'))
      return add(linear(left, source), scale(linear(right, source), text === '-' ? -1 : 1));
  }
  return new Map([[compact(source, e), 1]]);
}

export function add(a: Linear, b: Linear): Linear {
  const out = new Map(a);
  for (const [k, v] of b) {
    const sum = (out.get(k) ?? 0) + v;
    if (sum === 0) out.delete(k);
    else out.set(k, sum);
  }
  return out;
}

function scale(a: Linear, factor: number): Linear {
  return factor === 0 ? ZERO : new Map([...a].map(([k, v]) => [k, v * factor]));
}

function equal(a: Linear, b: Linear): boolean {
  return a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
}

function isZero(a: Linear): boolean {
  return a.size === 0;
}

/** A `break` or `continue` of the loop itself (not of a loop nested in it) makes the count path-dependent. */
function hasExit(body: PyNode | undefined): boolean {
  let found = false;
  if (body)
    visit(body, (n) => {
      if (n.type === 'break_statement' || n.type === 'continue_statement') found = true;
      return !found && !['for_statement', 'while_statement', 'function_definition', 'lambda'].includes(n.type);
    });
  return found;
}

/** A `return` before the function's last backward pass leaves some paths with fewer passes. */
function returnsBefore(def: PyNode, passes: readonly PyNode[]): boolean {
  const last = Math.max(...passes.map((p) => p.start), -1);
  let early = false;
  visitBody(def, (n) => {
    if (n.type === 'return_statement' && n.start < last) early = true;
    return !early;
  });
  return early;
}

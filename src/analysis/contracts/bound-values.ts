// Values read across calls and files: a frame is a function entered through one call (or the root, entered through
// none), and a name read in it is followed to the last assignment that the frame's guards decide is made, or to the
// argument its call binds to that parameter (by keyword, by position, from a dictionary splatted into the call, or
// the parameter's default). `self.attr` in a method is the value the object's `__init__` assigns, read in the frame
// of the constructor call that built it. Guards are decided only from values followed this way: literals, None and
// the tests of a distributed run (`dist.is_initialized()`, taken as true: the rules built on this reason about a
// run over several ranks). Anything else is undecided, and a question that depends on it has no answer, unless the
// caller hands in a call reader: the links that enter calls (engine-config-window.ts) use one to read values such as
// `getattr(args.train, "dynamic_batch_enable", False)` that no assignment in view decides.
import { child, named, unparen, type PyNode } from '../tree';
import type { ProgramFunction } from './program-models';
import { keywordOnly } from './wrapper-claim';

export interface Frame {
  readonly at: ProgramFunction;
  /** The call that entered this frame, read in `caller`. */
  readonly call?: PyNode;
  readonly caller?: Frame;
  /** Keyword arguments given by a dictionary splatted into the call (`**info`), by key. */
  readonly splat?: ReadonlyMap<string, Value>;
  /** For a method: the `__init__` frame of the object it is called on, entered from the constructor call. */
  readonly init?: Frame;
}

/** An expression and the frame its names are read in. */
export interface Value {
  readonly node: PyNode;
  readonly frame: Frame;
}

/** Reads the literal value of an expression the rules above stop at (a call, an attribute of an object not in view). */
export interface CallReader {
  /** A number, a boolean, None as null; undefined where not decided. */
  literal(value: Value): number | boolean | null | undefined;
}

/** Tests of a distributed run, true on the runs the rules reason about. */
const DISTRIBUTED_RUN = /^(torch\.distributed|dist)\.(is_initialized|is_available)$/;
/** Each follow (names, parameters, attributes) stops after this many steps. */
const MAX_STEPS = 12;

/** The argument the frame's call binds to parameter `name`; null where none is given and there is no default. */
export function boundArgument(frame: Frame, name: string): Value | null | undefined {
  const { fn, model } = frame.at;
  const index = fn.params.findIndex((p) => p.name === name);
  if (index < 0 || !frame.call || !frame.caller) return undefined;
  const s = frame.caller.at.model.syntax;
  const args = s.args(frame.call);
  const keyword = args.keywords.get(name);
  if (keyword) return { node: keyword.value, frame: frame.caller };
  const offset = fn.params[0] && /^(self|cls)$/.test(fn.params[0].name) ? 1 : 0;
  const position = index - offset;
  const splats = args.list ? named(args.list).filter((a) => a.type === 'list_splat') : [];
  const byPosition = !keywordOnly(fn.params[index]);
  if (byPosition && position >= 0 && position < args.positional.length && splats.length === 0)
    return { node: args.positional[position], frame: frame.caller };
  if (byPosition && splats.length > 0) return undefined;
  const fromSplat = frame.splat?.get(name);
  if (fromSplat) return fromSplat;
  const dictSplats = args.list ? named(args.list).filter((a) => a.type === 'dictionary_splat') : [];
  if (dictSplats.length > 0 && !frame.splat) return undefined;
  const fallback = fn.params[index].defaultValue;
  return fallback ? { node: fallback, frame: { at: { ...frame.at, model } } } : null;
}

/**
 * The expression a value stands for: names followed to their decided assignment or bound argument, `self.attr` to
 * its `__init__` assignment. Stops at anything else (a call, an operator, a literal). Undefined where undecided.
 */
export function resolved(value: Value, steps = 0, calls?: CallReader): Value | null | undefined {
  if (steps > MAX_STEPS) return undefined;
  const { frame } = value;
  const s = frame.at.model.syntax;
  const n = unparen(value.node);
  if (n.type === 'identifier') {
    const assigned = lastAssigned(frame, s.text(n), n.start, calls);
    if (assigned === undefined) return undefined;
    if (assigned) return resolved(assigned, steps + 1, calls);
    if (!frame.at.fn.params.some((p) => p.name === s.text(n))) return undefined;
    const bound = boundArgument(frame, s.text(n));
    return bound ? resolved(bound, steps + 1, calls) : bound;
  }
  // Read in `__init__` itself, `self.attr` is the assignment made before the read, in the same frame.
  const inInit = frame.at.fn.name === '__init__' && !!frame.at.fn.className;
  const self = n.type === 'attribute' && /^self\.\w+$/.test(s.text(n));
  const init = self ? (frame.init ?? (inInit ? frame : ownInit(frame))) : undefined;
  // An attribute the class assigns in more than one place (or in another method) has no one value.
  const sameClass = (init?.at.model.assignedValues.get(s.text(n)) ?? []).filter(
    (e) => e.fn.className === init?.at.fn.className,
  );
  if (init && sameClass.length === 1) {
    const assigned = lastAssigned(init, s.text(n), init === frame ? n.start : init.at.fn.node.end, calls);
    return assigned ? resolved(assigned, steps + 1, calls) : undefined;
  }
  return { node: n, frame };
}

/** The `__init__` of a method's own class in its file, entered through no call: its parameters are unknown. */
export function ownInit(frame: Frame): Frame | undefined {
  const { model, fn, path } = frame.at;
  const init = fn.className ? model.initOf(fn.className) : undefined;
  return init && init !== fn ? { at: { path, model, fn: init } } : undefined;
}

/**
 * The value of the last assignment to `name` (alone on the left) before `before` whose guards hold; null where the
 * frame assigns none there; undefined where one is made under an undecided guard.
 */
export function lastAssigned(frame: Frame, name: string, before: number, calls?: CallReader): Value | null | undefined {
  const s = frame.at.model.syntax;
  let last: Value | null = null;
  for (const n of frame.at.fn.nodes) {
    // A name bound by a loop, a `with ... as` or an unpacking is not followed.
    if (n.start >= before) break;
    const target = n.type === 'for_statement' ? child(n, 'left') : n.type === 'as_pattern_target' ? n : undefined;
    if (target && bindsName(frame, target, name)) return undefined;
  }
  for (const a of frame.at.fn.assignments) {
    if (a.start >= before) break;
    // `args = wrap(args)`: the read on the right is of the value before this assignment.
    if (a.end > before) continue;
    const left = child(a, 'left');
    if (left && unparen(left).type !== 'identifier' && bindsName(frame, unparen(left), name, true)) return undefined;
    if (!left || s.text(unparen(left)) !== name) continue;
    const right = child(a, 'right');
    if (a.type !== 'assignment' || !right) return undefined;
    const holds = reached(frame, a, before, calls);
    if (holds === undefined) return undefined;
    if (holds) last = { node: right, frame };
  }
  return last;
}

/** The target binds `name` (in a tuple or list pattern; `nested` only looks inside patterns, not at the top). */
function bindsName(frame: Frame, target: PyNode, name: string, nested = false): boolean {
  const s = frame.at.model.syntax;
  const t = unparen(target);
  if (t.type === 'identifier') return !nested && s.text(t) === name;
  if (!/^(pattern_list|tuple_pattern|list_pattern|tuple|list)$/.test(t.type)) return false;
  return named(t).some((p) => bindsName(frame, p, name));
}

/** The value of the return the frame reaches: the first whose guards hold, all returns before it decided out. */
export function reachedReturn(frame: Frame, calls?: CallReader): Value | undefined {
  for (const ret of frame.at.fn.nodes) {
    if (ret.type !== 'return_statement') continue;
    const holds = reached(frame, ret, undefined, calls);
    if (holds === undefined) return undefined;
    const value = named(ret)[0];
    if (holds) return value ? { node: value, frame } : undefined;
  }
  return undefined;
}

/**
 * Whether the statement runs when the frame runs to it: each enclosing `if`/`elif`/`else` decided, loops undecided.
 * A block that also holds the offset `reader` (where the value is read) runs whenever the read does.
 */
export function reached(frame: Frame, node: PyNode, reader?: number, calls?: CallReader): boolean | undefined {
  const stop = frame.at.fn.node;
  for (let n: PyNode | null = node.parent; n && n !== stop; n = n.parent) {
    const owner = n.parent;
    if (n.type !== 'block' || !owner) continue;
    if (reader !== undefined && n.start <= reader && reader < n.end) continue;
    if (/^(for|while)_statement$/.test(owner.type) || owner.type === 'except_clause') return undefined;
    const branches = owner.type === 'if_statement' ? [owner] : [];
    if (owner.type === 'elif_clause' || owner.type === 'else_clause') branches.push(owner.parent!);
    // A `with` or `try` body and a `finally` run whenever the statement around them does; other blocks may not.
    if (branches.length === 0 && (owner === stop || /^(with_statement|try_statement|finally_clause)$/.test(owner.type)))
      continue;
    if (branches.length === 0) return undefined;
    const statement = branches[0];
    const conditions = [child(statement, 'condition')];
    for (const c of named(statement)) if (c.type === 'elif_clause') conditions.push(child(c, 'condition'));
    const taken =
      owner.type === 'if_statement'
        ? 0
        : owner.type === 'elif_clause'
          ? conditions.indexOf(child(owner, 'condition'))
          : conditions.length;
    for (let i = 0; i <= Math.min(taken, conditions.length - 1); i++) {
      const c = conditions[i];
      const truth = c ? decide({ node: c, frame }, 0, calls) : undefined;
      if (truth === undefined) return undefined;
      if (truth !== (i === taken)) return false;
    }
  }
  return true;
}

/** The truth of a condition, where its values are decided. */
export function decide(value: Value, steps = 0, calls?: CallReader): boolean | undefined {
  if (steps > MAX_STEPS) return undefined;
  const s = value.frame.at.model.syntax;
  const n = unparen(value.node);
  const sub = (node: PyNode | undefined) => (node ? decide({ node, frame: value.frame }, steps + 1, calls) : undefined);
  if (n.type === 'boolean_operator') {
    const [a, b] = [sub(child(n, 'left')), sub(child(n, 'right'))];
    const and = s.operator(n) === 'and';
    if (and) return a === false || b === false ? false : a && b ? true : undefined;
    return a === true || b === true ? true : a === false && b === false ? false : undefined;
  }
  if (n.type === 'not_operator') {
    const a = sub(child(n, 'argument'));
    return a === undefined ? undefined : !a;
  }
  if (n.type === 'call' && DISTRIBUTED_RUN.test(s.calleeText(n))) return true;
  if (n.type === 'call') return truthOf(calls?.literal(value));
  if (n.type === 'comparison_operator') {
    const [left, right] = named(n);
    const op = s
      .text(n)
      .slice(left.end - n.start, right.start - n.start)
      .replace(/\s+/g, ' ')
      .trim();
    if (unparen(right).type !== 'none' || (op !== 'is' && op !== 'is not')) return undefined;
    const v = resolved({ node: left, frame: value.frame }, steps + 1, calls);
    const isNone = v === null ? true : v ? noneness(v) : undefined;
    return isNone === undefined ? undefined : op === 'is' ? isNone : !isNone;
  }
  if (n.type === 'identifier' || n.type === 'attribute') {
    const v = resolved({ node: n, frame: value.frame }, steps + 1, calls);
    if (!v) return undefined;
    const t = unparen(v.node).type;
    if (t === 'true' || t === 'false') return t === 'true';
    if (t === 'none') return false;
    const number = v.frame.at.model.syntax.numberValue(v.node);
    if (number !== undefined) return number !== 0;
    return t === 'call' || t === 'attribute' ? truthOf(calls?.literal(v)) : undefined;
  }
  return undefined;
}

/** Python's truth of a literal read by a call reader. */
function truthOf(v: number | boolean | null | undefined): boolean | undefined {
  return v === undefined ? undefined : v === null ? false : typeof v === 'number' ? v !== 0 : v;
}

/** Calls whose result is a tensor or a number, never None. */
const NEVER_NONE_CALL =
  /^(sum|to|float|long|int|as_tensor|tensor|zeros|ones|full|count_nonzero|clamp|clamp_min|numel)$/;

/** Whether a resolved expression is None: literals, operators, containers and tensor-making calls are not. */
function noneness(v: Value): boolean | undefined {
  const n = unparen(v.node);
  if (n.type === 'none') return true;
  if (n.type === 'call') return NEVER_NONE_CALL.test(v.frame.at.model.syntax.calleeName(n)) ? false : undefined;
  return /^(binary_operator|unary_operator|integer|float|string|true|false|dictionary|list|tuple)$/.test(n.type)
    ? false
    : undefined;
}

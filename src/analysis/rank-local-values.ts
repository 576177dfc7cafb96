// Which values of a method are this rank's own and which were exchanged with the other ranks, per path. The method's
// statements are walked in order up to one target node; every local name (and `self.` attribute the method assigns)
// carries facts, each a path formula (path-formulas.ts) with a status:
//   reduced: the value went through a collective (`all_reduce` in place, `all_gather_list(...)`) on that path;
//   local:   the value is one that the method exchanges with the other ranks on some path (it is an argument of a
//            collective), before or without that exchange: the method's own statement that it is a per-rank value;
//   unknown: anything else (a call the walk cannot see into, a parameter).
// Branches are walked with their condition added to the path, and joined by restricting each side's facts to its
// condition; a branch that ends in `return` or `raise` leaves the rest of the method its negation. Loops and `except`
// clauses are branches on an opaque atom (they may or may not run). Facts whose path is infeasible are dropped.
import { child, named, visit, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import { and, atom, not, or, satisfiable, TRUE, type Formula } from './path-formulas';
import type { PathConditions } from './path-conditions';

export type RankStatus = 'local' | 'reduced' | 'unknown';
export interface RankFact {
  readonly when: Formula;
  readonly status: RankStatus;
}
type Env = Map<string, readonly RankFact[]>;

export interface StateAt {
  /** The path condition of the target. */
  readonly pc: Formula;
  factsOf(name: string): readonly RankFact[] | undefined;
}

/** Collectives that make a value the same on every rank (a sum, a gather); a broadcast is not among them. */
const COLLECTIVE =
  /^(all_reduce|allreduce|all_gather|allgather|all_gather_list|all_gather_object|all_gather_into_tensor|reduce_scatter|reduce_scatter_tensor|all_reduce_coalesced)$/;
/** Builtins whose result carries what their arguments carry. */
const PURE = new Set([
  'sum',
  'list',
  'tuple',
  'float',
  'int',
  'len',
  'max',
  'min',
  'zip',
  'sorted',
  'chain',
  'from_iterable',
]);
/** Methods whose result carries what their object carries. */
const PURE_METHOD = new Set(['tolist', 'item', 'float', 'double', 'sum', 'cpu', 'cuda', 'to', 'clone', 'detach']);
const MAX_FACTS = 64;

export class RankLocalWalker {
  private readonly exchanged = new Set<string>();
  private found: { pc: Formula; env: Env } | undefined;

  constructor(
    private readonly model: FileModel,
    private readonly conditions: PathConditions,
    private readonly fn: FunctionInfo,
    /** True when a call's result carries only what its arguments carry (a count's denominator helper). */
    private readonly countPreserving: (call: PyNode) => boolean,
  ) {
    for (const call of fn.calls) {
      if (!isCollective(model, call)) continue;
      const args = child(call, 'arguments');
      if (args) visit(args, (n) => void (n.type === 'identifier' && this.exchanged.add(model.syntax.text(n))));
    }
  }

  /** The facts at `target` (a node inside the method), or undefined when the walk did not reach it. */
  stateAt(target: PyNode): StateAt | undefined {
    this.found = undefined;
    const body = child(this.fn.node, 'body');
    if (body) this.block(body, TRUE, new Map(), target);
    const found = this.found as { pc: Formula; env: Env } | undefined;
    return found ? { pc: found.pc, factsOf: (n) => found.env.get(n) } : undefined;
  }

  /** Walks a block; returns the state after it, or undefined when every path through it leaves the method. */
  private block(block: PyNode, pc: Formula, env: Env, target: PyNode): { pc: Formula; env: Env } | undefined {
    let state: { pc: Formula; env: Env } | undefined = { pc, env };
    for (const st of named(block)) {
      if (!state || this.found) return state;
      state = this.statement(st, state.pc, state.env, target);
    }
    return state;
  }

  private statement(st: PyNode, pc: Formula, env: Env, target: PyNode): { pc: Formula; env: Env } | undefined {
    const contains = st.start <= target.start && target.end <= st.end;
    switch (st.type) {
      case 'if_statement':
        return this.ifStatement(st, pc, env, target);
      case 'for_statement':
      case 'while_statement':
      case 'with_statement':
      case 'try_statement':
        return this.compound(st, pc, env, target);
      case 'function_definition':
      case 'class_definition':
      case 'decorated_definition':
        return { pc, env };
      case 'return_statement':
      case 'raise_statement':
        if (contains) this.found = { pc, env };
        return undefined;
      default:
        if (contains) {
          this.found = { pc, env };
          return { pc, env };
        }
        return { pc, env: this.simple(st, pc, env) };
    }
  }

  private ifStatement(st: PyNode, pc: Formula, env: Env, target: PyNode): { pc: Formula; env: Env } | undefined {
    const test = child(st, 'condition');
    const body = child(st, 'consequence');
    if (!test || !body) return { pc, env };
    const c = this.conditions.formula(test);
    const alternatives = st.children.filter((n) => n.type === 'elif_clause' || n.type === 'else_clause');
    const taken = this.block(body, and(pc, c), env, target);
    if (this.found) return taken;
    let rest: { pc: Formula; env: Env } | undefined;
    const elseClause = alternatives[0];
    if (!elseClause) rest = { pc: and(pc, not(c)), env };
    else if (elseClause.type === 'else_clause') {
      const b = child(elseClause, 'body');
      rest = b ? this.block(b, and(pc, not(c)), env, target) : { pc: and(pc, not(c)), env };
    } else {
      // An elif chain is the else branch holding the next `if`.
      const nested: PyNode = { ...st, children: elseClause.children.map((n) => n).concat(alternatives.slice(1)) };
      rest = this.ifStatement(nested, and(pc, not(c)), env, target);
    }
    if (this.found) return rest;
    return join(taken, rest, c);
  }

  /** Loops, `with`, `try`: the body runs or not (loops, handlers) on an opaque condition named by its position. */
  private compound(st: PyNode, pc: Formula, env: Env, target: PyNode): { pc: Formula; env: Env } | undefined {
    const body = child(st, 'body');
    if (!body) return { pc, env };
    if (st.type === 'with_statement') return this.block(body, pc, env, target);
    if (st.type === 'try_statement') {
      let state = this.block(body, pc, env, target);
      for (const handler of st.children.filter((n) => n.type === 'except_clause' || n.type === 'finally_clause')) {
        if (this.found || !state) return state;
        const hb = named(handler).find((n) => n.type === 'block');
        if (!hb) continue;
        const runs = atom({ kind: 'opaque', key: `handler@${handler.start}` });
        const after = this.block(hb, and(state.pc, runs), state.env, target);
        if (this.found) return after;
        state = join(after, { pc: and(state.pc, not(runs)), env: state.env }, runs);
      }
      return state;
    }
    const runs = atom({ kind: 'opaque', key: `loop@${st.start}` });
    const after = this.block(body, and(pc, runs), env, target);
    if (this.found) return after;
    return join(after, { pc: and(pc, not(runs)), env }, runs);
  }

  private simple(st: PyNode, pc: Formula, env: Env): Env {
    const s = this.model.syntax;
    const e = st.type === 'expression_statement' ? named(st)[0] : st;
    if (!e) return env;
    if (e.type === 'call' && isCollective(this.model, e)) {
      // An in-place collective (`dist.all_reduce(t)`): `t` is exchanged on this path.
      const first = s.args(e).positional[0];
      const key = first ? s.text(first) : undefined;
      if (!key || !env.has(key)) return env;
      const next = new Map(env);
      next.set(key, prune([...restrict(env.get(key)!, not(pc)), { when: pc, status: 'reduced' }]));
      return next;
    }
    if (e.type !== 'assignment' && e.type !== 'augmented_assignment') return env;
    const left = child(e, 'left');
    const right = child(e, 'right');
    if (!left || !right) return env;
    const next = new Map(env);
    const targets = targetsOf(left);
    const values = right.type === 'expression_list' || right.type === 'tuple' ? named(right) : [];
    targets.forEach((t, i) => {
      if (!t) return;
      const key = s.text(t);
      let facts = this.valueFacts(values.length === targets.length ? values[i] : right, env);
      if (e.type === 'augmented_assignment') facts = combine([env.get(key) ?? [unknownFact()], facts]);
      if (this.exchanged.has(key)) facts = facts.map((f) => (f.status === 'reduced' ? f : { ...f, status: 'local' }));
      next.set(key, prune(facts.map((f) => ({ ...f, when: and(pc, f.when) }))));
    });
    return next;
  }

  /** What a value carries, by case. */
  private valueFacts(value: PyNode, env: Env): RankFact[] {
    const s = this.model.syntax;
    if (value.type === 'call' && isCollective(this.model, value)) return [{ when: TRUE, status: 'reduced' }];
    const parts: (readonly RankFact[])[] = [];
    let opaque = false;
    visit(value, (n) => {
      if (n.type === 'call') {
        if (isCollective(this.model, n)) parts.push([{ when: TRUE, status: 'reduced' }]);
        else if (this.countPreserving(n) || PURE.has(s.calleeName(n))) {
          // Its tracked arguments decide; an object argument the walk does not follow (a criterion) is passed over.
          const args = child(n, 'arguments');
          if (args) for (const a of named(args)) this.operandFacts(a, env, parts);
          return false;
        } else if (PURE_METHOD.has(s.calleeName(n)) && s.calleeObject(n)) {
          this.operandFacts(s.calleeObject(n)!, env, parts);
          return false;
        } else opaque = true;
        return false;
      }
      if (n.type === 'identifier' || n.type === 'attribute') {
        const facts = env.get(s.text(n));
        if (facts) parts.push(facts);
        else if (n.type === 'identifier' || !/^self\./.test(s.text(n))) opaque = true;
        return false;
      }
      return undefined;
    });
    if (opaque) parts.push([unknownFact()]);
    return parts.length === 0 ? [unknownFact()] : combine(parts);
  }

  private operandFacts(a: PyNode, env: Env, parts: (readonly RankFact[])[]): void {
    const facts = this.valueFacts(a, env);
    if (!(facts.length === 1 && facts[0].status === 'unknown' && facts[0].when === TRUE)) parts.push(facts);
  }
}

export function isCollective(model: FileModel, call: PyNode): boolean {
  return COLLECTIVE.test(model.syntax.calleeName(call));
}

function unknownFact(): RankFact {
  return { when: TRUE, status: 'unknown' };
}

function targetsOf(left: PyNode): (PyNode | undefined)[] {
  if (left.type === 'identifier' || left.type === 'attribute') return [left];
  if (['pattern_list', 'tuple_pattern', 'list_pattern', 'expression_list', 'list', 'tuple'].includes(left.type))
    return named(left).map((n) => (n.type === 'identifier' || n.type === 'attribute' ? n : undefined));
  return [];
}

/** Every combination of the parts' facts; a reduced part makes the value reduced, an unknown one unknown. */
function combine(parts: readonly (readonly RankFact[])[]): RankFact[] {
  let acc: RankFact[] = [{ when: TRUE, status: 'local' }];
  let sawTracked = false;
  for (const p of parts) {
    sawTracked = true;
    const next: RankFact[] = [];
    for (const a of acc) for (const b of p) next.push({ when: and(a.when, b.when), status: worse(a.status, b.status) });
    acc = prune(next);
    if (acc.length > MAX_FACTS) return [unknownFact()];
  }
  return sawTracked ? acc : [unknownFact()];
}

function worse(a: RankStatus, b: RankStatus): RankStatus {
  if (a === 'reduced' || b === 'reduced') return 'reduced';
  if (a === 'unknown' || b === 'unknown') return 'unknown';
  return 'local';
}

function restrict(facts: readonly RankFact[], c: Formula): RankFact[] {
  return facts.map((f) => ({ ...f, when: and(f.when, c) }));
}

/** Drops the facts whose path cannot be taken; a formula too large to decide is kept. */
function prune(facts: readonly RankFact[]): RankFact[] {
  return facts.filter((f) => satisfiable(f.when) !== false);
}

/** The state after two branches, the first taken when `c` holds. */
function join(
  a: { pc: Formula; env: Env } | undefined,
  b: { pc: Formula; env: Env } | undefined,
  c: Formula,
): { pc: Formula; env: Env } | undefined {
  if (!a) return b;
  if (!b) return a;
  const env: Env = new Map();
  for (const key of new Set([...a.env.keys(), ...b.env.keys()])) {
    const fa = a.env.get(key);
    const fb = b.env.get(key);
    if (fa === fb) env.set(key, fa!);
    else env.set(key, prune([...restrict(fa ?? [unknownFact()], c), ...restrict(fb ?? [unknownFact()], not(c))]));
  }
  // The two paths differ only in `c`: after the join the path condition is what both share.
  return { pc: commonPrefix(a.pc, b.pc), env };
}

/** The path after a join: the shared condition when the two sides differ only in `c`, else their disjunction. */
function commonPrefix(a: Formula, b: Formula): Formula {
  if (a === b) return a;
  if ((b.kind === 'not' && b.arg === a) || (a.kind === 'not' && a.arg === b)) return TRUE;
  if (a.kind === 'and' && b.kind === 'and' && a.args.length === 2 && b.args.length === 2 && a.args[0] === b.args[0]) {
    const [x, y] = [a.args[1], b.args[1]];
    if ((y.kind === 'not' && y.arg === x) || (x.kind === 'not' && x.arg === y)) return a.args[0];
  }
  return or(a, b);
}

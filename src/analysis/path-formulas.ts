// Boolean formulas over the flags a training step branches on, and a small satisfiability check. conditions.ts
// decides one guard at a time from a known value; a path-sensitive rule instead needs to know whether several guards,
// written in different methods, can hold together: `_sync_stats()` False, the `model` property choosing the bare
// module, and the world size above one. Atoms are attribute flags (`self.args.use_bmuf`), comparisons of an
// attribute with a constant (`self.args.distributed_world_size > 1`), and opaque conditions (`step % k == 0`, any
// call) that are equal only to themselves. A formula is turned into a disjunction of conjunctions of literals (capped:
// beyond the cap the answer is "unknown"), and a conjunction is satisfiable when no atom is both asserted and denied
// and the comparisons on each attribute leave some value.

export type Constant = number | string | boolean | null;
export type CompareOp = '<' | '<=' | '>' | '>=' | '==' | '!=';

export type Atom =
  | { readonly kind: 'flag'; readonly key: string }
  | { readonly kind: 'compare'; readonly key: string; readonly op: CompareOp; readonly value: Constant }
  | { readonly kind: 'opaque'; readonly key: string };

export type Formula =
  | { readonly kind: 'const'; readonly value: boolean }
  | { readonly kind: 'atom'; readonly atom: Atom }
  | { readonly kind: 'not'; readonly arg: Formula }
  | { readonly kind: 'and' | 'or'; readonly args: readonly Formula[] };

export const TRUE: Formula = { kind: 'const', value: true };
export const FALSE: Formula = { kind: 'const', value: false };

export function atom(a: Atom): Formula {
  return { kind: 'atom', atom: a };
}

export function not(f: Formula): Formula {
  if (f.kind === 'const') return f.value ? FALSE : TRUE;
  if (f.kind === 'not') return f.arg;
  return { kind: 'not', arg: f };
}

export function and(...fs: Formula[]): Formula {
  const args = fs.filter((f) => !(f.kind === 'const' && f.value));
  if (args.some((f) => f.kind === 'const' && !f.value)) return FALSE;
  return args.length === 0 ? TRUE : args.length === 1 ? args[0] : { kind: 'and', args };
}

export function or(...fs: Formula[]): Formula {
  const args = fs.filter((f) => !(f.kind === 'const' && !f.value));
  if (args.some((f) => f.kind === 'const' && f.value)) return TRUE;
  return args.length === 0 ? FALSE : args.length === 1 ? args[0] : { kind: 'or', args };
}

export interface Literal {
  readonly atom: Atom;
  readonly positive: boolean;
}

/** More conjunctions than this and the formula is not decided: the rules that ask stay silent. */
const MAX_CUBES = 512;

/** The formula as a disjunction of conjunctions of literals, or undefined when it would exceed the cap. */
export function cubes(f: Formula, positive = true): Literal[][] | undefined {
  if (f.kind === 'const') return f.value === positive ? [[]] : [];
  if (f.kind === 'atom') return [[{ atom: f.atom, positive }]];
  if (f.kind === 'not') return cubes(f.arg, !positive);
  // De Morgan: a negated conjunction is a disjunction of the negated arguments, and the other way round.
  const disjunctive = (f.kind === 'or') === positive;
  const parts: Literal[][][] = [];
  for (const a of f.args) {
    const c = cubes(a, positive);
    if (!c) return undefined;
    parts.push(c);
  }
  if (disjunctive) {
    const all = parts.flat();
    return all.length > MAX_CUBES ? undefined : all;
  }
  let acc: Literal[][] = [[]];
  for (const p of parts) {
    const next: Literal[][] = [];
    for (const a of acc) for (const b of p) if (consistent([...a, ...b])) next.push([...a, ...b]);
    if (next.length > MAX_CUBES) return undefined;
    acc = next;
  }
  return acc;
}

/** True, false, or undefined when the formula is too large to decide. */
export function satisfiable(f: Formula): boolean | undefined {
  const c = cubes(f);
  if (!c) return undefined;
  return c.some(consistent);
}

/** One satisfiable conjunction of the formula, to show the path a finding is about. */
export function witness(f: Formula): Literal[] | undefined {
  return cubes(f)?.find(consistent);
}

/** Whether a conjunction of literals can hold: no atom both ways, and some value left for every compared key. */
export function consistent(literals: readonly Literal[]): boolean {
  const seen = new Map<string, boolean>();
  const compares = new Map<string, { op: CompareOp; value: Constant }[]>();
  for (const l of literals) {
    const id = atomId(l.atom);
    const before = seen.get(id);
    if (before !== undefined && before !== l.positive) return false;
    seen.set(id, l.positive);
    if (l.atom.kind === 'compare') {
      const list = compares.get(l.atom.key) ?? [];
      list.push({ op: l.positive ? l.atom.op : negate(l.atom.op), value: l.atom.value });
      compares.set(l.atom.key, list);
    }
  }
  for (const list of compares.values()) if (!valueLeft(list)) return false;
  return true;
}

export function atomId(a: Atom): string {
  return a.kind === 'compare' ? `${a.key} ${a.op} ${JSON.stringify(a.value)}` : `${a.kind}:${a.key}`;
}

function negate(op: CompareOp): CompareOp {
  const m: Record<CompareOp, CompareOp> = { '<': '>=', '<=': '>', '>': '<=', '>=': '<', '==': '!=', '!=': '==' };
  return m[op];
}

/**
 * Whether one value satisfies every comparison. Numbers are bounded by an interval with strict ends (the flags these
 * rules compare are counts and sizes, but a real interval is the weaker, safer assumption for "infeasible");
 * equalities fix the value, and disequalities exclude single values.
 */
function valueLeft(list: readonly { op: CompareOp; value: Constant }[]): boolean {
  const equal = list.filter((c) => c.op === '==').map((c) => c.value);
  if (equal.length > 0) {
    const v = equal[0];
    if (equal.some((e) => e !== v)) return false;
    return list.every((c) => holds(v, c.op, c.value));
  }
  let lo = -Infinity;
  let loStrict = false;
  let hi = Infinity;
  let hiStrict = false;
  for (const c of list) {
    if (typeof c.value !== 'number') continue;
    if ((c.op === '>' || c.op === '>=') && (c.value > lo || (c.value === lo && c.op === '>'))) {
      lo = c.value;
      loStrict = c.op === '>';
    }
    if ((c.op === '<' || c.op === '<=') && (c.value < hi || (c.value === hi && c.op === '<'))) {
      hi = c.value;
      hiStrict = c.op === '<';
    }
  }
  if (lo > hi || (lo === hi && (loStrict || hiStrict))) return false;
  // A closed point interval is one value, which a disequality can exclude.
  if (lo === hi) return list.every((c) => c.op !== '!=' || c.value !== lo);
  return true;
}

function holds(v: Constant, op: CompareOp, w: Constant): boolean {
  if (op === '==') return v === w;
  if (op === '!=') return v !== w;
  if (typeof v !== 'number' || typeof w !== 'number') return true;
  return op === '<' ? v < w : op === '<=' ? v <= w : op === '>' ? v > w : v >= w;
}

/** The literals as Python-like text, for a finding's message. */
export function describe(literals: readonly Literal[]): string {
  const seen = new Set<string>();
  return literals
    .filter((l) => {
      const id = `${l.positive}:${atomId(l.atom)}`;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    })
    .map((l) => {
      const a = l.atom;
      if (a.kind === 'compare') return `${a.key} ${l.positive ? a.op : negate(a.op)} ${String(a.value)}`;
      return l.positive ? a.key : `not ${a.key}`;
    })
    .join(' and ');
}

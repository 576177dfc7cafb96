// The arithmetic of symbolic group sizes (group-sizes.ts): products of named parallel dimensions, each with the
// `if` branches it assumes and where it was chosen, combined only along one consistent path through the branches.
import { child, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { ArgumentDenotation, ValueOrigin } from './constructor-request';
import type { Dims } from './dims';
/** One value an expression may have, with the `if` branches (statement node → branch index) it assumes. */
export interface SizeAlternative {
  readonly dims: Dims;
  readonly branches: ReadonlyMap<PyNode, number>;
  /** Where the value was chosen: an assignment of this file, or a value passed to the object's constructor. */
  readonly origin?: SizeOrigin;
}

/** The assignment of this file that chose a value, or the origin of a value a constructor argument carried in. */
export type SizeOrigin = { readonly node: PyNode } | { readonly passed: ValueOrigin };

function sameOrigin(a: SizeOrigin, b: SizeOrigin): boolean {
  return 'node' in a ? 'node' in b && a.node === b.node : 'passed' in b && a.passed === b.passed;
}

/** The one origin the parts of a product have (`1.0 / dp_size` was chosen where dp_size was); else none. */
function productOrigin(parts: readonly SizeAlternative[]): SizeOrigin | undefined {
  const origins = parts.flatMap((p) => (p.origin ? [p.origin] : []));
  return origins.length > 0 && origins.every((o) => sameOrigin(o, origins[0])) ? origins[0] : undefined;
}

/**
 * The replicas a sum over each dimension counts. Data and context ranks each hold a mean over their own tokens
 * (Megatron divides by dp × cp). An expert-data-parallel sum counts the data replicas of the whole job, since the
 * token all-to-all already gathered the expert-parallel ranks' tokens (both DeepSpeed and Megatron divide expert
 * gradients by the data-parallel size). Sequence, tensor, pipeline and expert ranks hold disjoint parts.
 */
const REPLICAS: Record<string, readonly string[]> = { dp: ['dp'], cp: ['cp'], edp: ['dp', 'cp'] };

export const MAX_ALTERNATIVES = 32;

export function multiplyDims(a: Dims, b: Dims, sign: 1 | -1 = 1): Map<string, number> {
  const out = new Map(a);
  for (const [d, e] of b) {
    const v = (out.get(d) ?? 0) + sign * e;
    if (v === 0) out.delete(d);
    else out.set(d, v);
  }
  return out;
}

/** The replicas a sum over a group of these dimensions counts. */
export function replicaDims(group: Dims): Map<string, number> {
  let out = new Map<string, number>();
  for (const [d, e] of group) for (const r of REPLICAS[d] ?? []) out = multiplyDims(out, new Map([[r, e]]));
  return out;
}

/** "dp×sp", "1/sp", "dp/edp". */
export function formatDims(dims: Dims): string {
  const up = [...dims].filter(([, e]) => e > 0).map(([d, e]) => (e === 1 ? d : `${d}^${e}`));
  const down = [...dims].filter(([, e]) => e < 0).map(([d, e]) => (e === -1 ? d : `${d}^${-e}`));
  const top = up.length > 0 ? up.join('×') : '1';
  if (down.length === 0) return top;
  return `${top}/${down.length > 1 ? `(${down.join('×')})` : down[0]}`;
}

export function consistent(a: ReadonlyMap<PyNode, number>, b: ReadonlyMap<PyNode, number>): boolean {
  for (const [k, v] of b) if (a.has(k) && a.get(k) !== v) return false;
  return true;
}

export function merge(a: ReadonlyMap<PyNode, number>, b: ReadonlyMap<PyNode, number>): Map<PyNode, number> {
  const out = new Map(a);
  for (const [k, v] of b) out.set(k, v);
  return out;
}

/** Every consistent product of one alternative from each list; undefined when any list is unknown. */
export function combine(
  lists: readonly (readonly SizeAlternative[] | undefined)[],
  signs: readonly (1 | -1)[],
): SizeAlternative[] | undefined {
  let acc: { dims: Dims; branches: Map<PyNode, number>; parts: SizeAlternative[] }[] = [
    { dims: new Map(), branches: new Map(), parts: [] },
  ];
  for (let i = 0; i < lists.length; i++) {
    const list = lists[i];
    if (!list) return undefined;
    const next: typeof acc = [];
    for (const a of acc) {
      for (const b of list) {
        if (!consistent(a.branches, b.branches)) continue;
        next.push({
          dims: multiplyDims(a.dims, b.dims, signs[i]),
          branches: merge(a.branches, b.branches),
          parts: [...a.parts, b],
        });
        if (next.length > MAX_ALTERNATIVES) return undefined;
      }
    }
    acc = next;
  }
  return acc.map(({ dims, branches, parts }) => {
    const origin = productOrigin(parts);
    return origin ? { dims, branches, origin } : { dims, branches };
  });
}

/** The `if` branches a node lies in, up to its function: if-statement node → 0 (body), 1.. (elif/else). */
export function branchesOf(node: PyNode): Map<PyNode, number> {
  const out = new Map<PyNode, number>();
  for (let n: PyNode | null = node; n && n.parent; n = n.parent) {
    const p = n.parent;
    if (p.type === 'function_definition' || p.type === 'class_definition') break;
    if (p.type === 'if_statement' && n.field === 'consequence') out.set(p, 0);
    if ((p.type === 'elif_clause' || p.type === 'else_clause') && p.parent?.type === 'if_statement') {
      const alternatives = p.parent.children.filter((c) => c.type === 'elif_clause' || c.type === 'else_clause');
      out.set(p.parent, 1 + alternatives.indexOf(p));
    }
  }
  return out;
}

/**
 * Plain `name = value` assignments before the use that can run on its path; one that runs whenever the use runs
 * (in no branch the use is not in) replaces the earlier ones.
 */
export function reachingAssignments(
  model: FileModel,
  fn: FunctionInfo,
  name: string,
  use: PyNode,
  at: ReadonlyMap<PyNode, number>,
): PyNode[] {
  const s = model.syntax;
  let out: PyNode[] = [];
  for (const a of fn.assignments) {
    if (a.type !== 'assignment' || a.start >= use.start) continue;
    const left = child(a, 'left');
    if (!left || left.type !== 'identifier' || s.text(left) !== name || !child(a, 'right')) continue;
    const where = branchesOf(a);
    if (!consistent(at, where)) continue;
    if ([...where].every(([k, v]) => at.get(k) === v)) out = [a];
    else out.push(a);
  }
  return out;
}

/**
 * The alternatives an answer gives for one kind of value, read in a method of the class whose constructor is `init`:
 * the value the sites agree on, or one value per site (each assuming that site, a branch of the constructor, so a
 * group and a factor are combined only when the same object was built with both). `perCallOnly`: only an answer
 * with per-call sites, for an object built in view whose own construction names nothing.
 */
export function answerAlternatives(
  answer: ArgumentDenotation | undefined,
  init: PyNode,
  kind: 'group' | 'size' | 'groupDict',
  perCallOnly = false,
): SizeAlternative[] | undefined {
  if (perCallOnly && !answer?.bySite?.some((d) => d.perCall)) return undefined;
  const dims = answer?.[kind];
  const bySite = answer?.bySite;
  // A per-call site that does not name the value is an object not judged here; every other site must name it.
  const perSite = !!bySite && bySite.every((d) => d[kind] || d.perCall) && bySite.some((d) => d[kind]);
  // Sites that agree on a value chosen at different places keep each site's place, as sites that disagree do.
  if (dims && (answer.origin || !perSite))
    return [{ dims, branches: new Map(), ...(answer.origin ? { origin: { passed: answer.origin } } : {}) }];
  if (!bySite || !perSite) return undefined;
  return bySite.flatMap((d, i) => {
    const value = d[kind];
    return value
      ? [{ dims: value, branches: new Map([[init, i]]), ...(d.origin ? { origin: { passed: d.origin } } : {}) }]
      : [];
  });
}

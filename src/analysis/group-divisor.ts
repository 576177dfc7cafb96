// CP003 for model-parallel groups: the gradients summed over a named group (a product of parallel dimensions) are
// divided by a size that is not the number of replicas that group counts. Both sides must be named by the
// frameworks' group helpers on one consistent path (group-sizes.ts); any divisor or multiplier the analysis cannot
// name, unless it cancels out (`x / f * f`), keeps it silent.
import type { PyNode } from './tree';
import type { Env, SizeClass } from './sizes';
import type { ValueOrigin } from './constructor-request';
import {
  combine,
  formatDims,
  multiplyDims,
  replicaDims,
  type Dims,
  type GroupSizes,
  type SizeAlternative,
} from './group-sizes';

/** Dimensions that are 1 in the frameworks that do not have them. */
export const OPTIONAL_DIMS = new Set(['cp']);

/** A scaling term of the reduced gradients, with the environment its expression is read in. */
export interface ScalingTerm {
  readonly size: SizeClass;
  readonly sign: 1 | -1;
  readonly node: PyNode;
  readonly env: Env;
}

export interface GroupDivisorMismatch<T extends ScalingTerm> {
  /** The divisor the finding points at. */
  readonly term: T;
  readonly groupDims: Dims;
  readonly replicas: Dims;
  /** The product of the named divisors (and multipliers), as a size. */
  readonly divisorDims: Dims;
  /** What the gradients end up multiplied by, relative to the mean over the replicas. */
  readonly factor: Dims;
  /** Where the divisor's value was chosen, when a constructor argument carried it to the object that applies it. */
  readonly origin?: ValueOrigin;
  /** The value chosen there, on this path. */
  readonly originDims?: Dims;
}

/**
 * Where the value the term takes on this path was chosen, when it reached the object through a constructor
 * argument: the place a user fixes is where the factor was picked, not the method that applies it.
 */
export function chosenAt<T extends ScalingTerm>(
  named: readonly { term: T; values: SizeAlternative[] }[],
  term: T,
  path: SizeAlternative,
): { origin: ValueOrigin; originDims: Dims } | undefined {
  const values = named.find((n) => n.term === term)?.values ?? [];
  const taken = values.find((v) => [...v.branches].every(([k, b]) => path.branches.get(k) === b));
  return taken?.origin && 'passed' in taken.origin
    ? { origin: taken.origin.passed, originDims: taken.dims }
    : undefined;
}

/**
 * The first path on which `op` over `groupNode`, scaled by `terms`, does not leave the mean over the group's
 * replicas; 'agrees' when every path is named and each leaves that mean; undefined when it cannot be decided.
 */
export function groupDivisorMismatch<T extends ScalingTerm>(
  sizes: GroupSizes,
  groupNode: PyNode | undefined,
  env: Env,
  averages: boolean,
  terms: readonly T[],
  text: (n: PyNode) => string,
): GroupDivisorMismatch<T> | 'agrees' | undefined {
  const groups = sizes.group(groupNode, env);
  if (!groups) return undefined;
  const named = namedTerms(sizes, terms, text);
  if (!named) return undefined;
  // A divisor is written as one (`/ dp`) or as a factor that is a reciprocal (`*= 1.0 / dp`, `mul_(scale)`).
  const divides = (n: { term: T; values: SizeAlternative[] }) =>
    n.values.some((v) => [...v.dims.values()].some((e) => e * n.term.sign < 0));
  const divisor = named.filter(divides).pop();
  if (!divisor && !averages) return undefined;
  let decided = true;
  for (const g of groups) {
    const replicas = replicaDims(g.dims);
    if (replicas.size === 0) {
      decided = false;
      continue;
    }
    const combos = combine([[g], ...named.map((n) => n.values)], [1, ...named.map((n) => n.term.sign)]);
    if (!combos) decided = false;
    for (const c of combos ?? []) {
      // c.dims is size(group) × the named terms; what the gradients are multiplied by is the replicas × the terms.
      const termsDims = multiplyDims(c.dims, g.dims, -1);
      const factor = multiplyDims(replicas, averages ? multiplyDims(termsDims, g.dims, -1) : termsDims);
      // Context parallelism is counted by an expert-data-parallel sum, but a framework without it (DeepSpeed) has
      // cp = 1: it proves nothing unless the code names it.
      const written = new Set([...g.dims.keys(), ...named.flatMap((n) => n.values.flatMap((v) => [...v.dims.keys()]))]);
      const proven = new Map([...factor].filter(([d]) => !OPTIONAL_DIMS.has(d) || written.has(d)));
      if (proven.size === 0) continue;
      // A power of the replica count itself is a missing or a doubled division (CP001, CP002), which the
      // world-size rules judge; this rule speaks of a divisor that counts other ranks.
      if (isPowerOf(proven, replicas)) return undefined;
      const term = divisor?.term ?? named[0]?.term;
      if (!term) return undefined;
      const shown = new Map([...replicas].filter(([d]) => !OPTIONAL_DIMS.has(d) || written.has(d)));
      const origin = chosenAt(named, term, c);
      return {
        term,
        groupDims: g.dims,
        replicas: shown,
        divisorDims: multiplyDims(new Map(), termsDims, -1),
        factor: proven,
        ...origin,
      };
    }
  }
  return decided ? 'agrees' : undefined;
}

/** The scaling terms with their named sizes; undefined when a term that does not cancel out cannot be named. */
export function namedTerms<T extends ScalingTerm>(
  sizes: GroupSizes,
  terms: readonly T[],
  text: (n: PyNode) => string,
): { term: T; values: SizeAlternative[] }[] | undefined {
  const named: { term: T; values: SizeAlternative[] }[] = [];
  const unknown = new Map<string, number>();
  for (const t of terms) {
    const values = sizes.size(t.node, t.env);
    if (values) {
      named.push({ term: t, values });
      continue;
    }
    if (t.size.kind === 'neutral') continue;
    if (t.size.kind !== 'unknown') return undefined;
    const key = text(t.node);
    unknown.set(key, (unknown.get(key) ?? 0) + t.sign);
  }
  return [...unknown.values()].some((v) => v !== 0) ? undefined : named;
}

export function isPowerOf(factor: Dims, base: Dims): boolean {
  const [first] = [...base];
  if (!first) return false;
  const k = (factor.get(first[0]) ?? 0) / first[1];
  if (k === 0 || factor.size !== base.size) return false;
  return [...base].every(([d, e]) => factor.get(d) === k * e);
}

/** The value the code chose for the term: the factor (`1/dp`) or the divisor (`dp`). */
export function chosenFactor(m: GroupDivisorMismatch<ScalingTerm>): string {
  const dims = m.originDims ?? new Map<string, number>();
  return `${m.term.sign === 1 ? 'factor' : 'divisor'} ${formatDims(dims)}`;
}

/** The finding's sentence: what was summed over which group, the divisor, and the effective factor. */
export function groupDivisorMessage(
  m: GroupDivisorMismatch<ScalingTerm>,
  reduction: string,
  group: string,
  divisor: string,
  averages: boolean,
): string {
  const groupSize = formatDims(m.groupDims);
  const replicas = formatDims(m.replicas);
  const how = averages
    ? `averages the gradients over \`${group}\` (${groupSize} ranks)`
    : `sums the gradients over \`${group}\` (${groupSize} ranks)`;
  const counted = replicas === groupSize ? '' : `, of which ${replicas} hold replicas of the mean`;
  // A reciprocal written as a factor (`mul_(scale)` with scale = 1/dp) is shown as the factor it is.
  const divided = averages
    ? `and they are scaled by \`${divisor}\``
    : m.term.sign === 1
      ? `and they are scaled by \`${divisor}\` (${formatDims(multiplyDims(new Map(), m.divisorDims, -1))})`
      : `and they are divided by \`${divisor}\` (${formatDims(m.divisorDims)})`;
  const expected = !averages && m.term.sign === 1 ? formatDims(multiplyDims(new Map(), m.replicas, -1)) : replicas;
  return `\`${reduction}\` ${how}${counted}, ${divided} instead of ${expected}: the effective learning rate is ${formatDims(m.factor)}× the configured one.`;
}

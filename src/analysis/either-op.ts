// A reduction whose operation a configuration flag chooses: `reduce_op = SUM` then `if config.average: reduce_op =
// AVG` (Megatron's buckets). The flag is often also the one that chose the pre-scaling factor, in another class,
// and the analysis cannot tell that the two flags are one. A factor is then proven wrong only when it is wrong
// under both operations: `1/dp` over a dp × cp group leaves cp× the mean when summed and 1/dp of it when averaged.
import { child, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { Env } from './sizes';
import { opKindOfText, type Reduction } from './reductions';
import { dimsKey } from './dims';
import { combine, formatDims, multiplyDims, replicaDims, type Dims, type GroupSizes } from './group-sizes';
import {
  chosenAt,
  isPowerOf,
  namedTerms,
  OPTIONAL_DIMS,
  type GroupDivisorMismatch,
  type ScalingTerm,
} from './group-divisor';

/** A factor wrong under both operations: `factor` when summed, `averagedFactor` when averaged. */
export type EitherOpMismatch<T extends ScalingTerm> = GroupDivisorMismatch<T> & { readonly averagedFactor: Dims };

/**
 * True when the reduction's operation is a local name that every assignment in its function sets to a sum or an
 * average, and both occur: the operation is one of the two, chosen at run time.
 */
export function sumOrAverage(model: FileModel, r: Reduction, fn: FunctionInfo): boolean {
  const node = r.op.valueNode ? unparen(r.op.valueNode) : undefined;
  if (r.op.kind !== 'other' || node?.type !== 'identifier') return false;
  const s = model.syntax;
  const name = s.text(node);
  if (fn.params.some((p) => p.name === name)) return false;
  const kinds = new Set<string | undefined>();
  for (const n of fn.nodes) {
    if (n.type !== 'assignment' && n.type !== 'augmented_assignment' && n.type !== 'for_statement') continue;
    const left = child(n, 'left');
    if (!left || !s.text(left).split(/\W+/).includes(name)) continue;
    const right = child(n, 'right');
    if (n.type !== 'assignment' || left.type !== 'identifier' || !right) return false;
    kinds.add(opKindOfText(s.text(right)));
  }
  return kinds.size === 2 && kinds.has('sum') && kinds.has('avg');
}

/**
 * The first path on which the named terms leave a wrong factor whether the group is summed or averaged over, for a
 * group all of whose ranks hold replicas (data and context parallel). An expert-data-parallel group's replicas
 * depend on relations between sizes the dimensions do not state (edp × ep = dp × cp when the expert
 * tensor-parallel size equals the tensor-parallel one), so it is left out.
 */
export function mismatchUnderBothOps<T extends ScalingTerm>(
  sizes: GroupSizes,
  groupNode: PyNode | undefined,
  env: Env,
  terms: readonly T[],
  text: (n: PyNode) => string,
): EitherOpMismatch<T> | undefined {
  const groups = sizes.group(groupNode, env);
  const named = groups ? namedTerms(sizes, terms, text) : undefined;
  if (!groups || !named || named.length === 0) return undefined;
  for (const g of groups) {
    const replicas = replicaDims(g.dims);
    if (replicas.size === 0 || dimsKey(replicas) !== dimsKey(g.dims)) continue;
    const combos = combine([[g], ...named.map((n) => n.values)], [1, ...named.map((n) => n.term.sign)]);
    const written = new Set([...g.dims.keys(), ...named.flatMap((n) => n.values.flatMap((v) => [...v.dims.keys()]))]);
    const proven = (f: Map<string, number>) => new Map([...f].filter(([d]) => !OPTIONAL_DIMS.has(d) || written.has(d)));
    for (const c of combos ?? []) {
      const termsDims = multiplyDims(c.dims, g.dims, -1);
      const summed = proven(multiplyDims(replicas, termsDims));
      const averaged = proven(multiplyDims(replicas, multiplyDims(termsDims, g.dims, -1)));
      if (summed.size === 0 || averaged.size === 0) continue;
      if (isPowerOf(summed, replicas) || isPowerOf(averaged, replicas)) continue;
      const divides = named.filter((n) => n.values.some((v) => [...v.dims.values()].some((e) => e * n.term.sign < 0)));
      const term = (divides.pop() ?? named[0]).term;
      const origin = chosenAt(named, term, c);
      return {
        ...origin,
        term,
        groupDims: g.dims,
        replicas: proven(new Map(replicas)),
        divisorDims: multiplyDims(new Map(), termsDims, -1),
        factor: summed,
        averagedFactor: averaged,
      };
    }
  }
  return undefined;
}

/** The sentence added when the operation is chosen at run time: the factor is wrong under an average too. */
export function eitherOpNote(m: object): string {
  const averagedFactor = (m as Partial<EitherOpMismatch<ScalingTerm>>).averagedFactor;
  if (!averagedFactor) return '';
  return ` The operation is chosen at run time; averaging instead leaves ${formatDims(averagedFactor)}× the mean.`;
}

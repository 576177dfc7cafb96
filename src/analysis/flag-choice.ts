// A reduction whose operation a configuration flag chooses (`reduce_op = SUM; if self.ddp_config.average_in_collective:
// reduce_op = AVG`, Megatron's bucket groups), over a group whose replicas are not all of its ranks (the expert-data-
// parallel group), with a pre-scaling factor chosen in another class under a test of the same flag of the same
// configuration attribute (`if self.ddp_config.average_in_collective: expert_gradient_scaling_factor = 1.0 / ep`).
// On the path where the factor was chosen the operation is known, and with the relation between the framework's
// sizes (dim-relations.ts) the gradients' factor reduces to a quotient of sizes. Only the quotient of the expert and
// the dense tensor-parallel sizes is reported: it is 1 at the framework's default, so the finding is a warning that
// names the configurations it holds for, not an error.
import { child, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { Env } from './sizes';
import { branchTests, type BranchTest } from './constructor-request';
import { opKindOfText, type Reduction } from './reductions';
import { combine, formatDims, multiplyDims, replicaDims, type Dims, type GroupSizes } from './group-sizes';
import { chosenAt, namedTerms, type GroupDivisorMismatch, type ScalingTerm } from './group-divisor';
import { isExpertTensorRatio, withoutExpertDataParallel } from './dim-relations';

/** A factor proven on the path where the flag that chose it also chose the reduction's operation. */
export type FlagLinkedMismatch<T extends ScalingTerm> = GroupDivisorMismatch<T> & {
  readonly flag: BranchTest;
  readonly averages: boolean;
};

/**
 * The configuration flag that turns the reduction's operation from a sum into an average: the one assignment of an
 * averaging operation to the operation's local name lies under one `if` that tests a configuration object's
 * attribute (`self.<config>.<flag>`), and the summing assignment runs on every path before it.
 */
export function averagingFlag(model: FileModel, r: Reduction, fn: FunctionInfo): BranchTest | undefined {
  const node = r.op.valueNode ? unparen(r.op.valueNode) : undefined;
  if (node?.type !== 'identifier') return undefined;
  const s = model.syntax;
  const name = s.text(node);
  const averaging: BranchTest[][] = [];
  let summedFirst = false;
  for (const a of fn.assignments) {
    const left = child(a, 'left');
    const right = child(a, 'right');
    if (a.type !== 'assignment' || left?.type !== 'identifier' || s.text(left) !== name || !right) continue;
    const kind = opKindOfText(s.text(right));
    const tests = branchTests(model, a);
    if (kind === 'sum' && tests.length === 0 && averaging.length === 0) summedFirst = true;
    else if (kind === 'avg') averaging.push(tests);
    else return undefined;
  }
  if (!summedFirst || averaging.length !== 1 || averaging[0].length !== 1) return undefined;
  const flag = averaging[0][0];
  return /^self\.\w+\.\w+$/.test(flag.test) ? flag : undefined;
}

/**
 * The first path on which the factor, chosen under a test of `flag`, leaves the expert tensor-parallel quotient
 * etp/tp on the gradients summed or averaged over an expert-data-parallel group; undefined when no path decides.
 */
export function mismatchUnderFlag<T extends ScalingTerm>(
  sizes: GroupSizes,
  groupNode: PyNode | undefined,
  env: Env,
  terms: readonly T[],
  text: (n: PyNode) => string,
  flag: BranchTest,
): FlagLinkedMismatch<T> | undefined {
  const groups = sizes.group(groupNode, env);
  const named = groups ? namedTerms(sizes, terms, text) : undefined;
  if (!groups || !named || named.length === 0) return undefined;
  for (const g of groups) {
    if (!g.dims.has('edp')) continue;
    const replicas = replicaDims(g.dims);
    const combos = combine([[g], ...named.map((n) => n.values)], [1, ...named.map((n) => n.term.sign)]);
    for (const c of combos ?? []) {
      const divides = named.filter((n) => n.values.some((v) => [...v.dims.values()].some((e) => e * n.term.sign < 0)));
      const term = (divides.pop() ?? named[0]).term;
      const origin = chosenAt(named, term, c);
      // The operation on this path is known only when the factor was chosen under a test of the same flag.
      const test = origin?.origin.under?.find((u) => u.test === flag.test);
      if (!origin || !test) continue;
      const averages = test.holds === flag.holds;
      const termsDims = multiplyDims(c.dims, g.dims, -1);
      const factor = withoutExpertDataParallel(
        multiplyDims(replicas, averages ? multiplyDims(termsDims, g.dims, -1) : termsDims),
      );
      if (!isExpertTensorRatio(factor)) continue;
      return {
        ...origin,
        term,
        groupDims: g.dims,
        replicas,
        divisorDims: multiplyDims(new Map(), termsDims, -1),
        factor,
        flag,
        averages,
      };
    }
  }
  return undefined;
}

/** The finding's sentence: the operation the flag chose, the relation used, and the configurations it holds for. */
export function flagLinkedMessage(
  m: FlagLinkedMismatch<ScalingTerm>,
  reduction: string,
  group: string,
  factorText: string,
): string {
  const op = m.averages ? 'averages' : 'sums';
  const scaled = formatDims(multiplyDims(new Map(), m.divisorDims, -1));
  const expected = formatDims(expectedFactor(m));
  return (
    `\`${reduction}\` ${op} the gradients over \`${group}\` (${formatDims(m.groupDims)} ranks, of which ` +
    `${formatDims(m.replicas)} hold replicas of the mean; \`${m.flag.test}\` chose both the operation and the ` +
    `factor), and they are scaled by \`${factorText}\` (${scaled}) instead of ${expected}. With ` +
    `edp×ep×etp = dp×cp×tp the effective learning rate is ${formatDims(m.factor)}× the configured one: right at ` +
    `the default expert tensor-parallel size (etp = tp), wrong whenever it is set apart.`
  );
}

/** The factor that leaves the mean: 1/replicas for a sum, group/replicas for an average. */
function expectedFactor(m: FlagLinkedMismatch<ScalingTerm>): Dims {
  const inverse = multiplyDims(new Map(), m.replicas, -1);
  return m.averages ? multiplyDims(inverse, m.groupDims) : inverse;
}

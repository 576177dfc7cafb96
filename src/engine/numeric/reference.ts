// The sequential reference: each output element computed on its own with a plain loop that adds the ranks'
// contributions in the algorithm's order, in the same dtype arithmetic. It shares only the shapes (chunks, trees)
// with the step-by-step simulation, so equality bit for bit checks the simulation's message passing.
import type { Algorithm } from '../collective-types';
import { DtypeArithmetic } from './arithmetic';
import {
  NumericOptionError,
  PAT_NOT_ALLREDUCE,
  planReduction,
  type NumericReductionOptions,
  type ReductionPlan,
} from './plan';
import { nodeTree, partOf, rankTree, splitRange, type ElementRange, type RankTree } from './schedule';

/** Sum of the tree below `vertex`: own value, then each child's subtree in order. */
function subtreeSum(arith: DtypeArithmetic, tree: RankTree, vertex: number, own: (vertex: number) => number): number {
  let acc = own(vertex);
  for (const child of tree.down[vertex]) acc = arith.add(acc, subtreeSum(arith, tree, child, own));
  return acc;
}

/** The ring order for one element: start at member c+1, end at member c, where c is the element's chunk. */
function ringSum(arith: DtypeArithmetic, members: number, chunk: number, own: (member: number) => number): number {
  let acc = own((chunk + 1) % members);
  for (let k = 2; k <= members; k++) acc = arith.add(acc, own((chunk + k) % members));
  return acc;
}

/** The switch's sum: accumulate in the wider accumulator in member order, round once to the dtype. */
function switchSum(
  plan: ReductionPlan,
  arith: DtypeArithmetic,
  members: readonly number[],
  own: (rank: number) => number,
): number {
  const accumulator = new DtypeArithmetic(plan.dtype === 'fp8e4m3' || plan.dtype === 'fp8e5m2' ? 'fp16' : 'fp32');
  let acc = accumulator.round(own(members[0]));
  for (let i = 1; i < members.length; i++) acc = accumulator.add(acc, own(members[i]));
  return arith.round(acc);
}

/** Trees are the same for every element; build them once. */
interface Shapes {
  readonly rankTrees: readonly RankTree[];
  readonly nodeTrees: readonly RankTree[];
  readonly allRanks: readonly number[];
}

function elementValue(plan: ReductionPlan, shapes: Shapes, arith: DtypeArithmetic, e: number, rank: number): number {
  const { ranks, gpusPerNode, algorithm } = plan;
  const nodes = ranks / gpusPerNode;
  const own = (r: number) => (plan.scalar === 1 ? plan.inputs[r][e] : arith.mul(plan.inputs[r][e], plan.scalar));
  const all: ElementRange = { start: 0, end: plan.elements };
  const channel = partOf(e, all, plan.channels);
  const range = splitRange(all, plan.channels)[channel];
  const tree = (channel % 2) as 0 | 1;
  switch (algorithm) {
    case 'ring':
      return ringSum(arith, ranks, partOf(e, range, ranks), own);
    case 'tree':
      return subtreeSum(arith, shapes.rankTrees[tree], shapes.rankTrees[tree].root, own);
    case 'collnetdirect':
    case 'collnetchain': {
      // The channel's head (local GPU channel mod g) sums its node: Direct adds the others in local order after
      // it; Chain adds along the chain from its tail back to the head. The network's switches then sum the nodes.
      const head = channel % gpusPerNode;
      const nodeSum = (m: number): number => {
        const at = (k: number) => own(m * gpusPerNode + ((head + k) % gpusPerNode));
        let acc: number;
        if (algorithm === 'collnetdirect') {
          acc = at(0);
          for (let k = 1; k < gpusPerNode; k++) acc = arith.add(acc, at(k));
        } else {
          acc = at(gpusPerNode - 1);
          for (let k = gpusPerNode - 2; k >= 0; k--) acc = arith.add(at(k), acc);
        }
        return acc;
      };
      return switchSum(
        plan,
        arith,
        Array.from({ length: nodes }, (_, m) => m),
        nodeSum,
      );
    }
    case 'nvls':
      return switchSum(plan, arith, shapes.allRanks, own);
    case 'nvlstree': {
      const nodeSum = (m: number) =>
        switchSum(
          plan,
          arith,
          Array.from({ length: gpusPerNode }, (_, l) => m * gpusPerNode + l),
          own,
        );
      const level = shapes.nodeTrees[tree];
      return subtreeSum(arith, level, level.root, nodeSum);
    }
    case 'hierarchical': {
      const slice = partOf(e, range, gpusPerNode);
      const part = partOf(e, splitRange(range, gpusPerNode)[slice], nodes);
      const nodeSum = (m: number) => ringSum(arith, gpusPerNode, slice, (l) => own(m * gpusPerNode + l));
      return ringSum(arith, nodes, part, nodeSum);
    }
    case 'direct': {
      let acc = own(rank);
      for (let k = 1; k < ranks; k++) acc = arith.add(acc, own((rank + k) % ranks));
      return acc;
    }
    case 'pat':
      throw new NumericOptionError(PAT_NOT_ALLREDUCE);
  }
}

/**
 * What `rank` ends up with after an AllReduce with `algorithm`, computed element by element in the algorithm's
 * order of operations. Every algorithm but `direct` gives all ranks the same buffer.
 */
export function sequentialReference(
  algorithm: Algorithm,
  options: Omit<NumericReductionOptions, 'algorithm'>,
  rank = 0,
): Float64Array {
  const plan = planReduction({ ...options, algorithm });
  const arith = new DtypeArithmetic(plan.dtype);
  const nodes = plan.ranks / plan.gpusPerNode;
  const shapes: Shapes = {
    rankTrees: [rankTree(plan.ranks, plan.gpusPerNode, 0), rankTree(plan.ranks, plan.gpusPerNode, 1)],
    nodeTrees: [nodeTree(nodes, 0), nodeTree(nodes, 1)],
    allRanks: Array.from({ length: plan.ranks }, (_, r) => r),
  };
  const out = new Float64Array(plan.elements);
  for (let e = 0; e < plan.elements; e++) out[e] = elementValue(plan, shapes, arith, e, rank);
  return out;
}

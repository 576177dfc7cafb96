// Step-by-step execution of each AllReduce algorithm on real buffers: ranks send partial sums to each other as
// messages and reduce what they receive, in the order the algorithm's kernels do. The sequential reference
// (reference.ts) computes the same values element by element with plain loops; the tests hold them bit for bit equal.
import type { Algorithm } from '../collective-types';
import { DtypeArithmetic } from './arithmetic';
import { childrenFirst, nodeTree, rankTree, splitRange, type ElementRange, type RankTree } from './schedule';
import { NumericOptionError, PAT_NOT_ALLREDUCE, type ReductionPlan } from './plan';

/** Shared state of one run: the arithmetic, the scalar applied to each input, and per-element overflow flags. */
interface Run {
  readonly plan: ReductionPlan;
  readonly arith: DtypeArithmetic;
  readonly overflowAt: Uint8Array;
}

function note(run: Run, e: number): void {
  if (run.arith.overflowed) {
    run.overflowAt[e] = 1;
    run.arith.overflowed = false;
  }
}

/** A rank's own input as it enters the reduction: multiplied by the premul scalar when the op has one. */
function load(run: Run, rank: number, e: number): number {
  const x = run.plan.inputs[rank][e];
  if (run.plan.scalar === 1) return x;
  const value = run.arith.mul(x, run.plan.scalar);
  note(run, e);
  return value;
}

/**
 * Ring reduce-scatter among `members` over `range` (NCCL's runRing): at step 1 member i sends chunk i−1; at each
 * later step it adds its own value to what it received and passes it on, so chunk c starts at member c+1 and ends,
 * complete, at member c. `value(member, e)` gives a member's contribution; the finished chunk c lands in out[c].
 */
function ringReduceScatter(
  run: Run,
  members: number,
  range: ElementRange,
  value: (member: number, e: number) => number,
  out: Float64Array[],
): void {
  const chunks = splitRange(range, members);
  if (members === 1) {
    for (let e = range.start; e < range.end; e++) out[0][e] = value(0, e);
    return;
  }
  let messages: Float64Array[] = [];
  for (let i = 0; i < members; i++) {
    const chunk = chunks[(i + members - 1) % members];
    const message = new Float64Array(chunk.end - chunk.start);
    for (let e = chunk.start; e < chunk.end; e++) message[e - chunk.start] = value(i, e);
    messages.push(message);
  }
  for (let step = 2; step <= members; step++) {
    const next: Float64Array[] = [];
    for (let i = 0; i < members; i++) {
      const received = messages[(i + members - 1) % members];
      const chunk = chunks[(i + members - step) % members];
      const target =
        step < members ? new Float64Array(chunk.end - chunk.start) : out[i].subarray(chunk.start, chunk.end);
      for (let e = chunk.start; e < chunk.end; e++) {
        target[e - chunk.start] = run.arith.add(value(i, e), received[e - chunk.start]);
        note(run, e);
      }
      next.push(target);
    }
    messages = next;
  }
}

/** Ring all-gather: member i owns chunk i and forwards what it holds, so after members−1 steps all hold every chunk. */
function ringAllGather(members: number, range: ElementRange, buffers: Float64Array[]): void {
  const chunks = splitRange(range, members);
  for (let step = 0; step < members - 1; step++) {
    for (let i = 0; i < members; i++) {
      const chunk = chunks[(i - step + members) % members];
      buffers[(i + 1) % members].set(buffers[i].subarray(chunk.start, chunk.end), chunk.start);
    }
  }
}

/** Reduce up a tree (each rank: own + children in order), then broadcast the root's result back down. */
function treeAllReduce(
  run: Run,
  tree: RankTree,
  range: ElementRange,
  value: (vertex: number, e: number) => number,
  out: Float64Array[],
): void {
  const sent = new Map<number, Float64Array>();
  for (const vertex of childrenFirst(tree)) {
    const partial = new Float64Array(range.end - range.start);
    for (let e = range.start; e < range.end; e++) {
      let acc = value(vertex, e);
      for (const child of tree.down[vertex]) {
        acc = run.arith.add(acc, sent.get(child)![e - range.start]);
        note(run, e);
      }
      partial[e - range.start] = acc;
    }
    sent.set(vertex, partial);
  }
  const order = childrenFirst(tree).reverse();
  out[tree.root].set(sent.get(tree.root)!, range.start);
  for (const vertex of order)
    for (const child of tree.down[vertex]) out[child].set(out[vertex].subarray(range.start, range.end), range.start);
}

/**
 * The NVSwitch's in-switch reduction (multimem.ld_reduce): it reads every GPU's value and accumulates in the
 * order of `members`, in float32 for fp32/fp16/bf16 (NCCL's ld_reduce uses .acc::f32 for half types) and in half
 * for fp8 (.acc::f16), then rounds once to the buffer's dtype. The order inside the switch is not documented;
 * rank order is assumed. NCCL itself runs NVLS only for sum on fp32/fp16/bf16 (ncclNvlsSupported); for avg and
 * premulsum this models each GPU pre-multiplying its input before the switch sums, which is what NVLS would compute.
 */
export function switchReduce(run: Run, accumulator: DtypeArithmetic, members: readonly number[], e: number): number {
  let acc = accumulator.round(load(run, members[0], e));
  for (let i = 1; i < members.length; i++) acc = accumulator.add(acc, load(run, members[i], e));
  if (accumulator.overflowed) {
    run.overflowAt[e] = 1;
    accumulator.overflowed = false;
  }
  const result = run.arith.round(acc);
  note(run, e);
  return result;
}

export function accumulatorFor(run: { plan: ReductionPlan }): DtypeArithmetic {
  const dtype = run.plan.dtype;
  return new DtypeArithmetic(dtype === 'fp8e4m3' || dtype === 'fp8e5m2' ? 'fp16' : 'fp32');
}

/** Runs the plan's algorithm; returns each rank's output buffer and the per-element overflow flags. */
export function simulateReduction(plan: ReductionPlan): { outputs: Float64Array[]; overflowAt: Uint8Array } {
  const run: Run = { plan, arith: new DtypeArithmetic(plan.dtype), overflowAt: new Uint8Array(plan.elements) };
  const { ranks, gpusPerNode } = plan;
  const nodes = ranks / gpusPerNode;
  const outputs = Array.from({ length: ranks }, () => new Float64Array(plan.elements));
  const ownInput = (rank: number, e: number) => load(run, rank, e);
  splitRange({ start: 0, end: plan.elements }, plan.channels).forEach((range, channel) => {
    runAlgorithm(plan.algorithm, run, range, channel, outputs, ownInput, ranks, gpusPerNode, nodes);
  });
  return { outputs, overflowAt: run.overflowAt };
}

/**
 * CollNet: the channel's head (local GPU channel mod g) collects its node's sum, as messages: Direct receives every
 * other GPU's value and adds them in local order after its own; Chain passes a partial from the chain's tail to the
 * head, each GPU adding its own value. The network's switches (SHARP) then sum the nodes' partials in a wider
 * accumulator, rounding once, as the NVSwitch does (assumed: SHARP's accumulation width is not published), and
 * every GPU receives the result.
 */
function runCollNet(
  run: Run,
  range: ElementRange,
  channel: number,
  outputs: Float64Array[],
  ownInput: (rank: number, e: number) => number,
): void {
  const { ranks, gpusPerNode: g, algorithm } = run.plan;
  const nodes = ranks / g;
  const head = channel % g;
  const accumulator = accumulatorFor(run);
  const partials = Array.from({ length: nodes }, () => new Float64Array(range.end - range.start));
  for (let m = 0; m < nodes; m++) {
    const rankAt = (k: number) => m * g + ((head + k) % g);
    const partial = partials[m];
    for (let e = range.start; e < range.end; e++) {
      let acc: number;
      if (algorithm === 'collnetdirect') {
        acc = ownInput(rankAt(0), e);
        for (let k = 1; k < g; k++) {
          acc = run.arith.add(acc, ownInput(rankAt(k), e));
          note(run, e);
        }
      } else {
        acc = ownInput(rankAt(g - 1), e);
        for (let k = g - 2; k >= 0; k--) {
          acc = run.arith.add(ownInput(rankAt(k), e), acc);
          note(run, e);
        }
      }
      partial[e - range.start] = acc;
    }
  }
  for (let e = range.start; e < range.end; e++) {
    let acc = accumulator.round(partials[0][e - range.start]);
    for (let m = 1; m < nodes; m++) acc = accumulator.add(acc, partials[m][e - range.start]);
    if (accumulator.overflowed) {
      run.overflowAt[e] = 1;
      accumulator.overflowed = false;
    }
    const result = run.arith.round(acc);
    note(run, e);
    for (let r = 0; r < ranks; r++) outputs[r][e] = result;
  }
}

function runAlgorithm(
  algorithm: Algorithm,
  run: Run,
  range: ElementRange,
  channel: number,
  outputs: Float64Array[],
  ownInput: (rank: number, e: number) => number,
  ranks: number,
  gpusPerNode: number,
  nodes: number,
): void {
  const tree = (channel % 2) as 0 | 1;
  switch (algorithm) {
    case 'collnetdirect':
    case 'collnetchain':
      runCollNet(run, range, channel, outputs, ownInput);
      return;
    case 'ring':
      ringReduceScatter(run, ranks, range, ownInput, outputs);
      ringAllGather(ranks, range, outputs);
      return;
    case 'tree':
      treeAllReduce(run, rankTree(ranks, gpusPerNode, tree), range, ownInput, outputs);
      return;
    case 'nvls': {
      // Each GPU reduces its 1/N slice through the switch and multicasts the result to every GPU.
      const accumulator = accumulatorFor(run);
      const all = Array.from({ length: ranks }, (_, r) => r);
      splitRange(range, ranks).forEach((slice, owner) => {
        for (let e = slice.start; e < slice.end; e++) outputs[owner][e] = switchReduce(run, accumulator, all, e);
        for (let r = 0; r < ranks; r++)
          if (r !== owner) outputs[r].set(outputs[owner].subarray(slice.start, slice.end), slice.start);
      });
      return;
    }
    case 'nvlstree': {
      // Each node's switch reduces its GPUs; the node results then go up the inter-node tree and back.
      const accumulator = accumulatorFor(run);
      const nodeSums = Array.from({ length: nodes }, () => new Float64Array(run.plan.elements));
      for (let m = 0; m < nodes; m++) {
        const members = Array.from({ length: gpusPerNode }, (_, l) => m * gpusPerNode + l);
        for (let e = range.start; e < range.end; e++) nodeSums[m][e] = switchReduce(run, accumulator, members, e);
      }
      const nodeResults = Array.from({ length: nodes }, () => new Float64Array(run.plan.elements));
      treeAllReduce(run, nodeTree(nodes, tree), range, (m, e) => nodeSums[m][e], nodeResults);
      for (let r = 0; r < ranks; r++)
        outputs[r].set(nodeResults[Math.floor(r / gpusPerNode)].subarray(range.start, range.end), range.start);
      return;
    }
    case 'hierarchical': {
      // Intra-node ring reduce-scatter, an inter-node ring all-reduce of each slice, then intra-node all-gather.
      const slices = splitRange(range, gpusPerNode);
      for (let m = 0; m < nodes; m++) {
        const nodeBuffers = outputs.slice(m * gpusPerNode, (m + 1) * gpusPerNode);
        ringReduceScatter(run, gpusPerNode, range, (l, e) => ownInput(m * gpusPerNode + l, e), nodeBuffers);
      }
      slices.forEach((slice, l) => {
        // Reading and writing the same buffers is safe: a member overwrites an element of its own chunk only at the
        // last step, right after reading its own partial for that same element.
        const peers = Array.from({ length: nodes }, (_, m) => outputs[m * gpusPerNode + l]);
        ringReduceScatter(run, nodes, slice, (m, e) => peers[m][e], peers);
        ringAllGather(nodes, slice, peers);
      });
      for (let m = 0; m < nodes; m++)
        ringAllGather(gpusPerNode, range, outputs.slice(m * gpusPerNode, (m + 1) * gpusPerNode));
      return;
    }
    case 'direct':
      // One-shot: every rank reads all peers' inputs and sums them itself, starting with its own.
      for (let r = 0; r < ranks; r++) {
        for (let e = range.start; e < range.end; e++) {
          let acc = ownInput(r, e);
          for (let k = 1; k < ranks; k++) {
            acc = run.arith.add(acc, ownInput((r + k) % ranks, e));
            note(run, e);
          }
          outputs[r][e] = acc;
        }
      }
      return;
    case 'pat':
      throw new NumericOptionError(PAT_NOT_ALLREDUCE);
  }
}

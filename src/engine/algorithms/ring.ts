// Ring: every rank sends to its successor. AllReduce is n−1 reduce-scatter steps (exchange + reduce) followed by
// n−1 all-gather steps (broadcast); each step moves S/n per rank, split over the channels.
import type { Round, Schedule } from '../sim/schedule';
import type { Flow } from '../sim/schedule';
import { channelClasses, meanStepLatencyUs, transfer, type BuildContext } from './context';
import { ringStepPayloadBytes } from './ring-chunks';
import { editedRing, editedRingRound } from './ring-edited';
import { foldedRingRound } from './ring-folded';
import { setupUs } from './setup';

/**
 * Ring orders, one per channel class. Across nodes each class enters every node at a different GPU and crosses the
 * network on a different NIC, so NCCL spreads its channels over every NIC: with more NICs than GPUs there are as
 * many classes as NICs, and classes entering at the same GPU use its different NICs (see ringRail).
 */
export function ringOrders(ctx: BuildContext): number[][] {
  const { system } = ctx;
  const g = system.gpusPerNode;
  if (system.nodes === 1) return system.fabric.ringOrders.map((order) => [...order]);
  const classes = Math.min(Math.max(g, system.fabric.nicsPerNode), ctx.channels);
  const orders: number[][] = [];
  for (let c = 0; c < classes; c++) {
    const order: number[] = [];
    for (let node = 0; node < system.nodes; node++) for (let j = 0; j < g; j++) order.push(node * g + ((c + j) % g));
    orders.push(order);
  }
  return orders;
}

/**
 * Which of its GPU's NICs a ring class crosses the network on: classes that enter a node at the same GPU take its
 * NICs in turn, so every NIC carries a class when there are more NICs than GPUs.
 */
export function ringNicSlot(ctx: BuildContext, c: number): number {
  return Math.floor(c / ctx.system.gpusPerNode);
}

function ringRound(
  ctx: BuildContext,
  orders: number[][],
  payload: number,
  reduce: boolean,
  step: number,
  repeat: number,
): Round {
  const weights = channelClasses(ctx.channels, orders.length);
  const flows: Flow[] = [];
  let latencyUs = 0;
  const phase = reduce ? 'exchange' : 'broadcast';
  for (let c = 0; c < weights.length; c++) {
    const order = orders[c];
    const paths: (readonly number[])[] = [];
    const slot = ringNicSlot(ctx, c);
    for (let i = 0; i < order.length; i++) {
      const from = order[i];
      const to = order[(i + 1) % order.length];
      const path = ctx.system.fabric.route(from, to, slot);
      const flow = transfer(ctx, from, to, payload, {
        weight: weights[c],
        channel: c,
        channelStride: weights.length,
        chunk: 0,
        phase,
        reduce,
        path,
      });
      flows.push(flow);
      paths.push(path);
    }
    latencyUs = Math.max(latencyUs, meanStepLatencyUs(ctx, paths));
  }
  return { flows, latencyUs, repeat, phase, step };
}

export function buildRing(ctx: BuildContext): Schedule {
  const n = ctx.system.ranks;
  // What one channel moves per step on the critical chunk's way round: the release's chunking (ring-chunks.ts).
  const payload = ringStepPayloadBytes(ctx);
  // On the fast path identical nodes fold onto node 0 (ring-folded.ts), and an edited system runs what its edit
  // touches (ring-edited.ts); otherwise every rank's flow is built.
  let orders: number[][] | undefined;
  const everyRank = (reduce: boolean, step: number): Round =>
    ringRound(ctx, (orders ??= ringOrders(ctx)), payload, reduce, step, n - 1);
  const edited = ctx.reduceEdits ? editedRing(ctx) : undefined;
  const round = (reduce: boolean, step: number): Round =>
    foldedRingRound(ctx, payload, reduce, step, n - 1) ??
    (edited && editedRingRound(ctx, edited, payload, reduce, step, n - 1, () => everyRank(reduce, step).flows)) ??
    everyRank(reduce, step);
  const rounds: Round[] = [];
  if (n > 1) {
    if (ctx.kind !== 'allgather') rounds.push(round(true, 0));
    if (ctx.kind !== 'reducescatter') rounds.push(round(false, ctx.kind === 'allgather' ? 0 : n - 1));
  }
  return { rounds, setupUs: setupUs(ctx), channels: ctx.channels };
}

// Ring: every rank sends to its successor. AllReduce is n−1 reduce-scatter steps (exchange + reduce) followed by
// n−1 all-gather steps (broadcast); each step moves S/n per rank, split over the channels.
import type { Round, Schedule } from '../sim/schedule';
import type { Flow } from '../sim/schedule';
import { channelClasses, meanStepLatencyUs, transfer, type BuildContext } from './context';
import { setupUs } from './setup';

/** Ring orders, one per channel class. Across nodes each class enters every node at a different GPU, so each
 * class crosses the network on a different NIC. */
export function ringOrders(ctx: BuildContext): number[][] {
  const { system } = ctx;
  const g = system.gpusPerNode;
  if (system.nodes === 1) return system.fabric.ringOrders.map((order) => [...order]);
  const classes = Math.min(g, ctx.channels);
  const orders: number[][] = [];
  for (let c = 0; c < classes; c++) {
    const order: number[] = [];
    for (let node = 0; node < system.nodes; node++) for (let j = 0; j < g; j++) order.push(node * g + ((c + j) % g));
    orders.push(order);
  }
  return orders;
}

function ringRound(ctx: BuildContext, orders: number[][], payload: number, reduce: boolean, step: number, repeat: number): Round {
  const weights = channelClasses(ctx.channels, orders.length);
  const flows: Flow[] = [];
  let latencyUs = 0;
  const phase = reduce ? 'exchange' : 'broadcast';
  for (let c = 0; c < weights.length; c++) {
    const order = orders[c];
    const paths: (readonly number[])[] = [];
    for (let i = 0; i < order.length; i++) {
      const from = order[i];
      const to = order[(i + 1) % order.length];
      const flow = transfer(ctx, from, to, payload, { weight: weights[c], channel: c, channelStride: weights.length, chunk: 0, phase, reduce });
      flows.push(flow);
      paths.push(ctx.system.fabric.route(from, to));
    }
    latencyUs = Math.max(latencyUs, meanStepLatencyUs(ctx, paths));
  }
  return { flows, latencyUs, repeat, phase, step };
}

export function buildRing(ctx: BuildContext): Schedule {
  const n = ctx.system.ranks;
  const orders = ringOrders(ctx);
  const payload = ctx.bytes / n / ctx.channels;
  const rounds: Round[] = [];
  if (n > 1) {
    if (ctx.kind !== 'allgather') rounds.push(ringRound(ctx, orders, payload, true, 0, n - 1));
    if (ctx.kind !== 'reducescatter') rounds.push(ringRound(ctx, orders, payload, false, ctx.kind === 'allgather' ? 0 : n - 1, n - 1));
  }
  return { rounds, setupUs: setupUs(ctx), channels: ctx.channels };
}

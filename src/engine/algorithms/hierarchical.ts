// Hierarchical: reduce-scatter inside each node, an AllReduce of each GPU's shard across nodes (one ring per
// local GPU, i.e. per rail), then all-gather inside each node. The network carries S/g per GPU instead of S.
import type { Flow, Round, Schedule } from '../sim/schedule';
import { meanStepLatencyUs, symmetricRails, transfer, type BuildContext } from './context';
import { setupUs } from './setup';

function ringStep(
  ctx: BuildContext,
  pairs: [number, number][],
  payload: number,
  reduce: boolean,
  step: number,
  repeat: number,
): Round {
  const flows: Flow[] = [];
  const paths: (readonly number[])[] = [];
  for (const [from, to] of pairs) {
    flows.push(
      transfer(ctx, from, to, payload, {
        weight: ctx.channels,
        channel: 0,
        channelStride: 1,
        chunk: 0,
        phase: reduce ? 'exchange' : 'broadcast',
        reduce,
      }),
    );
    if (paths.length < 64) paths.push(ctx.system.fabric.route(from, to));
  }
  return { flows, latencyUs: meanStepLatencyUs(ctx, paths), repeat, phase: reduce ? 'exchange' : 'broadcast', step };
}

export function buildHierarchical(ctx: BuildContext): Schedule {
  const { nodes, gpusPerNode: g } = ctx.system;
  const intra: [number, number][] = [];
  const inter: [number, number][] = [];
  // Nodes' reduce-scatters never meet, nor do the rails' rings when each GPU has its own NIC: one of each suffices.
  const symmetric = symmetricRails(ctx) || (ctx.representative === true && nodes === 1);
  for (let node = 0; node < nodes; node++) {
    for (let local = 0; local < g; local++) {
      const rank = node * g + local;
      if (!symmetric || node === 0) intra.push([rank, node * g + ((local + 1) % g)]);
      if (!symmetric || local === 0) inter.push([rank, ((node + 1) % nodes) * g + local]);
    }
  }
  const C = ctx.channels;
  const rounds: Round[] = [];
  let step = 0;
  const shard = ctx.bytes / g;
  const doReduce = ctx.kind !== 'allgather';
  const doGather = ctx.kind !== 'reducescatter';
  if (g > 1 && doReduce) {
    rounds.push(ringStep(ctx, intra, shard / C, true, step, g - 1));
    step += g - 1;
  }
  if (nodes > 1) {
    const piece = shard / nodes / C;
    if (doReduce) {
      rounds.push(ringStep(ctx, inter, piece, true, step, nodes - 1));
      step += nodes - 1;
    }
    if (doGather) {
      rounds.push(ringStep(ctx, inter, piece, false, step, nodes - 1));
      step += nodes - 1;
    }
  }
  if (g > 1 && doGather) rounds.push(ringStep(ctx, intra, shard / C, false, step, g - 1));
  return { rounds, setupUs: setupUs(ctx), channels: C };
}

// PAT (NCCL 2.23+, "parallel aggregated trees"): reduce-scatter and all-gather with one GPU per node in log2(n)
// rounds instead of the ring's n − 1. All-gather: every rank's block travels a binomial tree and the trees of all
// roots are aggregated, so in each round every rank sends what it has gathered so far to the rank at that round's
// distance (Bruck's counts: min(2^k, n − 2^k) blocks in round k, n − 1 in all, as much as a ring sends).
// Reduce-scatter runs the same rounds backwards, each receiver reducing what it gets.
import { NCCL_MODEL } from '../constants';
import type { Flow, Round, Schedule } from '../sim/schedule';
import type { Phase } from '../trace/model';
import { channelClasses, stepLatencyUs, transfer, type BuildContext } from './context';
import { editedPat, editedPatRound } from './pat-edited';
import { setupUs } from './setup';

/** Blocks (of bytes / n) each rank sends in each all-gather round, first round first. */
export function patRoundBlocks(ranks: number): number[] {
  const blocks: number[] = [];
  for (let distance = 1; distance < ranks; distance *= 2) blocks.push(Math.min(distance, ranks - distance));
  return blocks;
}

/** Distance to the peer in all-gather round k of `rounds`: far first, halving (a binomial tree from its root). */
export function patRoundDistance(ranks: number, round: number, rounds: number): number {
  return Math.min(ranks - 1, 2 ** (rounds - 1 - round));
}

export function buildPat(ctx: BuildContext): Schedule {
  const n = ctx.system.ranks;
  const blocks = patRoundBlocks(n);
  const rounds: Round[] = [];
  // Channels spread over the node's NICs, as the ring's classes do.
  const weights = channelClasses(ctx.channels, Math.max(1, ctx.system.fabric.nicsPerNode));
  const gather = ctx.kind === 'allgather';
  const order = gather ? blocks.map((_, k) => k) : blocks.map((_, k) => blocks.length - 1 - k);
  const phase: Phase = gather ? 'broadcast' : 'exchange';
  // On an edited system, the groups the edit touches and a stand-in (pat-edited.ts), where that can be shown exact.
  const reach = editedPat(ctx, weights);
  order.forEach((k, step) => {
    const distance = patRoundDistance(n, k, blocks.length);
    const payload = (blocks[k] * ctx.bytes) / n / ctx.channels;
    const peerOf = (r: number): number => (gather ? (r + distance) % n : (r - distance + n) % n);
    const every = (): Flow[] => {
      const flows: Flow[] = [];
      for (let c = 0; c < weights.length; c++) {
        for (let r = 0; r < n; r++) {
          const peer = peerOf(r);
          flows.push(
            transfer(ctx, r, peer, payload, {
              weight: weights[c],
              channel: c,
              channelStride: weights.length,
              chunk: 0,
              phase,
              reduce: !gather,
              path: ctx.system.fabric.route(r, peer, c),
            }),
          );
        }
      }
      return flows;
    };
    // NCCL's model charges each of PAT's log2(N) rounds a 3.5th of the network's step latency ("log latency",
    // tuning.cc): the aggregated trees keep several rounds' steps in flight at once, so a round does not wait out
    // a whole network step the way a ring's barrier-per-step does. The simulator charges what NCCL measured. The
    // step is priced by the first flow's path (rank 0, class 0).
    const latencyUs = stepLatencyUs(ctx, [ctx.system.fabric.route(0, peerOf(0), 0)]) / NCCL_MODEL.patLogLatencyDivisor;
    if (reach) {
      rounds.push(editedPatRound(ctx, reach, weights, { distance, gather, payload, latencyUs, step }, every));
      return;
    }
    rounds.push({ flows: every(), latencyUs, repeat: 1, phase, step });
  });
  return { rounds, setupUs: setupUs(ctx), channels: ctx.channels };
}

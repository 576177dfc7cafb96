// The one-off device-side cost of a collective before its first step: NCCL's base latency for the algorithm and
// protocol. The host's launch cost overlaps back-to-back collectives and is applied in simulate.ts.
import { NCCL_MODEL } from '../constants';
import type { BuildContext } from './context';
import { baseLatencyUs, tunedRow } from '../nccl-versions';

export function setupUs(ctx: BuildContext): number {
  if (ctx.system.fabric.idealised) return 0;
  const base = baseLatencyUs(ctx.system.tuner, tunedRow(ctx.algorithm), ctx.protocol);
  // NCCL's model charges PAT "still a linear part" per rank on top of its log2(n) rounds (tuning.cc): its kernel
  // walks every rank's block, however the rounds aggregate them.
  return ctx.algorithm === 'pat' ? base + NCCL_MODEL.patLinearUsPerRank * ctx.system.ranks : base;
}

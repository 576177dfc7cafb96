// The one-off device-side cost of a collective before its first step: NCCL's base latency for the algorithm and
// protocol. The host's launch cost overlaps back-to-back collectives and is applied in simulate.ts.
import type { BuildContext } from './context';
import { baseLatencyUs, tunedRow } from '../nccl-versions';

export function setupUs(ctx: BuildContext): number {
  if (ctx.system.fabric.idealised) return 0;
  return baseLatencyUs(ctx.system.tuner, tunedRow(ctx.algorithm), ctx.protocol);
}

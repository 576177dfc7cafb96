// The one-off cost of a collective before its first step: the kernel launch and the protocol's base latency.
import * as K from '../constants';
import type { BuildContext } from './context';

export function setupUs(ctx: BuildContext): number {
  if (ctx.system.fabric.idealised) return ctx.system.launchUs;
  return ctx.system.launchUs + K.BASE_LATENCY_US[ctx.protocol] * K.STEP_LATENCY_SCALE;
}

// One-shot (direct): every rank sends its data straight to every other rank in one step and each reduces what it
// receives. One step of latency, (n−1)·S per GPU link: the choice for small messages on a switch.
import type { Flow, Schedule } from '../sim/schedule';
import { stepLatencyUs, transfer, type BuildContext } from './context';
import { setupUs } from './setup';

export function buildDirect(ctx: BuildContext): Schedule {
  const n = ctx.system.ranks;
  const flows: Flow[] = [];
  const paths: (readonly number[])[] = [];
  const payload = (ctx.kind === 'allreduce' ? ctx.bytes : ctx.bytes / n) / ctx.channels;
  const reduce = ctx.kind !== 'allgather';
  for (let from = 0; from < n; from++) {
    for (let to = 0; to < n; to++) {
      if (to === from) continue;
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
      if (from === 0) paths.push(ctx.system.fabric.route(from, to));
    }
  }
  const rounds =
    n > 1 ? [{ flows, latencyUs: stepLatencyUs(ctx, paths), repeat: 1, phase: flows[0].phase, step: 0 }] : [];
  return { rounds, setupUs: setupUs(ctx), channels: ctx.channels };
}

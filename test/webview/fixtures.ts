// Traces for the browser tests: a hand-built ring AllReduce over 2 nodes × 2 GPUs whose phase layout is known
// exactly, so pixel checks can say which colour belongs where.
import { TraceBuilder, type Phase, type Trace, asBytes, asMicros } from '../../src/engine/index';

export const STEP_US = 30;
export const COMPUTE_US = asMicros(50);

/** Where each phase sits on every rank lane, µs from the origin: compute, then 3 reduce-scatter and 3 all-gather steps. */
export function expectedPhaseAt(timeUs: number): Phase | undefined {
  if (timeUs < COMPUTE_US) return 'compute';
  const step = Math.floor((timeUs - COMPUTE_US) / STEP_US);
  const within = (timeUs - COMPUTE_US) % STEP_US;
  if (step < 3) return within < 20 ? 'exchange' : 'reduce';
  if (step < 6) return within < 20 ? 'broadcast' : undefined;
  return undefined;
}

export function handBuiltTrace(
  name: (rank: number, step: number) => string = (r, s) => `ring step ${s} · rank ${r}`,
): Trace {
  const builder = new TraceBuilder({
    origin: 'simulated',
    title: 'hand-built ring AllReduce',
    system: '2 × 2 test GPUs',
    ranks: 4,
  });
  const rankLanes = [0, 1, 2, 3].map((rank) =>
    builder.lane('rank', `node ${rank >> 1} · rank ${rank}`, { node: rank >> 1, rank }),
  );
  const linkLanes = [0, 1, 2, 3].map((rank) =>
    builder.lane('link', `gpu${rank}->gpu${(rank + 1) % 4}`, { node: rank >> 1 }),
  );
  const bytes = asBytes(8 * 1024 * 1024);
  for (let rank = 0; rank < 4; rank++) {
    const link = `gpu${rank}->gpu${(rank + 1) % 4}`;
    builder.add({
      lane: rankLanes[rank],
      rank,
      phase: 'compute',
      name: 'backward',
      step: -1,
      channel: 0,
      chunk: -1,
      bytes: asBytes(0),
      links: [],
      startUs: asMicros(0),
      endUs: COMPUTE_US,
      source: { file: '/work/train.py', line: 10 + rank },
    });
    for (let step = 0; step < 6; step++) {
      const t = asMicros(COMPUTE_US + step * STEP_US);
      const phase: Phase = step < 3 ? 'exchange' : 'broadcast';
      const common = { rank, step, channel: 0, chunk: (rank - step + 8) % 4, bytes, links: [link] };
      builder.add({
        ...common,
        lane: rankLanes[rank],
        phase,
        name: name(rank, step),
        startUs: t,
        endUs: asMicros(t + 20),
        args: { peer: (rank + 1) % 4 },
      });
      builder.add({
        ...common,
        lane: linkLanes[rank],
        phase,
        name: `${link} step ${step}`,
        startUs: t,
        endUs: asMicros(t + 20),
      });
      if (step < 3)
        builder.add({
          ...common,
          lane: rankLanes[rank],
          phase: 'reduce',
          name: `reduce step ${step}`,
          links: [],
          startUs: asMicros(t + 20),
          endUs: asMicros(t + 30),
        });
    }
  }
  return builder.build();
}

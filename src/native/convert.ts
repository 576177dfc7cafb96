// Turns a native run into the engine's Trace (one lane per rank and algorithm, spans per ring/tree step and
// phase) and into Measurements (fused all_reduce, reduce_scatter + all_gather, and the step-by-step algorithms).
import { TraceBuilder, type Trace, asBytes, asGBps, asMicros } from '../engine/index';
import type { Measurement, MeasurementRow } from './import/model';
import type { HarnessRun } from './harness-protocol';

export function nativeTrace(run: HarnessRun, title = 'native run'): Trace {
  const world = run.env.worldSize ?? 1;
  const builder = new TraceBuilder({
    origin: 'native',
    title,
    ranks: world,
    facts: {
      backend: run.env.backend,
      torch: run.env.torch,
      ...(run.env.ncclVersion ? { nccl: run.env.ncclVersion } : {}),
    },
  });
  // A loop, not Math.min(...spread), which overflows the stack for runs of a few hundred thousand spans.
  let origin = Infinity;
  for (const s of run.spans) origin = Math.min(origin, s.startUs);
  const sorted = [...run.spans].sort(
    (a, b) => a.rank - b.rank || a.algorithm.localeCompare(b.algorithm) || a.startUs - b.startUs,
  );
  for (const span of sorted) {
    const lane = builder.lane('rank', `rank ${span.rank} · ${span.algorithm}`, { rank: span.rank });
    const start = asMicros(span.startUs - origin);
    // Times far apart (an edited file with a span at 1e308 µs) overflow when made relative; such a span cannot be drawn.
    if (!Number.isFinite(start) || !Number.isFinite(span.endUs - origin)) continue;
    builder.add({
      lane,
      rank: span.rank,
      phase: span.phase,
      name: `${span.algorithm} ${span.phase} step ${span.step}`,
      step: span.step,
      channel: 0,
      chunk: 0,
      bytes: asBytes(span.bytes),
      links: span.phase === 'reduce' ? [] : [`rank${span.rank}->rank${span.sendTo}`],
      startUs: start,
      endUs: asMicros(Math.max(start, span.endUs - origin)),
      args: {
        algorithm: span.algorithm,
        messageBytes: span.messageBytes,
        peer: span.phase === 'reduce' ? span.rank : span.recvFrom,
      },
    });
  }
  return builder.build();
}

/** One measurement per method; the fused all_reduce first, as the number people compare with nccl-tests. */
export function nativeMeasurements(run: HarnessRun): Measurement[] {
  const ranks = run.env.worldSize ?? 1;
  const methods = [...new Set(run.results.map((r) => r.kind))];
  return methods.map((method) => {
    const of = run.results.filter((r) => r.kind === method);
    const rows: MeasurementRow[] = of
      .filter((r) => r.timeUs !== undefined)
      .map((r) => ({
        bytes: asBytes(r.bytes),
        timeUs: asMicros(r.timeUs!),
        algbwGBps: asGBps(r.algbwGBps ?? 0),
        busbwGBps: asGBps(r.busbwGBps ?? 0),
      }));
    const unsupported = of.find((r) => r.unsupported)?.unsupported;
    return {
      kind: 'native' as const,
      collective: 'allreduce' as const,
      ranks,
      rows,
      meta: {
        method,
        backend: run.env.backend,
        torch: run.env.torch,
        verified: of.every(
          (r) => r.unsupported !== undefined || ((r.verified?.sum ?? false) && (r.verified?.avg ?? true)),
        ),
        ...(unsupported ? { unsupported } : {}),
      },
    };
  });
}

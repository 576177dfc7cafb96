// The simulated spans of a traced run as the mirror plan (mirror-plan.ts) and the per-node summary (summary.ts) read
// them: which rank each span is on, the rank it exchanges with, and what the summary compares of it. A full trace
// answers from its Span objects; a run recorded for a summary (sim/recorded-spans.ts) answers from its flows and
// makes Span objects only for the ranks the summary draws, so its cost follows what it draws rather than the system.
import type { Span, Trace } from './model';

/** Called for each simulated span in trace order; `key` is given when asked for (see spanKey). */
export type SimulatedSpanVisitor = (rank: number, peer: number | undefined, key: string | undefined) => void;

export interface SimulatedSpanIndex {
  /** How many spans the run simulated. */
  readonly count: number;
  /** The last instant any of them draws, µs (0 when none). */
  readonly endUs: number;
  /** Visits every simulated span in trace order, with its key when `keys` is set. */
  forEach(visit: SimulatedSpanVisitor, keys: boolean): void;
}

/** A traced run's spans held compactly: the index, and the trace of chosen ranks drawn as the full trace has them. */
export interface RecordedSpans extends SimulatedSpanIndex {
  /**
   * The trace holding the lanes and simulated spans of `ranks` only: each rank's spans are, in order and in every
   * field, those of the full trace; lane ids differ (only these ranks have lanes).
   */
  traceOf(ranks: ReadonlySet<number>): Trace;
}

/**
 * What the summary must reproduce of a span for every node a group stands for: its lane's kind (a rank lane or a
 * stream), phase, step, channel, chunk, bytes, start and end.
 */
export function spanKey(
  rankLane: boolean,
  phase: string,
  step: number,
  channel: number,
  chunk: number,
  bytes: number,
  startUs: number,
  endUs: number,
): string {
  return `${rankLane ? 'r' : 's'},${phase},${step},${channel},${chunk},${bytes},${startUs},${endUs}`;
}

/** The rank a span exchanges with: its `peer`, or the rank a reduce stream's "reduce from rank N" names. */
export function peerOf(span: Span): number | undefined {
  if (typeof span.args?.peer === 'number') return span.args.peer;
  const from = /\bfrom rank (\d+)/.exec(span.name ?? '');
  return from ? Number(from[1]) : undefined;
}

/** The index of a trace's Span objects. */
export function traceIndex(trace: Trace): SimulatedSpanIndex {
  let endUs = 0;
  for (const span of trace.spans) endUs = Math.max(endUs, span.endUs);
  return {
    count: trace.spans.length,
    endUs,
    forEach(visit, keys) {
      const rankLaneIds = keys ? new Set(trace.lanes.filter((l) => l.kind === 'rank').map((l) => l.id)) : undefined;
      for (const s of trace.spans) {
        const key = rankLaneIds
          ? spanKey(rankLaneIds.has(s.lane), s.phase, s.step, s.channel, s.chunk, s.bytes, s.startUs, s.endUs)
          : undefined;
        visit(s.rank, peerOf(s), key);
      }
    },
  };
}

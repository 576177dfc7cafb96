// The simulated spans of a traced run as the mirror plan (mirror-plan.ts) and the per-node summary (summary.ts) read
// them: which rank each span is on, the rank it exchanges with, and what the summary compares of it. A full trace
// answers from its Span objects; a run recorded for a summary (sim/recorded-spans.ts) answers from its flows and
// makes Span objects only for the ranks the summary draws, so its cost follows what it draws rather than the system.
import type { Span, Trace } from './model';

/** Called for each simulated span in trace order; `key` is its number in `keys` when given, else -1. */
export type SimulatedSpanVisitor = (rank: number, peer: number | undefined, key: number) => void;

export interface SimulatedSpanIndex {
  /** How many spans the run simulated. */
  readonly count: number;
  /** The last instant any of them draws, µs (0 when none). */
  readonly endUs: number;
  /** Visits every simulated span in trace order, with its key in `keys` when given. */
  forEach(visit: SimulatedSpanVisitor, keys?: SpanKeys): void;
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
 * Numbers for what the summary must reproduce of a span for every node a group stands for: its lane's kind (a rank
 * lane or a stream), phase, step, channel, chunk, bytes, start and end. Equal fields, equal numbers; a key is
 * hashed from the fields' bits and told apart from others of its hash field by field, so no string is made per span.
 */
export class SpanKeys {
  private readonly bits = new Float64Array(1);
  private readonly words = new Uint32Array(this.bits.buffer);
  private readonly byHash = new Map<number, number[]>();
  private readonly keys: Float64Array[] = [];
  /** This span's fields; copied only when they make a new key. */
  private readonly fields = new Float64Array(8);
  private readonly phases = new Map<string, number>();

  id(
    rankLane: boolean,
    phase: string,
    step: number,
    channel: number,
    chunk: number,
    bytes: number,
    startUs: number,
    endUs: number,
  ): number {
    let phaseId = this.phases.get(phase);
    if (phaseId === undefined) this.phases.set(phase, (phaseId = this.phases.size));
    const fields = this.fields;
    fields[0] = rankLane ? 1 : 0;
    fields[1] = phaseId;
    fields[2] = step;
    fields[3] = channel;
    fields[4] = chunk;
    fields[5] = bytes;
    fields[6] = startUs;
    fields[7] = endUs;
    let hash = 0x811c9dc5;
    for (let i = 0; i < 8; i++) {
      // `+ 0` makes -0 the 0 it prints as, so the two are one key, as they were one string before.
      this.bits[0] = fields[i] + 0;
      hash = Math.imul(hash ^ this.words[0], 0x01000193);
      hash = Math.imul(hash ^ this.words[1], 0x01000193);
    }
    const ids = this.byHash.get(hash);
    if (ids) {
      for (const id of ids) if (this.keys[id].every((v, i) => v === fields[i])) return id;
      ids.push(this.keys.length);
    } else this.byHash.set(hash, [this.keys.length]);
    this.keys.push(fields.slice());
    return this.keys.length - 1;
  }
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
          ? keys!.id(rankLaneIds.has(s.lane), s.phase, s.step, s.channel, s.chunk, s.bytes, s.startUs, s.endUs)
          : -1;
        visit(s.rank, peerOf(s), key);
      }
    },
  };
}

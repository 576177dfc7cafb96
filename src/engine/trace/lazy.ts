// Every rank of a simulated collective's drawn trace, one rank at a time. The drawn trace in memory (drawn.ts) stops
// mirroring at MAX_TRACE_SPANS, so at 131,072 ranks most ranks were left empty; this draws the same spans for every
// rank without holding them: the simulated spans (one rank per symmetric class) stay in memory, and each rank's
// mirrored spans, launch and pacing are made when the writer asks for that rank and dropped once written. The CLI
// streams them to a file (`simulate --trace-detail full`); summary.ts groups the nodes they show alike.
import type { CollectiveResult } from '../collective-types';
import type { System } from '../topology/model';
import { LAUNCH_SPAN_NAME, PACING_SPAN_NAME, SAME_TIME_REL, localSpan, round } from './drawn';
import { MirrorPlan } from './mirror-plan';
import { TRUNCATED_FACT, type Lane, type Span, type Trace, type TraceMetadata } from './model';
import { traceIndex, type SimulatedSpanIndex } from './simulated-index';

/** What a lazily drawn trace yields: a lane before its first span, then spans. */
export type TraceItem =
  { readonly lane: Lane; readonly span?: undefined } | { readonly span: Span; readonly lane?: undefined };

export class LazyDrawnTrace {
  readonly plan: MirrorPlan;
  private readonly rankLane = new Map<number, Lane>();
  private readonly streamLanes = new Map<number, Lane[]>();
  private readonly drawnEndUs: number;
  private readonly truncated: boolean;
  private readonly tolerance: number;
  private readonly simulatedCount: number;
  private mirroredRanks = 0;
  private completedRanks = 0;

  /**
   * `index` lists every simulated span when `trace` holds only some ranks' (a run recorded for a summary): those
   * ranks are the ones that can be drawn.
   */
  constructor(
    readonly system: System,
    readonly result: CollectiveResult,
    readonly trace: Trace,
    index: SimulatedSpanIndex = traceIndex(trace),
  ) {
    this.plan = new MirrorPlan(system, trace, index);
    for (const lane of trace.lanes) {
      if (lane.rank === undefined) continue;
      if (lane.kind === 'rank') this.rankLane.set(lane.rank, lane);
      else this.streamLanes.set(lane.rank, [...(this.streamLanes.get(lane.rank) ?? []), lane]);
    }
    // Mirrored spans keep their source's times, so the simulated spans hold the drawn trace's last instant.
    this.drawnEndUs = index.endUs;
    this.simulatedCount = index.count;
    this.truncated = trace.metadata.facts?.[TRUNCATED_FACT] !== undefined;
    this.tolerance = SAME_TIME_REL * Math.max(1, result.timeUs);
  }

  get ranks(): number {
    return this.system.ranks;
  }

  /**
   * The lanes of `rank` and its spans: its own simulated spans, the parts it lacks from the ranks that stand for
   * them, then its launch and pacing, as drawnCollectiveTrace draws them.
   */
  *rankItems(rank: number): Generator<TraceItem> {
    const lane = this.rankLane.get(rank);
    if (!lane) return;
    yield { lane };
    for (const stream of this.streamLanes.get(rank) ?? []) yield { lane: stream };
    const plan = this.plan;
    let firstUs = Infinity;
    for (const part of plan.parts) {
      for (const span of plan.simulatedOf(rank, part)) {
        firstUs = Math.min(firstUs, span.startUs);
        yield { span };
      }
    }
    const sources = plan.sourcesOf(rank);
    if (sources.length > 0) {
      if (plan.isEmpty(rank)) this.mirroredRanks++;
      else this.completedRanks++;
      const made: Lane[] = [];
      for (const span of plan.mirroredSpans(rank, lane.id, sources, (l) => made.push(l))) {
        while (made.length > 0) yield { lane: made.shift()! };
        firstUs = Math.min(firstUs, span.startUs);
        yield { span };
      }
    }
    if (firstUs === Infinity) return;
    if (firstUs > this.tolerance) yield { span: localSpan(lane, LAUNCH_SPAN_NAME, 0, firstUs) };
    const gapUs = this.result.timeUs - this.drawnEndUs;
    if (!this.truncated && gapUs > this.tolerance)
      yield { span: localSpan(lane, PACING_SPAN_NAME, this.drawnEndUs, this.result.timeUs) };
  }

  /** Every rank's lanes and spans, rank by rank. */
  *items(): Generator<TraceItem> {
    for (let rank = 0; rank < this.system.ranks; rank++) yield* this.rankItems(rank);
  }

  /** The trace's metadata; its counts of mirrored ranks are complete once items() has been read to its end. */
  metadata(): TraceMetadata {
    const { result, trace } = this;
    const facts: Record<string, string | number> = {
      ...(trace.metadata.facts ?? {}),
      'predicted (µs)': round(result.timeUs),
      detail: `full: every one of ${this.system.ranks} ranks drawn`,
    };
    if (this.truncated && result.timeUs - this.drawnEndUs > this.tolerance)
      facts['drawn'] =
        `the first ${this.simulatedCount} spans, to ${round(this.drawnEndUs)} µs of the predicted ${round(result.timeUs)} µs`;
    if (this.mirroredRanks > 0)
      facts['mirrored ranks'] =
        `${this.mirroredRanks} ranks drawn from the rank they mirror (the simulator ran one rank per symmetric class)`;
    if (this.completedRanks > 0)
      facts['completed ranks'] =
        `${this.completedRanks} ranks simulated in part (their NVSwitch or their rail traffic, the other standing in for it) and completed from the ranks that stood for them`;
    return { ...trace.metadata, facts };
  }
}

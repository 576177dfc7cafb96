// The trace every surface draws for one simulated collective (the CLI's `simulate --trace`, the extension's
// timeline), made to agree with the prediction beside it. The engine's fast path simulates one rank per symmetric
// class, and its flows start after the launch and the algorithm's base latency. Drawn as is, a 16-rank run shows
// ranks 9-15 empty and the collective 25 µs shorter than the prediction. This module fills every rank's lane from
// the rank it mirrors, draws the launch, and says where the trace stops short of the prediction.
import type { CollectiveResult } from '../collective-types';
import { MAX_TRACE_SPANS } from '../constants';
import type { System } from '../topology/model';
import { asBytes, asMicros } from '../units';
import { mirrorEmptyRanks } from './mirror';
import { TRUNCATED_FACT, type Lane, type Span, type Trace } from './model';

export const LAUNCH_SPAN_NAME = 'launch and base latency (before the first transfer)';
export const PACING_SPAN_NAME = 'host launch pacing (back-to-back calls)';

/** Times closer than this (relative) are the same instant; float sums of flow times differ in the last bits. */
export const SAME_TIME_REL = 1e-6;

/** Local spans (launch, pacing) each rank lane may get: room the mirroring leaves for them under the cap. */
const LOCAL_SPANS_PER_RANK = 2;

/**
 * The drawn trace of `result`, whose `trace` is the engine's (`simulateCollective` with `trace: true`). Its spans
 * stay within MAX_TRACE_SPANS: empty ranks are mirrored only while they fit, and its facts count those left out.
 */
export function drawnCollectiveTrace(system: System, result: CollectiveResult, trace: Trace): Trace {
  const rankLaneCount = trace.lanes.filter((l) => l.kind === 'rank' && l.rank !== undefined).length;
  const mirrorBudget = Math.max(0, MAX_TRACE_SPANS - LOCAL_SPANS_PER_RANK * rankLaneCount);
  const mirrored = mirrorEmptyRanks(system, trace, mirrorBudget);
  const lanes = mirrored.lanes;
  const spans = [...mirrored.spans];
  const rankLanes = lanes.filter((l) => l.kind === 'rank' && l.rank !== undefined);
  const firstStartUs = new Map<number, number>();
  let drawnEndUs = 0;
  for (const span of spans) {
    firstStartUs.set(span.rank, Math.min(firstStartUs.get(span.rank) ?? Infinity, span.startUs));
    drawnEndUs = Math.max(drawnEndUs, span.endUs);
  }
  const truncated = trace.metadata.facts?.[TRUNCATED_FACT] !== undefined;
  const gapUs = result.timeUs - drawnEndUs;
  const tolerance = SAME_TIME_REL * Math.max(1, result.timeUs);
  for (const lane of rankLanes) {
    const rank = lane.rank!;
    const first = firstStartUs.get(rank);
    if (first === undefined) continue;
    if (first > tolerance) spans.push(localSpan(lane, LAUNCH_SPAN_NAME, 0, first));
    // Without truncation, the rest of the prediction is the host's launch rate pacing back-to-back calls
    // (simulateCollective's smooth maximum of host and device time): every rank waits for it alike.
    if (!truncated && gapUs > tolerance) spans.push(localSpan(lane, PACING_SPAN_NAME, drawnEndUs, result.timeUs));
  }
  const facts: Record<string, string | number> = {
    ...(trace.metadata.facts ?? {}),
    'predicted (µs)': round(result.timeUs),
  };
  if (truncated && gapUs > tolerance) {
    facts['drawn'] =
      `the first ${trace.spans.length} spans, to ${round(drawnEndUs)} µs of the predicted ${round(result.timeUs)} µs`;
  }
  if (mirrored.mirroredRanks > 0) {
    facts['mirrored ranks'] =
      `${mirrored.mirroredRanks} ranks drawn from the rank they mirror (the simulator ran one rank per symmetric class)`;
  }
  if (mirrored.completedRanks > 0) {
    facts['completed ranks'] =
      `${mirrored.completedRanks} ranks simulated in part (their NVSwitch or their rail traffic, the other standing in for it) and completed from the ranks that stood for them`;
  }
  if (mirrored.incompleteRanks > 0) {
    facts['ranks left incomplete'] =
      `${mirrored.incompleteRanks} ranks show only the part the simulator ran: completing them would pass the cap of ${MAX_TRACE_SPANS} spans`;
  }
  if (mirrored.leftOutRanks > 0) {
    facts['ranks left out'] =
      `${mirrored.leftOutRanks} ranks left empty: drawing them from the rank they mirror would pass the cap of ${MAX_TRACE_SPANS} spans`;
  }
  return { metadata: { ...trace.metadata, facts }, lanes, spans };
}

export function round(us: number): number {
  return Math.round(us * 10) / 10;
}

export function localSpan(lane: Lane, name: string, startUs: number, endUs: number): Span {
  return {
    lane: lane.id,
    rank: lane.rank!,
    phase: 'other',
    name,
    step: -1,
    channel: 0,
    chunk: -1,
    bytes: asBytes(0),
    links: [],
    startUs: asMicros(startUs),
    endUs: asMicros(endUs),
  };
}

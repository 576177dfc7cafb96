// Flow arrows of a PyTorch profiler (Kineto) trace: the profiler links each CPU-side launch to the kernel it
// started with a pair of flow events (ph "s" on the CPU thread, ph "f" with bp "e" on the GPU stream, category
// "ac2g"). Where both ends fall inside spans the timeline draws (a record_param_comms op on the rank's CPU lane,
// a kernel on its stream lane), the pair becomes a Flow between those spans; launches of compute kernels start
// in no drawn span and are left out.
import type { Flow, Span, Trace } from '../../engine/index';

interface FlowEvent {
  readonly ph?: string;
  readonly id?: unknown;
  readonly cat?: string;
  readonly tid?: number | string;
  readonly ts?: number;
}

/** Spans of one lane sorted by start, searched for the one that holds an instant. */
class LaneIndex {
  private readonly order: number[];
  constructor(
    private readonly spans: readonly Span[],
    members: number[],
  ) {
    this.order = members.sort((a, b) => spans[a].startUs - spans[b].startUs);
  }

  /** The innermost span (the latest-starting one) holding `timeUs`, within a nanosecond of its edges; -1 if none. */
  holding(timeUs: number): number {
    const slackUs = 1e-3;
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.spans[this.order[mid]].startUs <= timeUs + slackUs) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo - 1; k >= 0 && k >= lo - 64; k--) {
      const span = this.spans[this.order[k]];
      if (span.endUs + slackUs >= timeUs) return this.order[k];
    }
    return -1;
  }
}

/**
 * The flows between spans of `trace` (made by the Kineto importer, whose lanes are "rank r · CPU" and "rank r ·
 * stream s") that the trace's flow events describe. `originUs` is the absolute time the trace's times count from.
 */
export function kinetoFlows(events: readonly unknown[], trace: Trace, originUs: number): Flow[] {
  const starts = new Map<string, FlowEvent>();
  const finishes = new Map<string, FlowEvent>();
  for (const raw of events) {
    if (typeof raw !== 'object' || raw === null) continue;
    const e = raw as FlowEvent;
    if ((e.ph !== 's' && e.ph !== 'f') || typeof e.ts !== 'number' || !Number.isFinite(e.ts)) continue;
    if (typeof e.id !== 'number' && typeof e.id !== 'string') continue;
    const key = `${e.cat ?? ''}\u0000${String(e.id)}`;
    (e.ph === 's' ? starts : finishes).set(key, e);
  }
  if (starts.size === 0 || finishes.size === 0) return [];
  const byLane = new Map<number, number[]>();
  trace.spans.forEach((span, i) => {
    const list = byLane.get(span.lane);
    if (list) list.push(i);
    else byLane.set(span.lane, [i]);
  });
  const cpuLanes: LaneIndex[] = [];
  const streamLanes = new Map<string, LaneIndex>();
  for (const lane of trace.lanes) {
    const members = byLane.get(lane.id);
    if (!members) continue;
    const stream = / · stream (.+)$/.exec(lane.label);
    if (stream) streamLanes.set(stream[1], new LaneIndex(trace.spans, members));
    else if (lane.label.endsWith(' · CPU')) cpuLanes.push(new LaneIndex(trace.spans, members));
  }
  const flows: Flow[] = [];
  for (const [key, start] of starts) {
    const finish = finishes.get(key);
    if (!finish) continue;
    const target = streamLanes.get(String(finish.tid))?.holding(finish.ts! - originUs) ?? -1;
    if (target < 0) continue;
    let source = -1;
    for (const lane of cpuLanes) {
      source = lane.holding(start.ts! - originUs);
      if (source >= 0) break;
    }
    if (source >= 0 && source !== target) flows.push({ fromSpan: source, toSpan: target, name: 'launch' });
  }
  return flows;
}

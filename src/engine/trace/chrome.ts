// Chrome Trace Event format (the JSON Perfetto and chrome://tracing open): one process per node, one thread per
// lane, complete ("X") events in µs.
import { chromeLaneEvents, chromeSpanEvent } from './chrome-stream';
import type { Trace } from './model';

export interface ChromeTrace {
  readonly traceEvents: object[];
  readonly displayTimeUnit: 'ns' | 'ms';
  readonly otherData: Record<string, unknown>;
}

export function traceToChromeJson(trace: Trace): ChromeTrace {
  const events: object[] = [];
  const pids = new Set<number>();
  for (const lane of trace.lanes) events.push(...chromeLaneEvents(lane, pids));
  for (const span of trace.spans) events.push(chromeSpanEvent(span, trace.lanes[span.lane]?.node ?? 0));
  // Flows as Chrome flow events: the start inside its source span, the finish bound to the span that encloses it.
  (trace.flows ?? []).forEach((flow, id) => {
    const from = trace.spans[flow.fromSpan];
    const to = trace.spans[flow.toSpan];
    if (!from || !to) return;
    const name = flow.name ?? 'flow';
    const at = (span: typeof from): { pid: number; tid: number } => ({
      pid: trace.lanes[span.lane]?.node ?? 0,
      tid: span.lane,
    });
    events.push({ ph: 's', id, name, cat: 'flow', ...at(from), ts: (from.startUs + from.endUs) / 2 });
    events.push({ ph: 'f', bp: 'e', id, name, cat: 'flow', ...at(to), ts: to.startUs });
  });
  return { traceEvents: events, displayTimeUnit: 'ms', otherData: { ...trace.metadata } };
}

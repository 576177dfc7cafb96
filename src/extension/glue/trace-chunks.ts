// Splits a trace into protocol messages: one `trace` message for small traces, and traceBegin / traceChunk… /
// traceEnd for big ones, so that no single postMessage carries millions of spans at once.
import type { ToWebview, TraceSource } from '../../protocol';
import type { Trace } from '../../engine/index';

export const CHUNK_SPANS = 50_000;

export function traceMessages(trace: Trace, source?: TraceSource, chunkSpans = CHUNK_SPANS): ToWebview[] {
  if (trace.spans.length <= chunkSpans) return [{ type: 'trace', trace, source }];
  const out: ToWebview[] = [
    { type: 'traceBegin', metadata: trace.metadata, lanes: trace.lanes, totalSpans: trace.spans.length, source },
  ];
  for (let i = 0; i < trace.spans.length; i += chunkSpans)
    out.push({ type: 'traceChunk', spans: trace.spans.slice(i, i + chunkSpans) });
  out.push(trace.flows && trace.flows.length > 0 ? { type: 'traceEnd', flows: trace.flows } : { type: 'traceEnd' });
  return out;
}

// Flow arrows travel with a trace: through the chunked protocol messages, into a saved trace file and back, and
// into the Chrome/Perfetto export as flow events bound to their spans.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asBytes, asMicros, TraceBuilder, traceToChromeJson, type Trace } from '../../../src/engine/index';
import { traceMessages } from '../../../src/extension/glue/trace-chunks';
import { readTraceFile, serializeTraceFile } from '../../../src/extension/glue/trace-file';

function linkedTrace(spans: number): Trace {
  const builder = new TraceBuilder({ origin: 'test', title: 'flows', ranks: 2 });
  const a = builder.lane('rank', 'rank 0', { rank: 0, node: 0 });
  const b = builder.lane('rank', 'rank 1', { rank: 1, node: 1 });
  for (let i = 0; i < spans; i++) {
    const common = {
      rank: i % 2,
      phase: 'exchange' as const,
      step: i,
      channel: 0,
      chunk: 0,
      bytes: asBytes(8),
      links: [],
    };
    builder.add({ ...common, lane: i % 2 === 0 ? a : b, startUs: asMicros(i * 10), endUs: asMicros(i * 10 + 5) });
    if (i > 0) builder.flow(i - 1, i, `step ${i - 1}`);
  }
  return builder.build();
}

test('the builder refuses a flow to a span it does not have', () => {
  const builder = new TraceBuilder({ origin: 'test', title: 't', ranks: 1 });
  builder.lane('rank', 'rank 0');
  assert.throws(() => builder.flow(0, 1), /unknown spans/);
});

test('chunked messages carry the flows in their last message', () => {
  const trace = linkedTrace(12);
  const messages = traceMessages(trace, undefined, 5);
  const end = messages[messages.length - 1];
  assert.equal(end.type, 'traceEnd');
  assert.deepEqual(end.type === 'traceEnd' && end.flows, trace.flows);
  const whole = traceMessages(trace);
  assert.equal(whole.length, 1);
  assert.deepEqual(whole[0].type === 'trace' && whole[0].trace.flows, trace.flows);
});

test('a saved trace file keeps its flows; flows naming missing spans are dropped on reading', () => {
  const trace = linkedTrace(6);
  const back = readTraceFile(serializeTraceFile(trace), 'x.cptrace.json').trace;
  assert.deepEqual(back.flows, trace.flows);
  const doc = JSON.parse(serializeTraceFile(trace));
  doc.collectiveProfiler.trace.flows.push({ fromSpan: 0, toSpan: 99 }, { fromSpan: -1, toSpan: 2 }, 'nonsense');
  assert.deepEqual(readTraceFile(JSON.stringify(doc), 'x.cptrace.json').trace.flows, trace.flows);
});

test('the Chrome export writes each flow as a start inside its source span and a finish bound to its target', () => {
  const trace = linkedTrace(4);
  const events = traceToChromeJson(trace).traceEvents as {
    ph: string;
    id?: number;
    tid?: number;
    ts?: number;
    bp?: string;
  }[];
  const starts = events.filter((e) => e.ph === 's');
  const finishes = events.filter((e) => e.ph === 'f');
  assert.equal(starts.length, 3);
  assert.equal(finishes.length, 3);
  trace.flows!.forEach((flow, id) => {
    const s = starts.find((e) => e.id === id)!;
    const f = finishes.find((e) => e.id === id)!;
    const from = trace.spans[flow.fromSpan];
    const to = trace.spans[flow.toSpan];
    assert.equal(s.tid, from.lane);
    assert.ok(s.ts! >= from.startUs && s.ts! <= from.endUs);
    assert.equal(f.tid, to.lane);
    assert.equal(f.ts, to.startUs);
    assert.equal(f.bp, 'e');
  });
});

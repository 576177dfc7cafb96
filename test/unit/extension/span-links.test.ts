// The two links between the timeline and the code: a selected span (selectSpan) gives the host its source line and
// a status-bar summary; a source line gives the time range the host reveals in the timeline (reveal).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { presetSystem, resolveSystem, simulateCollective, type Trace, asBytes } from '../../../src/engine/index';
import { sourceExtent, spanSelection } from '../../../src/extension/glue/span-links';
import { drawnCollectiveTrace } from '../../../src/extension/glue/simulated-trace';

/** A simulated AllReduce whose spans, like Profile AllReduce at Cursor's, all come from train.py:12. */
function profiledTrace(): Trace {
  const system = resolveSystem(presetSystem('dgx-a100')!);
  const trace = drawnCollectiveTrace(
    system,
    simulateCollective(system, { kind: 'allreduce', bytes: asBytes(64 << 20), trace: true }),
  );
  return { ...trace, spans: trace.spans.map((s) => ({ ...s, source: { file: '/work/ws/train.py', line: 12 } })) };
}

test('a selected span names its source line and sums itself up; an index past the trace is nothing', () => {
  const trace = profiledTrace();
  const index = trace.spans.findIndex((s) => s.bytes > 0);
  const span = trace.spans[index];
  const selection = spanSelection(trace, index)!;
  assert.deepEqual(selection.source, { file: '/work/ws/train.py', line: 12 });
  assert.ok(selection.summary.startsWith(span.name ?? span.phase), selection.summary);
  assert.match(selection.summary, / · [\d.]+ (ns|µs|ms|s) · [\d.]+ (B|KiB|MiB|GiB)$/);
  assert.equal(spanSelection(trace, trace.spans.length), undefined);
  const bare = { ...trace, spans: trace.spans.map((s) => ({ ...s, source: undefined })) };
  assert.equal(spanSelection(bare, index)?.source, undefined);
});

test("a source line's extent covers exactly its spans, widened a tenth each side; other lines have none", () => {
  const trace = profiledTrace();
  const first = Math.min(...trace.spans.map((s) => s.startUs));
  const last = Math.max(...trace.spans.map((s) => s.endUs));
  // A relative path names the same file once both sides are resolved against the same folder.
  const extent = sourceExtent(trace, '/work/ws/./train.py', 12, path.resolve)!;
  assert.equal(extent.spans, trace.spans.length);
  const margin = (last - first) / 10;
  assert.ok(Math.abs(extent.startUs - (first - margin)) < 1e-9 && Math.abs(extent.endUs - (last + margin)) < 1e-9);
  assert.equal(sourceExtent(trace, '/work/ws/train.py', 13, path.resolve), undefined);
  assert.equal(sourceExtent(trace, '/work/other/train.py', 12, path.resolve), undefined);
  // Only the spans of the line count: move half of them to another line and the extent shrinks to the rest.
  const split = {
    ...trace,
    spans: trace.spans.map((s, i) => (i % 2 === 0 ? s : { ...s, source: { file: '/work/ws/train.py', line: 40 } })),
  };
  assert.equal(sourceExtent(split, '/work/ws/train.py', 40)!.spans, Math.floor(trace.spans.length / 2));
});

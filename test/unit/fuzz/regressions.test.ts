// Inputs the fuzzers found that once crashed a reader, kept as plain tests so they stay fixed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { importMeasurementText } from '../../../src/native/import/index';
import { parseSystemFile } from '../../../src/config/system-file';
import { ConfigError } from '../../../src/config/positioned';
import { readTraceFile } from '../../../src/extension/glue/trace-file';
import { rejectionProblem } from './harness';

function importOrReject(text: string): ReturnType<typeof importMeasurementText> | undefined {
  try {
    return importMeasurementText(text, { fileName: 'trace.json' });
  } catch (error) {
    assert.equal(rejectionProblem(error), undefined, String(error));
    return undefined;
  }
}

test('Kineto: a kernel whose ts is not a number is skipped, not drawn at NaN (was: uncaught "span time is not finite")', () => {
  const kernel = (ts: unknown, dur: unknown, nelems: unknown = 1024) => ({ ph: 'X', cat: 'kernel', name: 'ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)', pid: 2, tid: 4, ts, dur, args: { 'Collective name': 'allreduce', 'In msg nelems': nelems, 'Out msg nelems': nelems, 'Group size': 8, dtype: 'BFloat16' } });
  const result = importOrReject(JSON.stringify({ traceEvents: [kernel({}, 6911.678), kernel(100, 5)] }));
  assert.equal(result?.trace?.spans.length, 1);
  // Negative durations, negative sizes and times that overflow when made relative are dropped the same way.
  const hostile = importOrReject(JSON.stringify({ traceEvents: [kernel(10, -5), kernel(20, 5, -1), kernel(-1e308, 1), kernel(1e308, 1e308), kernel(30, 1)] }));
  for (const span of hostile?.trace?.spans ?? []) assert.ok(Number.isFinite(span.endUs) && span.endUs >= span.startUs && span.bytes >= 0);
});

test('Kineto: an annotation with a non-string name does not throw (was: TypeError e.name.startsWith)', () => {
  assert.doesNotThrow(() => importOrReject(JSON.stringify({ traceEvents: [{ ph: 'X', cat: 'user_annotation', name: 12, ts: 1, dur: 1 }] })));
});

test('Kineto: 50,000 kernels of one size import in linear time (was: quadratic list copying, minutes)', () => {
  const events = Array.from({ length: 50_000 }, (_, i) => ({ ph: 'X', cat: 'kernel', name: 'ncclKernel_AllReduce_RING_LL_Sum_float(', ts: 1000 + i, dur: 1, args: { 'In msg nelems': 1024, dtype: 'float' } }));
  const result = importOrReject(JSON.stringify({ traceEvents: events }));
  assert.equal(result?.trace?.spans.length, 50_000);
  assert.equal(result?.measurements[0]?.rows[0]?.calls, 50_000);
});

test('system file: an absurd NIC count is refused by the schema with its position (was: 8 s building 65,536 NICs per node)', () => {
  const text = 'gpu: H100-SXM\nnodes: 2\ngpusPerNode: 8\nintraNode: nvswitch\nnic:\n  gbps: 400\n  perNode: 65536\n';
  assert.throws(() => parseSystemFile(text, 'big.system.yaml'), (error: unknown) => error instanceof ConfigError && error.line === 7 && /at most 64/.test(error.message));
});

test('Chrome trace: 100,000 begin events without ends open in linear time (was: the open stack copied on each, 46 s for 20,000)', () => {
  const events: object[] = Array.from({ length: 100_000 }, (_, i) => ({ ph: 'B', name: 'step', pid: 1, tid: 1, ts: i }));
  events.push({ ph: 'X', name: 'kernel', pid: 1, tid: 1, ts: 0, dur: 1 });
  const { trace, warnings } = readTraceFile(JSON.stringify({ traceEvents: events }), 'truncated.json');
  assert.equal(trace.spans.length, 1);
  assert.deepEqual(warnings, []);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { presetSystem, simulateCollective, asBytes } from '../../../src/engine/index';
import { readTraceFile, serializeTraceFile, EMBED_KEY } from '../../../src/extension/glue/trace-file';
import { MeasurementParseError } from '../../../src/native/import/model';
import { needShared } from '../requirements';

const SHARED = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'fixtures-real');

test('an exported trace is Chrome JSON for Perfetto and reopens in the timeline unchanged', () => {
  const trace = simulateCollective(presetSystem('dgx-h100')!, { bytes: asBytes(8 * 2 ** 20), trace: true }).trace!;
  const text = serializeTraceFile(trace);
  const doc = JSON.parse(text);
  assert.ok(Array.isArray(doc.traceEvents) && doc.traceEvents.length > 0, 'Perfetto reads traceEvents');
  assert.equal(doc[EMBED_KEY].version, 1);
  const back = readTraceFile(text, 'x.cptrace.json');
  assert.equal(back.format, 'collective-profiler');
  assert.deepEqual(back.trace.lanes, trace.lanes);
  assert.equal(back.trace.spans.length, trace.spans.length);
  assert.deepEqual(back.trace.spans[5], trace.spans[5]);
});

test('a plain Chrome trace (ph X and B/E) becomes lanes per process and thread', () => {
  const events = [
    { ph: 'M', name: 'process_name', pid: 1, args: { name: 'rank 0' } },
    { ph: 'M', name: 'thread_name', pid: 1, tid: 7, args: { name: 'stream 7' } },
    { ph: 'X', name: 'ncclDevKernel_AllReduce_Sum_f32_RING_LL', pid: 1, tid: 7, ts: 1000, dur: 50 },
    { ph: 'B', name: 'aten::mm', pid: 1, tid: 1, ts: 990 },
    { ph: 'E', pid: 1, tid: 1, ts: 1010 },
    { ph: 'E', pid: 2, tid: 1, ts: 1010 },
  ];
  const { trace, format, warnings } = readTraceFile(JSON.stringify({ traceEvents: events }), 'k.json');
  assert.equal(format, 'chrome');
  assert.deepEqual(
    trace.lanes.map((l) => l.label),
    ['rank 0 · thread 1', 'rank 0 · stream 7'],
  );
  assert.deepEqual(
    trace.spans.map((s) => [s.phase, s.startUs, s.endUs]),
    [
      ['collective', 10, 60],
      ['compute', 0, 20],
    ],
  );
  assert.deepEqual(warnings, ['1 events were not complete spans and were skipped']);
});

test('what is not a trace gets a positioned error, never a crash', () => {
  assert.throws(
    () => readTraceFile('{"traceEvents": [', 'bad.json'),
    (e: unknown) => e instanceof MeasurementParseError && e.line >= 1,
  );
  assert.throws(() => readTraceFile('{"a": 1}', 'x.json'), /not a trace/);
  assert.throws(() => readTraceFile('{"traceEvents": [{"ph": "i"}]}', 'x.json'), /no complete/);
  const embedded = JSON.stringify({
    traceEvents: [],
    [EMBED_KEY]: {
      version: 1,
      trace: { metadata: {}, lanes: [{ id: 0, label: 'a' }], spans: [{ lane: 0, startUs: 5, endUs: 1, bytes: 0 }] },
    },
  });
  assert.throws(() => readTraceFile(embedded, 'x.cptrace.json'), /span 0: span ends/);
});

test('real Kineto traces open as Chrome traces', { skip: needShared(SHARED, '../shared/fixtures-real') }, () => {
  const text = readFileSync(join(SHARED, 'kineto-a100-2rank-nccl2.17-gpu-excerpt.json'), 'utf8');
  const { trace } = readTraceFile(text, 'kineto.json');
  assert.ok(trace.spans.length > 10);
  assert.ok(trace.spans.some((s) => s.phase === 'collective'));
  assert.ok(trace.spans.every((s) => s.endUs >= s.startUs && s.startUs >= 0));
});

test('profiler categories decide the phase before words in kernel names', async () => {
  const { phaseOf } = await import('../../../src/extension/glue/trace-file');
  assert.equal(phaseOf('void cutlass::reduction::kernel::ReduceSplitK<…>', 'kernel'), 'compute');
  assert.equal(phaseOf('ncclKernel_AllReduce_RING_LL_Sum_float', 'kernel'), 'collective');
  assert.equal(phaseOf('cudaLaunchKernel', 'cuda_runtime'), 'other');
  assert.equal(phaseOf('ring exchange step 3', ''), 'exchange');
});

test('a plain Chrome trace shows no process id as a rank; a profiler trace names its own rank', () => {
  const events = [
    { ph: 'X', name: 'aten::mm', cat: 'cpu_op', pid: 2910249, tid: 2910249, ts: 10, dur: 5 },
    { ph: 'X', name: 'ncclKernel_AllReduce_RING_LL_Sum_float', cat: 'kernel', pid: 0, tid: 7, ts: 12, dur: 4 },
  ];
  const plain = readTraceFile(JSON.stringify({ traceEvents: events }), 'p.json').trace;
  assert.deepEqual(
    plain.spans.map((s) => s.rank),
    [-1, -1],
  );
  const profiler = readTraceFile(JSON.stringify({ traceEvents: events, distributedInfo: { rank: 3 } }), 'k.json').trace;
  assert.deepEqual(
    profiler.spans.map((s) => s.rank),
    [3, 3],
  );
});

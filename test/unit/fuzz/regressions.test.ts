// Inputs the fuzzers found that once crashed a reader, kept as plain tests so they stay fixed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { importMeasurementText, parseKineto } from '../../../src/native/import/index';
import { parseSystemFile } from '../../../src/config/system-file';
import { ConfigError } from '../../../src/config/positioned';
import { readTraceFile } from '../../../src/extension/glue/trace-file';
import { loadPythonParser } from '../../../src/cli/python-parser';
import { analyzePython } from '../../../src/analysis/index';
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
  const kernel = (ts: unknown, dur: unknown, nelems: unknown = 1024) => ({
    ph: 'X',
    cat: 'kernel',
    name: 'ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)',
    pid: 2,
    tid: 4,
    ts,
    dur,
    args: {
      'Collective name': 'allreduce',
      'In msg nelems': nelems,
      'Out msg nelems': nelems,
      'Group size': 8,
      dtype: 'BFloat16',
    },
  });
  const result = importOrReject(JSON.stringify({ traceEvents: [kernel({}, 6911.678), kernel(100, 5)] }));
  assert.equal(result?.trace?.spans.length, 1);
  // Negative durations, negative sizes and times that overflow when made relative are dropped the same way.
  const hostile = importOrReject(
    JSON.stringify({
      traceEvents: [kernel(10, -5), kernel(20, 5, -1), kernel(-1e308, 1), kernel(1e308, 1e308), kernel(30, 1)],
    }),
  );
  for (const span of hostile?.trace?.spans ?? [])
    assert.ok(Number.isFinite(span.endUs) && span.endUs >= span.startUs && span.bytes >= 0);
});

test('Kineto: an annotation with a non-string name does not throw (was: TypeError e.name.startsWith)', () => {
  assert.doesNotThrow(() =>
    importOrReject(JSON.stringify({ traceEvents: [{ ph: 'X', cat: 'user_annotation', name: 12, ts: 1, dur: 1 }] })),
  );
});

test('Kineto: 50,000 kernels of one size import in linear time (was: quadratic list copying, minutes)', () => {
  const events = Array.from({ length: 50_000 }, (_, i) => ({
    ph: 'X',
    cat: 'kernel',
    name: 'ncclKernel_AllReduce_RING_LL_Sum_float(',
    ts: 1000 + i,
    dur: 1,
    args: { 'In msg nelems': 1024, dtype: 'float' },
  }));
  const result = importOrReject(JSON.stringify({ traceEvents: events }));
  assert.equal(result?.trace?.spans.length, 50_000);
  assert.equal(result?.measurements[0]?.rows[0]?.calls, 50_000);
});

test('system file: an absurd NIC count is refused by the schema with its position (was: 8 s building 65,536 NICs per node)', () => {
  const text = 'gpu: H100-SXM\nnodes: 2\ngpusPerNode: 8\nintraNode: nvswitch\nnic:\n  gbps: 400\n  perNode: 65536\n';
  assert.throws(
    () => parseSystemFile(text, 'big.system.yaml'),
    (error: unknown) => error instanceof ConfigError && error.line === 7 && /at most 64/.test(error.message),
  );
});

test('Chrome trace: 100,000 begin events without ends open in linear time (was: the open stack copied on each, 46 s for 20,000)', () => {
  const events: object[] = Array.from({ length: 100_000 }, (_, i) => ({
    ph: 'B',
    name: 'step',
    pid: 1,
    tid: 1,
    ts: i,
  }));
  events.push({ ph: 'X', name: 'kernel', pid: 1, tid: 1, ts: 0, dur: 1 });
  const { trace, warnings } = readTraceFile(JSON.stringify({ traceEvents: events }), 'truncated.json');
  assert.equal(trace.spans.length, 1);
  assert.deepEqual(warnings, []);
});

test('Kineto: the annotation around a launch is the one a scan in file order finds (indexed lookup, was quadratic)', () => {
  const annotation = fc.record({
    tid: fc.constantFrom(1, 2, '1'),
    ts: fc.integer({ min: 0, max: 100 }),
    dur: fc.integer({ min: 0, max: 40 }),
    n: fc.integer({ min: 1, max: 9 }),
  });
  const launch = fc.record({ tid: fc.constantFrom(1, 2, '1'), ts: fc.integer({ min: 0, max: 140 }) });
  fc.assert(
    fc.property(
      fc.array(annotation, { maxLength: 12 }),
      fc.array(launch, { minLength: 1, maxLength: 6 }),
      (annotations, launches) => {
        const events = [
          ...annotations.map((a) => ({
            ph: 'X',
            cat: 'user_annotation',
            name: 'nccl:all_reduce',
            tid: a.tid,
            ts: a.ts,
            dur: a.dur,
            args: { 'Input Dims': [[a.n]], 'Input type': ['float'] },
          })),
          ...launches.map((l, i) => ({
            ph: 'X',
            cat: 'cuda_runtime',
            name: 'cudaLaunchKernel',
            tid: l.tid,
            ts: l.ts,
            dur: 1,
            args: { correlation: i },
          })),
          ...launches.map((l, i) => ({
            ph: 'X',
            cat: 'kernel',
            name: 'ncclKernel_AllReduce_RING_LL_Sum_float(',
            tid: 7,
            ts: 1000 + i,
            dur: 1,
            args: { correlation: i },
          })),
        ];
        const { kernels } = parseKineto(JSON.stringify({ traceEvents: events }));
        const expected = launches.map((l) => {
          const around = annotations.find((a) => a.tid === l.tid && a.ts <= l.ts && l.ts <= a.ts + a.dur);
          return around ? around.n * 4 : undefined;
        });
        assert.deepEqual(
          kernels.map((k) => k.bytes),
          expected,
        );
      },
    ),
    { numRuns: 300, seed: 7 },
  );
});

test('Python analysis: a lone CR counts as a line break, as in the editor (was: findings one line off)', async () => {
  const parser = await loadPythonParser();
  const text =
    '\r' +
    'import torch.distributed as dist\n\ndef step(model):\n    for p in model.parameters():\n        dist.all_reduce(p.grad)\n';
  const lines = text.split(/\r\n|\r|\n/);
  const finding = analyzePython(parser, text).findings.find((f) => f.code === 'CP001');
  assert.ok(finding, 'the sum-not-averaged finding');
  assert.match(lines[finding.range.startLine].slice(finding.range.startColumn), /^dist\.all_reduce/);
});

test('saved native runs: malformed lines are dropped and far-apart spans skipped (was: NaN rows and an uncaught "span time is not finite")', () => {
  const env = {
    type: 'env',
    python: '3.11',
    torch: '2.1',
    backend: 'gloo',
    worldSize: 2,
    gpuCount: 0,
    ncclVersion: null,
  };
  const span = (startUs: number, endUs: number) => ({
    type: 'span',
    algorithm: 'ring',
    label: 'size',
    messageBytes: 8,
    bytes: 8,
    rank: 0,
    phase: 'exchange',
    step: 0,
    startUs,
    endUs,
    sendTo: 1,
    recvFrom: 1,
  });
  const lines = [
    env,
    { type: 'result', kind: 'fused', label: 'size', bytes: 8, timeUs: 5, algbwGBps: {}, busbwGBps: 1 },
    { type: 'result', kind: 'fused', label: 'size', bytes: 16, timeUs: 5, algbwGBps: 1, busbwGBps: 1 },
    span(-1e308, 0),
    span(1e308, 1e308),
    span(10, 20),
  ];
  const result = importOrReject(lines.map((l) => JSON.stringify(l)).join('\n'));
  assert.deepEqual(
    result?.measurements[0]?.rows.map((r) => r.bytes),
    [16],
  );
  for (const s of result?.trace?.spans ?? []) assert.ok(Number.isFinite(s.startUs) && Number.isFinite(s.endUs));
});

test('Kineto: a group size or world size that is not a whole rank count is ignored (was: busbw = Infinity for Group size 1e308)', () => {
  const kernel = {
    ph: 'X',
    cat: 'kernel',
    name: 'ncclKernel_AllReduce_RING_LL_Sum_float(',
    tid: 40,
    ts: 10,
    dur: 5,
    args: { 'In msg nelems': 1024, dtype: 'Float', 'Group size': 1e308 },
  };
  const result = importOrReject(JSON.stringify({ distributedInfo: { world_size: 2.5 }, traceEvents: [kernel] }));
  const row = result?.measurements[0]?.rows[0];
  assert.ok(row && Number.isFinite(row.busbwGBps), JSON.stringify(row));
  assert.equal(result?.measurements[0]?.ranks, 1);
});

// Bad input gets an error with a line and column, never a crash; formats without a real fixture are checked here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { importMeasurementText, MeasurementParseError, parseNcclKernelName } from '../../../src/native/import/index';

const HEADER = [
  '# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0',
  '#  Rank  0 Group  0 Pid   1 on a device  0 [0x01] NVIDIA H100 80GB HBM3',
  '#  Rank  1 Group  0 Pid   2 on a device  1 [0x02] NVIDIA H100 80GB HBM3',
  '#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong',
];

function parseError(work: () => unknown): MeasurementParseError {
  try {
    work();
  } catch (error) {
    assert.ok(error instanceof MeasurementParseError, `expected a MeasurementParseError, got ${String(error)}`);
    return error;
  }
  return assert.fail('expected an error');
}

test('a malformed table cell is reported at its line and column', () => {
  const text = [
    ...HEADER,
    '           8             2     float     sum      -1    12.x5    0.00    0.00      0    11.80    0.00    0.00      0',
  ].join('\n');
  const error = parseError(() => importMeasurementText(text, { fileName: 'run.txt' }));
  assert.equal(error.line, 5);
  assert.equal(error.column, 57);
  assert.match(error.message, /^run\.txt:5:57: expected a number in column "time", found "12\.x5"/);
});

test('invalid JSON is reported with a line and column', () => {
  const error = parseError(() =>
    importMeasurementText('{\n  "traceEvents": [\n    {"ph": "X",}\n  ]\n}', { fileName: 't.json' }),
  );
  assert.equal(error.line, 3);
  assert.ok(error.column > 1);
});

test('an unrecognised file says what was expected', () => {
  const error = parseError(() => importMeasurementText('hello\nworld\n', { fileName: 'notes.txt' }));
  assert.equal(error.line, 1);
  assert.match(error.message, /expected nccl-tests output, an NCCL_DEBUG log, a Kineto trace/);
});

test('a truncated last row is skipped with a warning, not an error', () => {
  const text = [
    ...HEADER,
    '           8             2     float     sum      -1    12.05    0.00    0.00      0    11.80    0.00    0.00      0',
    '          16             4     float     sum',
  ].join('\n');
  const result = importMeasurementText(text);
  assert.equal(result.measurements[0].rows.length, 1);
  assert.ok(result.warnings.some((w) => /incomplete/.test(w)));
  assert.ok(result.warnings.some((w) => /truncated/.test(w)));
});

test('nccl-tests -J JSON report (schema after util.cu) imports with in-place twins', () => {
  const report = {
    version: '2.17.8',
    collective: 'all_reduce_perf',
    nranks: 8,
    config: { minBytes: 8, maxBytes: 16, stepFactor: 2, iters: 20 },
    results: [
      {
        size: 8,
        count: 2,
        type: 'float',
        redop: 'sum',
        root: -1,
        out_of_place: { time: 30.5, algbw: 0.0, busbw: 0.0, wrong: 0 },
        in_place: { time: 29.8, algbw: 0.0, busbw: 0.0, wrong: 0 },
      },
      {
        size: 1073741824,
        count: 268435456,
        type: 'float',
        redop: 'sum',
        root: -1,
        out_of_place: { time: 4600.2, algbw: 233.41, busbw: 408.47, wrong: 3 },
        in_place: { time: 4590.0, algbw: 233.93, busbw: 409.38, wrong: 0 },
      },
    ],
  };
  const result = importMeasurementText(JSON.stringify(report, null, 1), { fileName: 'report.json' });
  const m = result.measurements[0];
  assert.equal(result.kind, 'nccl-tests');
  assert.equal(m.collective, 'allreduce');
  assert.equal(m.ranks, 8);
  assert.deepEqual(m.rows[1], { ...m.rows[1], bytes: 1073741824, timeUs: 4600.2, busbwGBps: 408.47, wrong: 3 });
  assert.equal(m.rows[1].inPlace?.timeUs, 4590);
});

test('NCCL kernel names of every era split into algorithm, protocol, op and dtype', () => {
  assert.deepEqual(parseNcclKernelName('ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)'), {
    collective: 'allreduce',
    algorithm: 'ring',
    protocol: 'LL',
    op: 'sum',
    dtype: 'float',
  });
  assert.deepEqual(
    parseNcclKernelName('ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)'),
    { collective: 'sendrecv', algorithm: 'ring', protocol: 'Simple', op: 'sum', dtype: 'int8_t' },
  );
  assert.deepEqual(parseNcclKernelName('ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)'), {
    collective: 'allgather',
    algorithm: 'ring',
    protocol: 'LL',
    op: undefined,
    dtype: undefined,
  });
  assert.deepEqual(
    parseNcclKernelName('ncclDevKernel_ReduceScatter_NVLS_SIMPLE_Sum_bf16(ncclDevKernelArgsStorage<4096ul>)'),
    { collective: 'reducescatter', algorithm: 'nvls', protocol: 'Simple', op: 'sum', dtype: 'bf16' },
  );
  assert.deepEqual(parseNcclKernelName('ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)'), {
    collective: 'unknown',
  });
  assert.equal(parseNcclKernelName('void at::native::vectorized_elementwise_kernel<4>(int)'), undefined);
});

test('the pure importers use no Node built-ins, so the extension host and webview can share them', async () => {
  const { readdirSync, readFileSync } = await import('node:fs');
  const dir = new URL('../../../src/native/import/', import.meta.url);
  for (const name of readdirSync(dir)) {
    const text = readFileSync(new URL(name, dir), 'utf8');
    assert.doesNotMatch(text, /from ['"](node:|fs|zlib|path|child_process)/, `${name} imports a Node module`);
  }
});

test('gzipped traces inflate through DecompressionStream when no gunzip is given', async () => {
  const { gzipSync } = await import('node:zlib');
  const { importMeasurementBytesAsync } = await import('../../../src/native/import/gzip');
  const trace = {
    distributedInfo: { rank: 1, world_size: 2 },
    traceEvents: [
      {
        ph: 'X',
        cat: 'kernel',
        name: 'ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)',
        ts: 10,
        dur: 5,
        args: { 'In msg nelems': 256, dtype: 'Float' },
      },
    ],
  };
  const result = await importMeasurementBytesAsync(gzipSync(JSON.stringify(trace)), { fileName: 't.json.gz' });
  assert.equal(result.kind, 'kineto');
  assert.deepEqual(
    result.measurements[0].rows.map((r) => [r.bytes, r.timeUs]),
    [[1024, 5]],
  );
  assert.equal(result.trace?.spans[0].rank, 1);
});

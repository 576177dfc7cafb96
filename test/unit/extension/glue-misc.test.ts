import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSystemChoice, statusBarText, systemPickItems } from '../../../src/extension/glue/system-choice';
import { refuseLargeFile, MAX_TRACE_BYTES } from '../../../src/extension/glue/file-limits';
import { traceMessages } from '../../../src/extension/glue/trace-chunks';
import { rowWarnings, presetScaling, gpuFamily, gpuMismatch } from '../../../src/extension/glue/compare';
import { asBytes, asMicros, presetSystem, resolveSystem, type Trace } from '../../../src/engine/index';

test('the system setting names a preset or a file', () => {
  assert.deepEqual(parseSystemChoice('DGX-H100'), { kind: 'preset', name: 'dgx-h100' });
  assert.deepEqual(parseSystemChoice('systems/box.system.yaml'), { kind: 'file', path: 'systems/box.system.yaml' });
  assert.deepEqual(parseSystemChoice('box.json'), { kind: 'file', path: 'box.json' });
});

test('the status bar shows the resolved system label, with the node count once, or a warning', () => {
  for (const nodes of [1, 2, 16]) {
    const label = resolveSystem(presetSystem('dgx-h100', { nodes })!).label;
    const text = statusBarText(label, true);
    assert.equal(text, `$(server) ${label}`);
    // The engine's label says the node count ("2×8 H100 ..."); no second "× 2 nodes" after it.
    if (nodes > 1) assert.ok(text.startsWith(`$(server) ${nodes}×8 H100`), text);
    assert.doesNotMatch(text, /nodes/, text);
  }
  assert.equal(statusBarText('', false), '$(warning) No system');
});

test('the system quick pick lists the current preset first', () => {
  const items = systemPickItems(
    [
      { name: 'dgx-a100', label: '8× A100' },
      { name: 'dgx-h100', label: '8× H100' },
    ],
    'DGX-H100',
  );
  assert.deepEqual(
    items.map((i) => [i.value, i.picked]),
    [
      ['dgx-h100', true],
      ['dgx-a100', false],
    ],
  );
});

test('a 2 GB trace is refused before reading, with a way forward', () => {
  const message = refuseLargeFile('big.json', 2 * 1024 ** 3, MAX_TRACE_BYTES, 'trace');
  assert.match(message ?? '', /^big\.json is 2\.0 GB; the timeline reads traces up to 256 MB/);
  assert.match(message ?? '', /Perfetto/);
  assert.equal(refuseLargeFile('small.json', 1000, MAX_TRACE_BYTES, 'trace'), undefined);
});

test('big traces are posted in chunks; small ones in one message', () => {
  const lanes = [{ id: 0, kind: 'rank' as const, label: 'rank 0' }];
  const span = {
    lane: 0,
    rank: 0,
    phase: 'exchange' as const,
    step: 0,
    channel: 0,
    chunk: 0,
    bytes: asBytes(1),
    links: [],
    startUs: asMicros(0),
    endUs: asMicros(1),
  };
  const trace = (n: number): Trace => ({
    metadata: { origin: 'simulated', title: 't', ranks: 1 },
    lanes,
    spans: Array.from({ length: n }, () => span),
  });
  assert.deepEqual(
    traceMessages(trace(3), undefined, 5).map((m) => m.type),
    ['trace'],
  );
  const chunked = traceMessages(trace(12), { uri: 'file:///t', label: 't' }, 5);
  assert.deepEqual(
    chunked.map((m) => m.type),
    ['traceBegin', 'traceChunk', 'traceChunk', 'traceChunk', 'traceEnd'],
  );
  const total = chunked.reduce((n, m) => n + (m.type === 'traceChunk' ? m.spans.length : 0), 0);
  assert.equal(total, 12);
  assert.equal(chunked[0].type === 'traceBegin' && chunked[0].totalSpans, 12);
});

test('flagged rows become warnings on their own lines; rows without a line or not flagged do not', () => {
  const rows = [
    { bytes: 2 ** 20, measuredBusbwGBps: 9, expectedBusbwGBps: 10, ratio: 0.9, flagged: false, line: 20 },
    { bytes: 2 ** 24, measuredBusbwGBps: 30, expectedBusbwGBps: 50, ratio: 0.6, flagged: true, line: 24 },
    { bytes: 2 ** 26, measuredBusbwGBps: 30, expectedBusbwGBps: 60, ratio: 0.5, flagged: true },
  ];
  assert.deepEqual(rowWarnings(rows, { label: '8× A100 NVSwitch', basis: 'log' }, 0.7), [
    {
      line: 23,
      message:
        '16 MiB: busbw 30.0 GB/s is 60% of the 50.0 GB/s the model expects on 8× A100 NVSwitch (below 70% of its speed).',
    },
  ]);
});

test('against hardware the file never names, a low busbw is no warning in Problems', () => {
  // The DeepSpeed comms log of the e2e run: no GPU named, compared with the selected 2×8 H100 as an assumption.
  const row = { bytes: 679 * 2 ** 20, measuredBusbwGBps: 141.2, expectedBusbwGBps: 358.9, ratio: 0.2, flagged: true };
  const onLine = { ...row, line: 12, threshold: 0.7 };
  assert.deepEqual(rowWarnings([onLine], { label: '2×8 H100 (assumed)', basis: 'assumed' }), []);
  // The same row against a system the log describes, or the GPU the file names, is a warning.
  assert.equal(rowWarnings([onLine], { label: '2×8 H100 (from the log)', basis: 'log' }).length, 1);
  assert.equal(rowWarnings([onLine], { label: '2×8 H100 (GPU from the file)', basis: 'file-gpu' }).length, 1);
});

test('a small, latency-bound size is judged in time, not in a busbw that prints as 0.0 GB/s', () => {
  const small = {
    bytes: 8,
    measuredBusbwGBps: 0.0002,
    expectedBusbwGBps: 0.001,
    ratio: 0.21,
    flagged: true,
    line: 5,
    measuredTimeUs: 52.1,
    expectedTimeUs: 10.9,
    threshold: 0.7,
  };
  const [warning] = rowWarnings([small], { label: '8× A100 NVSwitch', basis: 'file-gpu' });
  assert.equal(
    warning.message,
    '8 B: 52.1 µs, 4.8× the 10.9 µs the model expects on 8× A100 NVSwitch (below 70% of its speed).',
  );
  assert.doesNotMatch(warning.message, /GB\/s/);
});

test('a preset is stretched to the measured ranks, and a GPU mismatch is named', () => {
  assert.deepEqual(presetScaling(16, 2), { nodes: 2, gpusPerNode: 8 });
  assert.deepEqual(presetScaling(8, undefined), { nodes: 1, gpusPerNode: 8 });
  assert.equal(presetScaling(10, 4), undefined);
  // A file that names no node count keeps the selected box's GPUs: 16 ranks on an 8-GPU box are 2 nodes.
  assert.deepEqual(presetScaling(16, undefined, 8), { nodes: 2, gpusPerNode: 8 });
  assert.deepEqual(presetScaling(12, undefined, 8), { nodes: 1, gpusPerNode: 12 });
  assert.deepEqual(presetScaling(16, 1, 8), { nodes: 1, gpusPerNode: 16 });
  assert.deepEqual(
    ['NVIDIA A100-SXM4-40GB', 'NVIDIA H100 80GB HBM3', 'Tesla K80', 'RTX4090', 'NVIDIA GeForce RTX 3090'].map(
      gpuFamily,
    ),
    ['A100', 'H100', 'K80', 'RTX4090', 'RTX3090'],
  );
  assert.match(
    gpuMismatch(['NVIDIA A100-SXM4-40GB'], presetSystem('dgx-h100')!) ?? '',
    /ran on A100 GPUs but the selected system has H100/,
  );
  assert.equal(gpuMismatch(['NVIDIA H100 80GB HBM3'], presetSystem('dgx-h100')!), undefined);
  assert.equal(gpuMismatch([], presetSystem('dgx-h100')!), undefined);
});

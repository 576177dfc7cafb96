// Corrupt events in imports are dropped and counted, never allowed to rescale the rest: an NCCL kernel at an absurd
// time or with a non-finite time, an nccl-tests row of nan/inf, an NCCL log's impossible rank count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { importMeasurementText } from '../../../src/native/import/index';
import { dropImplausible } from '../../../src/native/import/corrupt-events';
import { parseSystemFile } from '../../../src/config/system-file';

const kernel = (ts: unknown, dur: unknown): object => ({
  ph: 'X',
  cat: 'kernel',
  name: 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)',
  pid: 0,
  tid: 7,
  ts,
  dur,
  args: { 'In msg nelems': 1024, dtype: 'Float', 'Collective name': 'allreduce', stream: 7 },
});

test('Kineto: kernels at absurd or non-finite times are dropped and counted; the real spans keep their times', () => {
  const good = [kernel(1.7e15, 10), kernel(1.7e15 + 100, 12), kernel(1.7e15 + 200, 14)];
  // 1e400 is Infinity to JSON.parse; the text is spliced in because JSON.stringify cannot write it.
  const text = JSON.stringify({
    traceEvents: [...good, kernel(1e22, 10), kernel('nan', 10), kernel(-5e20, 10), kernel(1.7e15 + 300, 1e13)],
  }).replace(']}', ',' + JSON.stringify(kernel(1.7e15, 1)).replace('"dur":1', '"dur":1e400') + ']}');
  const result = importMeasurementText(text, { fileName: 'trace.json' });
  assert.ok(
    result.warnings.some((w) => /^5 NCCL events dropped as corrupt/.test(w)),
    result.warnings.join('\n'),
  );
  const spans = result.trace!.spans;
  assert.deepEqual(
    spans.map((s) => [s.startUs, s.endUs - s.startUs]),
    [
      [0, 10],
      [100, 12],
      [200, 14],
    ],
  );
  const clean = importMeasurementText(JSON.stringify({ traceEvents: good }), { fileName: 'trace.json' });
  assert.ok(!clean.warnings.some((w) => /dropped/.test(w)));
});

test('the plausibility window is anchored at the median, so corrupt events cannot move it', () => {
  const events = [
    ...[1, 2, 3, 4, 5].map((i) => ({ startUs: 1e15 + i, durationUs: 1 })),
    { startUs: 0, durationUs: 1 },
    { startUs: 1e15, durationUs: -1 },
  ];
  const { kept, dropped } = dropImplausible(events);
  assert.equal(dropped, 2);
  assert.equal(kept.length, 5);
});

test('nccl-tests: rows with nan or inf are dropped and counted, the other sizes stay', () => {
  const header =
    '# nccl-tests version 2.17.8\n#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n';
  const rows = [
    '        8  2  float  sum  -1  10.0  0.00  0.00  0  10.0  0.00  0.00  0',
    '     1024  256  float  sum  -1  nan  inf  inf  0  11.0  0.09  0.09  0',
    '  1048576  262144  float  sum  -1  100.0  10.49  10.49  0  100.0  10.49  10.49  0',
  ];
  const result = importMeasurementText(`${header}${rows.join('\n')}\n# Avg bus bandwidth    : 5.2\n`, {
    fileName: 'all_reduce_perf.txt',
  });
  assert.deepEqual(
    result.measurements[0].rows.map((r) => r.bytes),
    [8, 1048576],
  );
  assert.ok(
    result.warnings.some((w) => /^1 allreduce rows dropped as corrupt \(nan or inf/.test(w)),
    result.warnings.join('\n'),
  );
});

test('an NCCL log with an impossible rank count gives a system simulate accepts, and says what it ignored', () => {
  const log = [
    'host1:100:100 [0] NCCL INFO NCCL version 2.21.5+cuda12.4',
    'host1:100:100 [0] NCCL INFO comm 0x1 rank 0 nRanks 999999999 nNodes 1 localRanks 8 localRank 0 MNNVL 0',
    'host1:100:100 [0] NCCL INFO Channel 00/02 : 0 1 2 3 4 5 6 7',
  ].join('\n');
  const result = importMeasurementText(log, { fileName: 'nccl-debug.log' });
  assert.ok(result.system, 'a system is derived');
  const text = JSON.stringify(result.system);
  assert.doesNotThrow(() => parseSystemFile(text, 'derived.system.json'));
  assert.ok(JSON.stringify(result).includes('ignored as corrupt'), JSON.stringify(result).slice(0, 600));
});

test('Kineto: each collective takes its group size from its own kernels, else the world size', () => {
  const sized = (ts: number, nelems: number, collective: string, groupSize?: number): object => ({
    ...kernel(ts, 10),
    name: `ncclDevKernel_${collective === 'allreduce' ? 'AllReduce_Sum_f32' : 'AllGather'}_RING_LL(ncclDevComm*, unsigned long, ncclWork*)`,
    args: {
      'In msg nelems': nelems,
      dtype: 'Float',
      'Collective name': collective,
      stream: 7,
      ...(groupSize ? { 'Group size': groupSize } : {}),
    },
  });
  const events = [
    sized(1000, 1024, 'allreduce'),
    sized(2000, 2048, 'allreduce', 4),
    sized(3000, 4096, 'allreduce'),
    sized(4000, 1024, 'allgather'),
    sized(5000, 2048, 'allgather'),
  ];
  const text = JSON.stringify({ distributedInfo: { rank: 0, world_size: 8 }, traceEvents: events });
  const result = importMeasurementText(text, { fileName: 'trace.json' });
  const ranks = Object.fromEntries(result.measurements.map((m) => [m.collective, [m.ranks, m.rows.length]]));
  assert.deepEqual(ranks, { allreduce: [4, 3], allgather: [8, 2] });
});

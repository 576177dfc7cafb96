// Every real file in ../shared/fixtures-real imports without error and gives the sizes, times and ranks it holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { importMeasurementBytes, type ImportResult } from '../../../src/native/import/index';
import { resolveSystem, simulateCollective, asBytes } from '../../../src/engine/index';
import { parseSystemFile } from '../../../src/config/system-file';
import { needShared } from '../requirements';

const FIXTURES = resolve(import.meta.dirname, '..', '..', '..', '..', 'shared', 'fixtures-real');
const skip = needShared(FIXTURES, '../shared/fixtures-real');

function load(name: string): ImportResult {
  return importMeasurementBytes(readFileSync(resolve(FIXTURES, name)), {
    fileName: name,
    gunzip: (b) => gunzipSync(b),
  });
}

test('every fixture imports without error', { skip }, () => {
  const files = readdirSync(FIXTURES).filter((f) => !f.endsWith('.md'));
  assert.ok(files.length >= 28, `expected the 28 fixtures, found ${files.length}`);
  for (const file of files) {
    const result = load(file);
    assert.ok(result.measurements.length > 0 || result.trace, `${file} gave nothing`);
    const holdsTimes =
      result.measurements.some((m) => m.rows.length > 0) || (result.trace?.spans.length ?? 0) > 0 || result.system;
    assert.ok(holdsTimes, `${file} gave no rows, spans or system`);
  }
});

/** [file, collective, ranks, row count, first bytes, last bytes, last out-of-place time µs]. */
const NCCL_TESTS: [string, string, number, number, number, number, number][] = [
  ['nccl-tests-v100-12gpu-2020.txt', 'allreduce', 12, 31, 8, 8589934592, 127453],
  ['nccl-tests-v100-12gpu-2020-all_gather.txt', 'allgather', 12, 31, 0, 8589934560, 106773],
  ['nccl-tests-v100-12gpu-2020-reduce_scatter.txt', 'reducescatter', 12, 31, 0, 8589934560, 122722],
  ['nccl-tests-k80-4gpu-2022.txt', 'allreduce', 4, 7, 33554432, 2147483648, 1258554],
  ['nccl-tests-a100-8gpu-2021.txt', 'allreduce', 8, 34, 0, 8589934592, 63896],
  ['nccl-tests-t4-2gpu-2023.txt', 'allreduce', 2, 31, 0, 1073741824, 344981],
  ['nccl-tests-a100-8gpu-2024.txt', 'allreduce', 8, 29, 4, 1073741824, 51310],
  ['nccl-tests-a100-16gpu-2024-all_gather.txt', 'allgather', 16, 29, 0, 1073741824, 5723.1],
  ['nccl-tests-a100-2160gpu-2024.txt', 'allreduce', 2160, 29, 4, 1073741824, 73737],
  ['nccl-tests-h100-16gpu-2025.txt', 'allreduce', 16, 31, 8, 8589934592, 47535],
  ['nccl-tests-gh200-8gpu-2026.txt', 'allreduce', 8, 28, 1, 134217728, 2309.49],
  ['nccl-tests-gh200-16gpu-2026-wrong-truncated.txt', 'allreduce', 16, 28, 1, 134217728, 2800.93],
  ['nccl-tests-rtx5090-2rank-2026-broadcast.txt', 'broadcast', 2, 9, 1024, 67108864, 28066.8],
  ['nccl-debug-a100-2gpu-graph-tuning.log', 'allreduce', 2, 11, 8388608, 8589934592, 39658],
  ['nccl-debug-a100-2node-graph-ib.log', 'gather', 2, 85, 134217728, 11408506880, 522721],
];

for (const [file, collective, ranks, count, firstBytes, lastBytes, lastTimeUs] of NCCL_TESTS) {
  test(`nccl-tests table: ${file}`, { skip }, () => {
    const m = load(file).measurements[0];
    assert.equal(m.collective, collective);
    assert.equal(m.ranks, ranks);
    assert.equal(m.rows.length, count);
    assert.equal(m.rows[0].bytes, firstBytes);
    assert.equal(m.rows.at(-1)!.bytes, lastBytes);
    assert.equal(m.rows.at(-1)!.timeUs, lastTimeUs);
  });
}

test('nccl-tests: two tests in one log, banner versions, in-place twins', { skip }, () => {
  const r = load('nccl-tests-h100-2gpu-2026.txt');
  assert.deepEqual(
    r.measurements.map((m) => m.collective),
    ['allreduce', 'sendrecv'],
  );
  const [ar, sr] = r.measurements;
  assert.equal(ar.meta.ncclVersion, '2.29.2');
  assert.equal(ar.meta.ncclTestsVersion, '2.17.8');
  assert.deepEqual(ar.rows[0], {
    ...ar.rows[0],
    bytes: 33554432,
    timeUs: 837.47,
    algbwGBps: 40.07,
    busbwGBps: 40.07,
    wrong: 0,
  });
  assert.equal(ar.rows[0].inPlace?.timeUs, 849.7);
  assert.equal(sr.rows.at(-1)!.timeUs, 12322);
  assert.equal(sr.rows[0].inPlace?.wrong, undefined, 'N/A #wrong is absent, not zero');
});

test('nccl-tests: #wrong > 0 and truncation are reported', { skip }, () => {
  const r = load('nccl-tests-gh200-16gpu-2026-wrong-truncated.txt');
  const m = r.measurements[0];
  assert.equal(m.meta.truncated, true);
  const bad = m.rows.find((row) => row.bytes === 2097152)!;
  assert.equal(bad.wrong, 18134);
  assert.equal(bad.inPlace?.wrong, 9609);
  assert.equal(m.meta.wrongRows, 6);
  assert.ok(r.warnings.some((w) => /truncated/.test(w)));
  assert.ok(r.warnings.some((w) => /#wrong/.test(w)));
});

test('nccl-tests: failed validation of the old layout', { skip }, () => {
  const m = load('nccl-tests-v100-12gpu-2020-all_gather.txt').measurements[0];
  assert.equal(m.meta.validation, 'FAILED');
  assert.equal(m.meta.outOfBounds, 4);
  assert.equal(m.rows.at(-1)!.maxError, 1);
});

test('NCCL logs: version, ranks, channels and a system', { skip }, () => {
  const a = load('nccl-debug-a100-2gpu-graph-tuning.log');
  assert.equal(a.kind, 'nccl-log');
  const meta = a.measurements[0].meta;
  assert.equal(meta.ncclVersion, '2.27.7+cuda13.0');
  assert.equal(meta.channels, 24);
  assert.deepEqual(a.system, {
    name: 'from NCCL log nccl-debug-a100-2gpu-graph-tuning.log',
    gpu: 'A100-PCIe',
    nodes: 1,
    gpusPerNode: 2,
    intraNode: 'nvlink-bridge',
    nvls: false,
    ncclVersion: '2.27.7',
  });
  assert.ok((meta.tuningChoices as string[]).includes('AllReduce 8388608 B: RING/SIMPLE'));

  const ofi = load('nccl-debug-a100-8gpu-multinode-ofi.log');
  assert.equal(ofi.measurements[0].ranks, 8);
  assert.equal(ofi.system?.nodes, 2);
  assert.equal(ofi.system?.gpusPerNode, 4);
  assert.equal(ofi.system?.nvls, false);
  assert.ok(ofi.system?.nic);
  // Polaris sets NCCL_NET_GDR_LEVEL=PHB and prints no graph lines: the level is read, the path left at its default.
  assert.equal(ofi.system?.nic?.gdrLevel, 'PHB');
  assert.equal(ofi.system?.nic?.path, undefined);

  const ib = load('nccl-debug-a100-2node-graph-ib.log');
  assert.equal(ib.measurements[0].meta.ncclVersion, '2.16.5+cuda11.8');
  // "Pattern 4, …, type LOC/PHB" and "NCCL_NET_GDR_LEVEL set by environment to SYS": the path NCCL's LL128 rule reads.
  assert.deepEqual(ib.system?.nic, { gbps: 200, perNode: 2, path: 'PHB', gdrLevel: 'SYS' });

  const tuning = load('nccl-debug-rtx5090-2rank-tuning.log');
  assert.equal(tuning.measurements[0].meta.ncclVersion, '2.29.7+cuda12.9');
  assert.equal(tuning.system?.p2p, false, 'NCCL_P2P_DISABLE=1 is read');
  assert.ok((tuning.measurements[0].meta.tuningChoices as string[]).includes('Broadcast 1024 B: RING/LL'));
});

test('Kineto: NCCL kernels per rank with algorithm, protocol and sizes', { skip }, () => {
  const full = load('kineto-a100-2rank-nccl2.17-full.json.gz');
  assert.equal(full.kind, 'kineto');
  const kernels = full.trace!.spans.filter((s) => s.phase === 'collective');
  assert.equal(kernels.length, 21);
  const first = kernels.find(
    (s) =>
      s.args?.kernel === 'ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)' &&
      s.bytes === 26550272,
  );
  assert.ok(first, 'the 6637568-float all-reduce kernel is there');
  assert.equal(first.args?.algorithm, 'ring');
  assert.equal(first.args?.protocol, 'LL');
  assert.equal(first.args?.op, 'sum');
  assert.equal(first.args?.dtype, 'float');
  assert.ok(Math.abs(first.endUs - first.startUs - 2636.669) < 1e-6);
  assert.equal(full.measurements.find((m) => m.collective === 'allreduce')?.ranks, 2);

  const cpu = load('kineto-a100-2rank-nccl2.17-cpu-excerpt.json');
  assert.deepEqual(
    cpu.trace!.spans.map((s) => s.bytes),
    [2049000 * 4, 7875584 * 4],
  );
  assert.equal(cpu.trace!.spans.length, 2);

  const b200 = load('kineto-b200-8rank-nccl2.27-allgather-excerpt.json').measurements[0];
  assert.equal(b200.collective, 'allgather');
  assert.equal(b200.ranks, 8);
  assert.equal(b200.rows[0].bytes, 201088 * 2);
  assert.equal(b200.rows[0].timeUs, 21.953);

  const rccl = load('kineto-mi300-8rank-rccl-generic-excerpt.json');
  assert.equal(
    rccl.measurements.find((m) => m.collective === 'allreduce')?.rows.some((r) => r.bytes === 2873320 * 2),
    true,
  );

  const old = load('kineto-a100-8rank-2022-ncclworkelem-gpu-excerpt.json');
  const oldNccl = old.trace!.spans.filter((s) => s.phase === 'collective');
  assert.deepEqual(
    oldNccl.map((s) => s.rank),
    [3, 3],
  );
  assert.deepEqual(
    oldNccl.map((s) => s.endUs - s.startUs).sort((a, b) => a - b),
    [1808, 5847],
  );

  const sampled = load('kineto-128rank-sendrecv-sampled-rank0.json.gz');
  assert.equal(sampled.measurements[0].ranks, 128);
  assert.equal(sampled.trace!.spans.filter((s) => s.phase === 'collective').length, 10);
});

test('DeepSpeed comms_logger: verbose lines and summaries', { skip }, () => {
  const v = load('deepspeed-commslogger-verbose-2022.log');
  assert.equal(v.kind, 'deepspeed');
  const rs = v.measurements.find((m) => m.collective === 'reducescatter')!;
  assert.equal(rs.ranks, 16);
  assert.equal(rs.rows[0].bytes, Math.round(678.86 * 1024 * 1024));
  assert.equal(rs.rows[0].timeUs, 9460);
  assert.equal(rs.rows[0].busbwGBps, 1129.23 / 8);
  assert.equal(v.measurements.find((m) => m.collective === 'allgather')!.rows.length, 2);

  const s = load('deepspeed-commslogger-summary-debug-2022.txt');
  const bc = s.measurements.find((m) => m.collective === 'broadcast')!;
  assert.deepEqual(
    bc.rows.map((r) => [r.bytes, r.timeUs, r.calls]),
    [
      [2048, 60, 146],
      [Math.round(98.25 * 1024 * 1024), 8540600, 1],
    ],
  );
  assert.deepEqual(bc.meta.callers, ['_broadcast_model']);
});

test('every NCCL log gives a system file the config parser and the simulator accept', { skip }, () => {
  const logs = readdirSync(FIXTURES).filter(
    (f) => /^nccl-debug-.*\.log$/.test(f) || f === 'nccl-tests-t4-2gpu-2023.txt',
  );
  assert.equal(logs.length, 5);
  for (const file of logs) {
    const { system } = load(file);
    assert.ok(system, `${file} gives a system`);
    const spec = parseSystemFile(JSON.stringify(system, null, 2), `${file}.system.json`);
    const resolved = resolveSystem(spec);
    assert.ok(resolved.ranks >= 1);
    assert.ok(
      simulateCollective(resolved, { bytes: asBytes(1 << 20) }).timeUs > 0,
      `${file}: the simulator runs on it`,
    );
  }
});

test('Kineto traces of two ranks merge onto one time axis', { skip }, async () => {
  const { mergeRankTraces } = await import('../../../src/native/import/merge');
  const a = load('kineto-a100-2rank-nccl2.17-gpu-excerpt.json');
  const b = load('kineto-a100-8rank-2022-ncclworkelem-gpu-excerpt.json');
  const merged = mergeRankTraces([
    { name: 'a', result: a },
    { name: 'b', result: b },
  ]);
  assert.deepEqual([...new Set(merged.trace!.spans.map((s) => s.rank))].sort(), [0, 3]);
  assert.equal(merged.trace!.spans.length, a.trace!.spans.length + b.trace!.spans.length);
  // Each file's spans keep their durations; the later file is shifted by the difference of the absolute origins.
  const shift = Number(b.trace!.metadata.facts!.originUs) - Number(merged.trace!.metadata.facts!.originUs);
  const first = merged.trace!.spans.find((s) => s.rank === 3)!;
  assert.equal(first.startUs, b.trace!.spans[0].startUs + shift);
  assert.throws(
    () =>
      mergeRankTraces([
        { name: 'a', result: a },
        { name: 'log', result: load('nccl-tests-k80-4gpu-2022.txt') },
      ]),
    /log is nccl-tests/,
  );
});

test('Kineto: compute kernels are kept on their stream beside the NCCL kernels, each real trace', { skip }, () => {
  for (const file of readdirSync(FIXTURES).filter((f) => /^kineto-.*\.json(\.gz)?$/.test(f))) {
    const text = file.endsWith('.gz')
      ? gunzipSync(readFileSync(join(FIXTURES, file))).toString('utf8')
      : readFileSync(join(FIXTURES, file), 'utf8');
    const events = (JSON.parse(text) as { traceEvents: { cat?: string; name?: string; ts?: number }[] }).traceEvents;
    const computeEvents = events.filter(
      (e) => e?.cat === 'kernel' && typeof e.name === 'string' && !/^nccl(Dev)?Kernel_/.test(e.name),
    );
    const { trace } = load(file);
    const compute = trace!.spans.filter((s) => s.phase === 'compute');
    assert.equal(compute.length, computeEvents.length, `${file}: every compute kernel is drawn`);
    // Each sits on its stream's lane, the lane the NCCL kernels of that stream use.
    for (const span of compute) assert.match(trace!.lanes[span.lane].label, /^rank \d+ · stream \S+$/, file);
    assert.ok(compute.every((s) => s.startUs >= 0 && s.endUs >= s.startUs));
  }
});

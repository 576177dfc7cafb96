// `sweep`: all_reduce_perf's table (read back by the project's own nccl-tests importer) and the --json rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseNcclTests } from '../../../src/native/import/nccl-tests';
import { ncclTime } from '../../../src/cli/nccl-tests-table';
import { needSharedDir, SHARED_ROOT } from '../requirements';
import { runCli } from './run-cli';

test('sweep --json prints one row per size with exactly the documented keys', async () => {
  const run = await runCli(['sweep', '--system', 'dgx-h100', '--min-bytes', '8', '--max-bytes', '8G', '--json']);
  assert.equal(run.code, 0, run.stderr);
  const rows = JSON.parse(run.stdout) as { bytes: number; timeUs: number; busbwGBps: number }[];
  assert.equal(rows.length, 31, '8 B to 8 GiB in ×2 steps');
  assert.equal(rows[0].bytes, 8);
  assert.equal(rows.at(-1)?.bytes, 8 * 2 ** 30);
  for (const row of rows)
    assert.deepEqual(Object.keys(row).sort(), ['algbwGBps', 'algorithm', 'busbwGBps', 'bytes', 'protocol', 'timeUs']);
  for (let i = 1; i < rows.length; i++)
    assert.ok(rows[i].timeUs >= rows[i - 1].timeUs * 0.999, `time grows with size at ${rows[i].bytes}`);
});

/** The header and one row of all_reduce_perf from nccl-tests 2.17.8 (its printf formats, as a real run prints them). */
const REAL_HEADER = [
  '#                                                              out-of-place                       in-place          ',
  '#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong ',
  '#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         ',
];
const REAL_ROW =
  '    33554432       4194304    double     sum      -1   837.47   40.07   40.07       0   849.70   39.49   39.49       0';

test(
  'the expected header is the one of a real all_reduce_perf log in ../shared',
  { skip: needSharedDir('fixtures-real') },
  () => {
    const real = readFileSync(join(SHARED_ROOT, 'fixtures-real', 'nccl-tests-h100-2gpu-2026.txt'), 'utf8').split('\n');
    const at = real.findIndex((l) => l.includes('out-of-place'));
    assert.deepEqual(real.slice(at, at + 3), REAL_HEADER);
    assert.equal(real[at + 3], REAL_ROW);
  },
);

test("sweep prints all_reduce_perf's header lines byte for byte, as a real nccl-tests 2.17 log has them", async () => {
  const run = await runCli([
    'sweep',
    '--system',
    'dgx-a100',
    '--min-bytes',
    '1K',
    '--max-bytes',
    '1M',
    '--factor',
    '4',
  ]);
  assert.equal(run.code, 0, run.stderr);
  const lines = run.stdout.split('\n');
  const header = lines.findIndex((l) => l.includes('out-of-place'));
  assert.ok(header > 0);
  assert.deepEqual(lines.slice(header, header + 3), REAL_HEADER);
  const data = lines.filter((l) => /^\s+\d/.test(l));
  assert.deepEqual(
    data.map((l) => Number(l.trim().split(/\s+/)[0])),
    [1024, 4096, 16384, 65536, 262144, 1048576],
  );
  // Every row has the 13 cells of a real row, in the same character columns.
  for (const row of data) {
    const cells = row.trim().split(/\s+/);
    assert.equal(cells.length, 13, row);
    assert.deepEqual([cells[1], cells[2], cells[3], cells[4], cells[8], cells[12]].slice(1), [
      'float',
      'sum',
      '-1',
      'N/A',
      'N/A',
    ]);
    assert.equal(row.length, REAL_ROW.length, 'as wide as a real row');
  }
  assert.equal(data[0].trim().split(/\s+/)[1], '256', 'count = bytes / 4 for float');
  assert.ok(lines.some((l) => /^# Avg bus bandwidth {4}: \d+(\.\d+)? $/.test(l)));
});

test('the importer reads sweep output as an all_reduce_perf log with the same numbers, and names it a prediction', async () => {
  const args = [
    'sweep',
    '--system',
    'dgx-h100',
    '--nodes',
    '2',
    '--min-bytes',
    '8',
    '--max-bytes',
    '4G',
    '--dtype',
    'bf16',
  ];
  const [table, json] = await Promise.all([runCli(args), runCli([...args, '--json'])]);
  assert.equal(table.code, 0, table.stderr);
  const rows = JSON.parse(json.stdout) as { bytes: number; timeUs: number; algbwGBps: number; busbwGBps: number }[];
  const { measurements, warnings } = parseNcclTests(table.stdout);
  assert.equal(measurements.length, 1);
  const [m] = measurements;
  assert.equal(m.collective, 'allreduce');
  assert.equal(m.ranks, 16);
  assert.equal(m.meta.prediction, true);
  assert.ok(
    warnings.some((w) => /prediction .* not a measurement/.test(w)),
    warnings.join('\n'),
  );
  assert.equal(m.rows.length, rows.length);
  m.rows.forEach((imported, i) => {
    const predicted = rows[i];
    assert.equal(imported.bytes, predicted.bytes);
    assert.equal(imported.count, predicted.bytes / 2);
    assert.equal(imported.dtype, 'bfloat16');
    // The numbers as nccl-tests prints them: time in 7 characters, bandwidths with two decimals.
    assert.equal(imported.timeUs, Number(ncclTime(predicted.timeUs)));
    assert.equal(imported.algbwGBps, Number(predicted.algbwGBps.toFixed(2)));
    assert.equal(imported.busbwGBps, Number(predicted.busbwGBps.toFixed(2)));
    assert.ok(Math.abs(imported.timeUs - predicted.timeUs) <= 0.5, 'the printed time is the prediction, rounded');
    assert.deepEqual(imported.inPlace, {
      timeUs: imported.timeUs,
      algbwGBps: imported.algbwGBps,
      busbwGBps: imported.busbwGBps,
    });
    assert.equal(imported.wrong, undefined, '#wrong is N/A');
  });
  const average = rows.reduce((sum, r) => sum + r.busbwGBps, 0) / rows.length;
  assert.equal(m.meta.avgBusbwGBps, Number(average.toPrecision(6)));
});

test('import says that a sweep output is a prediction, not a measurement', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-sweep-'));
  const file = join(dir, 'prediction.txt');
  const sweep = await runCli(['sweep', '--system', 'dgx-a100', '--max-bytes', '1M']);
  writeFileSync(file, sweep.stdout);
  const run = await runCli(['import', file]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /a prediction by collective-profiler sweep \S+ \(not a measurement\): allreduce on 8 ranks/);
  assert.doesNotMatch(run.stdout, /allgather/);
});

test('ncclTime keeps two decimals while they fit in 7 characters, as nccl-tests 2.17 does', () => {
  assert.deepEqual([26.954, 837.474, 2309.494, 12322.04, 123456.4].map(ncclTime), [
    '26.95',
    '837.47',
    '2309.49',
    '12322.0',
    '123456',
  ]);
});

test('sweep --dtype and --nodes change the table', async () => {
  const run = await runCli([
    'sweep',
    '--system',
    'dgx-h100',
    '--nodes',
    '2',
    '--min-bytes',
    '1M',
    '--max-bytes',
    '1M',
    '--dtype',
    'bf16',
  ]);
  assert.equal(run.code, 0, run.stderr);
  const row = run.stdout.split('\n').find((l) => !l.startsWith('#') && l.trim() !== '') ?? '';
  assert.deepEqual(row.trim().split(/\s+/).slice(0, 3), ['1048576', '524288', 'bfloat16']);
  assert.match(run.stdout, /16 ranks/);
});

test('sweep prints the same bytes on worker threads as with --jobs 1, and rejects --jobs 0', async () => {
  const args = [
    'sweep',
    '--system',
    'dgx-h100',
    '--nodes',
    '3',
    '--min-bytes',
    '8',
    '--max-bytes',
    '1G',
    '--factor',
    '8',
  ];
  const serial = await runCli([...args, '--jobs', '1']);
  const parallel = await runCli([...args, '--jobs', '2']);
  assert.equal(serial.code, 0, serial.stderr);
  assert.equal(parallel.code, 0, parallel.stderr);
  assert.equal(parallel.stdout, serial.stdout);
  const json = await runCli([...args, '--jobs', '2', '--json']);
  const jsonSerial = await runCli([...args, '--jobs', '1', '--json']);
  assert.equal(json.stdout, jsonSerial.stdout);
  const zero = await runCli([...args, '--jobs', '0']);
  assert.equal(zero.code, 2);
  assert.match(zero.stderr, /--jobs/);
});

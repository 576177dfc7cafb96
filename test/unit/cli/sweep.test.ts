// `sweep`: the nccl-tests style table and the --json rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
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

test('sweep prints an nccl-tests style table with sizes, counts, types and bandwidths', async () => {
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
  const lines = run.stdout.trimEnd().split('\n');
  assert.match(
    lines.find((l) => l.includes('size')) ?? '',
    /size\s+count\s+type\s+time\s+algbw\s+busbw\s+algorithm\s+protocol/,
  );
  const data = lines.filter((l) => !l.startsWith('#'));
  assert.deepEqual(
    data.map((l) => Number(l.trim().split(/\s+/)[0])),
    [1024, 4096, 16384, 65536, 262144, 1048576],
  );
  const first = data[0].trim().split(/\s+/);
  assert.equal(first[1], '256', 'count = bytes / 4 for float');
  assert.equal(first[2], 'float');
  assert.match(lines.at(-1) ?? '', /^# Avg bus bandwidth\s+: \d/);
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

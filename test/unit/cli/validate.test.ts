// `validate` end to end: the calibration table, JSON rows, and clear errors for a bad folder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ROOT, runCli } from './run-cli';
import { needShared } from '../requirements';

const SHARED = resolve(ROOT, '..', 'shared', 'calibration');
const skip = needShared(join(SHARED, 'nccl-tests'), 'the calibration datasets');

test('validate prints a verdict per dataset and exits 0 when every judged dataset passes', { skip }, async () => {
  const run = await runCli(['validate', '--calibration-dir', SHARED]);
  assert.equal(run.code, 0, run.stderr + run.stdout);
  assert.match(run.stdout, /a100-8gpu-nvswitch-1node-azure-ndv4\s+8\s+[\d.]+%\s+[\d.]+%\s+PASS/);
  assert.match(run.stdout, /doca-suspect.*suspect \(not judged\)/);
  assert.match(run.stdout, /judged datasets pass/);
});

test('validate --json gives per-row measured and simulated busbw', { skip }, async () => {
  const run = await runCli(['validate', '--calibration-dir', SHARED, '--json']);
  const rows = JSON.parse(run.stdout) as {
    dataset: string;
    largeMedianPct: number | null;
    rows: { measuredBusbwGBps: number; simulatedBusbwGBps: number }[];
  }[];
  assert.ok(rows.length >= 9);
  assert.ok(
    rows.every((r) => r.rows.length > 0 && r.rows.every((x) => x.measuredBusbwGBps > 0 && x.simulatedBusbwGBps > 0)),
  );
});

test('validate derives a system from the description when no system file exists, and rejects bad input', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-validate-'));
  writeFileSync(
    join(dir, 'my-run.json'),
    JSON.stringify({
      gpu: 'H100 SXM 80GB',
      gpus_per_node: 8,
      nodes: 1,
      total_ranks: 8,
      interconnect: 'NVLink 4 through NVSwitch',
      env: {},
      suspect: false,
      rows: [{ bytes: 1073741824, time_us: 4100, busbw_GBps: 458.3 }],
    }),
  );
  const run = await runCli(['validate', '--calibration-dir', dir, '--systems-dir', join(dir, 'none')]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /my-run\s+8/);
  const missing = await runCli(['validate', '--calibration-dir', join(dir, 'nope')]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /not a folder/);
  writeFileSync(join(dir, 'broken.json'), '{ not json');
  const broken = await runCli(['validate', '--calibration-dir', dir, '--systems-dir', join(dir, 'none')]);
  assert.equal(broken.code, 2);
  assert.match(broken.stderr, /broken\.json: not valid JSON/);
});

test('validate names the dataset when its rows cannot be compared', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-validate-'));
  writeFileSync(
    join(dir, 'no-ranks.json'),
    JSON.stringify({ gpu: 'A100 SXM4', gpus_per_node: 8, nodes: 1, interconnect: 'NVSwitch', rows: [] }),
  );
  const run = await runCli(['validate', '--calibration-dir', dir, '--systems-dir', join(dir, 'none')]);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /no-ranks\.json: dataset has no total_ranks/);
});

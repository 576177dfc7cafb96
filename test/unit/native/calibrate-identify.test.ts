// calibrate on synthetic runs made by the simulator itself with one hidden change: it recovers the changed
// bandwidth, and leaves alone what the measured sizes cannot tell (launch cost and hop latency on 1 GiB rows).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { presetSystem, simulateCollective, type SystemSpec } from '../../../src/engine/index';
import { calibrateSystem } from '../../../src/native/calibrate';
import type { Measurement } from '../../../src/native/import/model';

const GiB = 1 << 30;
const dgx: SystemSpec = presetSystem('dgx-h100')!;

function runOn(spec: SystemSpec, sizes: number[]): Measurement {
  return {
    kind: 'nccl-tests', collective: 'allreduce', ranks: 8,
    rows: sizes.map((bytes) => {
      const r = simulateCollective(spec, { bytes });
      return { bytes, timeUs: r.timeUs, algbwGBps: r.algbwGBps, busbwGBps: r.busbwGBps };
    }),
    meta: {},
  };
}

test('large sizes only: NVLink is fitted to the hidden value, launch and NVLink latency are not fitted', () => {
  const hidden: SystemSpec = { ...dgx, overrides: { nvlinkGBpsPerLink: 15 } };
  const result = calibrateSystem(runOn(hidden, [GiB, 2 * GiB, 4 * GiB]), dgx);
  assert.ok(result.medianErrorBefore > 0.2, `the unfitted system is off (${result.medianErrorBefore})`);
  assert.ok(result.medianErrorAfter < 0.01, `fitted error ${result.medianErrorAfter}`);
  const nvlink = result.system.overrides?.nvlinkGBpsPerLink ?? 0;
  assert.ok(Math.abs(nvlink / 15 - 1) < 0.03, `NVLink fitted to ${nvlink} GB/s per link`);
  assert.deepEqual([...result.unidentified].sort(), ['launchUs', 'nvlinkLatencyUs']);
  assert.equal(result.system.overrides?.launchUs, undefined);
  assert.equal(result.system.overrides?.nvlinkLatencyUs, undefined);
});

test('a sweep from 8 B: the launch cost is identifiable and fitted', () => {
  const hidden: SystemSpec = { ...dgx, overrides: { launchUs: 90 } };
  const sizes = Array.from({ length: 12 }, (_, i) => 8 * 4 ** i);
  const result = calibrateSystem(runOn(hidden, sizes), dgx);
  assert.ok(!result.unidentified.includes('launchUs'));
  assert.ok(result.medianErrorAfter < result.medianErrorBefore / 2, `${result.medianErrorBefore} -> ${result.medianErrorAfter}`);
  const launch = result.system.overrides?.launchUs ?? 0;
  assert.ok(launch > 60 && launch < 120, `launch fitted to ${launch} µs`);
});

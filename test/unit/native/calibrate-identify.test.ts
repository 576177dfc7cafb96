// calibrate on synthetic runs made by the simulator itself with one hidden change: it recovers the changed
// bandwidth, and leaves alone what the measured sizes cannot tell (launch cost and hop latency on 1 GiB rows).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  presetSystem,
  simulateCollective,
  type SystemSpec,
  asBytes,
  asGBps,
  asMicros,
} from '../../../src/engine/index';
import { calibrateSystem } from '../../../src/native/calibrate';
import type { Measurement } from '../../../src/native/import/model';

const GiB = 1 << 30;
const dgx: SystemSpec = presetSystem('dgx-h100')!;

function runOn(spec: SystemSpec, sizes: number[]): Measurement {
  return {
    kind: 'nccl-tests',
    collective: 'allreduce',
    ranks: 8,
    rows: sizes.map((bytes) => {
      const r = simulateCollective(spec, { bytes: asBytes(bytes) });
      return { bytes: r.bytes, timeUs: r.timeUs, algbwGBps: r.algbwGBps, busbwGBps: r.busbwGBps };
    }),
    meta: {},
  };
}

// 18 GB/s per link is 0.72 of NVLink 4's 25 GB/s line rate: slow, but inside what a healthy system reaches.
test('large sizes only: NVLink is fitted to the hidden value, launch and NVLink latency are not fitted', () => {
  const hidden: SystemSpec = { ...dgx, overrides: { nvlinkGBpsPerLink: asGBps(18) } };
  const result = calibrateSystem(runOn(hidden, [GiB, 2 * GiB, 4 * GiB]), dgx);
  assert.ok(result.medianErrorBefore > 0.1, `the unfitted system is off (${result.medianErrorBefore})`);
  assert.ok(result.medianErrorAfter < 0.01, `fitted error ${result.medianErrorAfter}`);
  const nvlink = result.system.overrides?.nvlinkGBpsPerLink ?? 0;
  // NCCL's channel search steps through discrete speeds, so every value on the hidden one's step fits as well.
  assert.ok(nvlink >= 17.5 && nvlink < 20.6, `NVLink fitted to ${nvlink} GB/s per link`);
  assert.deepEqual([...result.unidentified].sort(), ['launchUs', 'nvlinkLatencyUs']);
  assert.equal(result.system.overrides?.launchUs, undefined);
  assert.equal(result.system.overrides?.nvlinkLatencyUs, undefined);
});

test('a sweep from 8 B: the launch cost is identifiable and fitted', () => {
  const hidden: SystemSpec = { ...dgx, overrides: { launchUs: asMicros(90) } };
  const sizes = Array.from({ length: 12 }, (_, i) => 8 * 4 ** i);
  const result = calibrateSystem(runOn(hidden, sizes), dgx);
  assert.ok(!result.unidentified.includes('launchUs'));
  assert.ok(
    result.medianErrorAfter < result.medianErrorBefore / 2,
    `${result.medianErrorBefore} -> ${result.medianErrorAfter}`,
  );
  const launch = result.system.overrides?.launchUs ?? 0;
  assert.ok(launch > 60 && launch < 120, `launch fitted to ${launch} µs`);
});

// 12 GB/s per link is half of NVLink 4's line rate: no healthy system runs there, so calibrate names NVLink instead.
test('NVLink at half its line rate is reported as unexplained, naming NVLink, not fitted', () => {
  const hidden: SystemSpec = { ...dgx, overrides: { nvlinkGBpsPerLink: asGBps(12) } };
  const result = calibrateSystem(runOn(hidden, [GiB, 2 * GiB, 4 * GiB]), dgx);
  assert.ok(result.unexplained, `fitted instead: ${JSON.stringify(result.parameters)}`);
  assert.equal(result.unexplained.parts[0]?.part, 'NVLink', result.unexplained.sentence);
  assert.ok(result.unexplained.parts[0].wanted < 17.5, result.unexplained.sentence);
  assert.ok((result.system.overrides?.nvlinkGBpsPerLink ?? 20.6) >= 17.5 * 0.999);
});

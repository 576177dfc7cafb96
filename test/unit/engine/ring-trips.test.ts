// LL and LL128 ring steps move whole trips of the CTA (prims_ll.h: one 8-byte payload per thread per iteration;
// prims_ll128.h: one 1,920-byte slice per warp per iteration), and only Simple pays the per-step fence scale. So a
// ring's busbw rises across NCCL's LL → LL128 switch on NVSwitch boxes, as measured runs do (8× A100: 53.5 → 71.4
// GB/s on Azure, 39.3 → 66.6 on SuperBench at 2 → 4 MiB), where the old model dipped (61.6 → 49.2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { presetSystem, resolveSystem, simulateCollective, asBytes, type SystemSpec } from '../../../src/engine/index';

const MiB = 1024 * 1024;

const azureA100 = (): SystemSpec =>
  JSON.parse(readFileSync('calibration/systems/a100-8gpu-nvswitch-1node-azure-ndv4.json', 'utf8')) as SystemSpec;

test('busbw does not fall where NCCL switches a ring from LL to LL128 on NVSwitch boxes', () => {
  const systems: [string, SystemSpec][] = [
    ['dgx-a100', presetSystem('dgx-a100')!],
    ['dgx-a100, NCCL 2.18.5', { ...presetSystem('dgx-a100')!, ncclVersion: '2.18.5' }],
    ['Azure A100 (calibration system)', azureA100()],
    ['dgx-h100', presetSystem('dgx-h100')!],
    ['dgx-b200', presetSystem('dgx-b200')!],
    ['gb200-nvl72-tray', presetSystem('gb200-nvl72-tray')!],
  ];
  let switches = 0;
  for (const [name, spec] of systems) {
    const system = resolveSystem(spec);
    let previous: { bytes: number; protocol: string; algorithm: string; busbw: number } | undefined;
    for (let bytes = 64 * 1024; bytes <= 64 * MiB; bytes *= 2) {
      const r = simulateCollective(system, { bytes: asBytes(bytes) });
      const row = { bytes, protocol: r.protocol, algorithm: r.algorithm, busbw: r.busbwGBps };
      if (previous && previous.algorithm === 'ring' && row.algorithm === 'ring') {
        if (previous.protocol === 'LL' && row.protocol === 'LL128') {
          switches++;
          assert.ok(
            row.busbw >= previous.busbw,
            `${name}: ${previous.bytes} B ring/LL ${previous.busbw.toFixed(1)} GB/s → ${bytes} B ring/LL128 ${row.busbw.toFixed(1)} GB/s`,
          );
        }
      }
      previous = row;
    }
  }
  // The A100 systems switch from LL to LL128 inside 64 KiB–64 MiB; the property must have been exercised.
  assert.ok(switches >= 3, `only ${switches} LL → LL128 switches seen`);
});

test('an LL128 ring step takes whole trips: sizes within one trip per channel and step take the same time', () => {
  // 8 ranks × 24 channels on 8× A100: one 38,400-byte trip holds up to 8 × 24 × 38,400 B = 7.03 MiB per step.
  const system = resolveSystem(presetSystem('dgx-a100')!);
  const at = (bytes: number, protocol: 'LL' | 'LL128') =>
    simulateCollective(system, { bytes: asBytes(bytes), algorithm: 'ring', protocol }).timeUs;
  assert.equal(at(3 * MiB, 'LL128'), at(7 * MiB, 'LL128'));
  assert.ok(at(8 * MiB, 'LL128') > at(7 * MiB, 'LL128'));
  // LL: one 4,096-byte trip per thread block (512 threads × 8 B); 1 MiB needs 5,461 B per channel and step: two trips.
  assert.equal(at(1 * MiB, 'LL'), at(1.5 * MiB, 'LL'));
  assert.ok(at(1.5 * MiB + 8 * 24 * 1024, 'LL') > at(1.5 * MiB, 'LL'));
});

test('Simple ring steps are charged by bytes, not trips', () => {
  const system = resolveSystem(presetSystem('dgx-a100')!);
  const at = (bytes: number) =>
    simulateCollective(system, { bytes: asBytes(bytes), algorithm: 'ring', protocol: 'Simple' }).timeUs;
  assert.ok(at(40 * MiB) > at(36 * MiB));
});

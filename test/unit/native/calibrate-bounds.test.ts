// calibrate stays physical: on synthetic runs made by the simulator from published hardware facts it recovers a
// hidden NIC rate without leaving line rate, and it reports a run no bounded system explains instead of fitting it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  resolveSystem,
  simulateCollective,
  type SystemSpec,
  asBytes,
  asGBps,
  asMicros,
} from '../../../src/engine/index';
import { boundFor, HEALTHY_LINE_RATE_FRACTION, PCIE_X16_LINE_GBPS } from '../../../src/native/calibrate-bounds';
import { calibrateSystem } from '../../../src/native/calibrate';
import type { Measurement } from '../../../src/native/import/model';

const MiB = 1 << 20;
/** Four DGX H100-like nodes as hardware-facts.md describes them: NVSwitch, eight NDR (400 Gb/s) NICs per node. */
const fourNodes: SystemSpec = {
  name: '4x8 H100 NDR',
  gpu: 'H100-SXM',
  nodes: 4,
  gpusPerNode: 8,
  intraNode: 'nvswitch',
  nic: { gbps: 400, perNode: 8 },
};
const NDR_LINE_GBPS = 400 / 8;
/** 8 B to 1 GiB by factors of 8: small, middle and large sizes alike. */
const SIZES = Array.from({ length: 11 }, (_, i) => 8 * 8 ** i);

function runOn(spec: SystemSpec, sizes: readonly number[], slowdown: (bytes: number) => number = () => 1): Measurement {
  const ranks = spec.nodes * spec.gpusPerNode;
  return {
    kind: 'nccl-tests',
    collective: 'allreduce',
    ranks,
    rows: sizes.map((bytes) => {
      const r = simulateCollective(spec, { bytes: asBytes(bytes) });
      const timeUs = asMicros(r.timeUs * slowdown(bytes));
      const algbwGBps = asGBps(bytes / timeUs / 1e3);
      return { bytes: asBytes(bytes), timeUs, algbwGBps, busbwGBps: asGBps((algbwGBps * 2 * (ranks - 1)) / ranks) };
    }),
    meta: {},
  };
}

test('bounds come from the hardware the system names: NDR NIC, PCIe Gen5, NVLink 4', () => {
  const system = resolveSystem(fourNodes);
  assert.deepEqual(
    [boundFor(system, 'nicGBps')!.min, boundFor(system, 'nicGBps')!.max],
    [HEALTHY_LINE_RATE_FRACTION * 50, 50],
  );
  assert.equal(boundFor(system, 'pcieGBps')!.max, PCIE_X16_LINE_GBPS[5]);
  assert.equal(boundFor(system, 'pcieGBps')!.part, 'GPU-to-NIC PCIe path');
  assert.equal(boundFor(system, 'nvlinkGBpsPerLink')!.max, 25);
  assert.equal(boundFor(system, 'nicLatencyUs')!.min, 0.5);
});

test('4 nodes with a NIC at 0.8 of line rate, fitted on sizes >= 64 MiB: the NIC rate is recovered within 10 % and the small sizes are no worse', () => {
  const hiddenGBps = asGBps(0.8 * NDR_LINE_GBPS);
  const measured = runOn({ ...fourNodes, overrides: { nicGBps: hiddenGBps } }, SIZES);
  const result = calibrateSystem(measured, fourNodes, { minBytes: 64 * MiB });
  assert.equal(result.unexplained, undefined, result.unexplained?.sentence);
  assert.equal(result.rejected, undefined, result.rejected);
  const nic = result.system.overrides?.nicGBps ?? 0;
  assert.ok(Math.abs(nic / hiddenGBps - 1) < 0.1, `NIC fitted to ${nic} GB/s, hidden ${hiddenGBps}`);
  assert.ok(nic <= NDR_LINE_GBPS * 1.001, `NIC fitted above line rate: ${nic}`);
  assert.ok(result.smallSizeError, 'the run has sizes below 1 MiB');
  assert.ok(
    result.smallSizeError.after <= result.smallSizeError.before + 1e-3,
    `below 1 MiB: ${result.smallSizeError.before} -> ${result.smallSizeError.after}`,
  );
});

test('a run 3x slower than any bounded system at large sizes is reported as unexplained, naming the network path', () => {
  const measured = runOn(
    fourNodes,
    SIZES.filter((b) => b >= 64 * MiB),
    () => 3,
  );
  const result = calibrateSystem(measured, fourNodes);
  assert.ok(result.unexplained, `fitted instead: ${JSON.stringify(result.parameters)}`);
  assert.equal(result.unexplained.slower, true);
  assert.match(result.unexplained.sentence, /slower than any healthy system of this kind/);
  assert.ok(
    ['NIC', 'GPU-to-NIC PCIe path'].includes(result.unexplained.parts[0]?.part ?? ''),
    result.unexplained.sentence,
  );
  assert.match(result.unexplained.sentence, /would have to run at/);
  // Even the fit it keeps for --force is physical.
  for (const [name, value] of Object.entries(result.system.overrides ?? {})) {
    const bound = result.bounds[name as keyof typeof result.bounds];
    if (bound) assert.ok(value >= bound.min * 0.999 && value <= bound.max * 1.001, `${name} = ${value}`);
  }
});

// NCCL's P2P level (ncclTopoCheckP2p, src/graph/paths.cc) decides which GPU pairs of a PCIe node talk peer to peer
// and which are staged through host memory (SHM), and a Simple step on a PCIe path keeps NCCL's own PCIe figure
// before Ada, where the step-cost scale was only ever fitted on NVLink rings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  presetSystem,
  resolveSystem,
  simulateCollective,
  asBytes,
  type SystemSpec,
  type System,
} from '../../../src/engine/index';
import { ncclP2pLevel } from '../../../src/engine/topology/p2p-level';

const box = (extra: Partial<SystemSpec>): SystemSpec => ({
  gpu: 'A100-PCIe',
  nodes: 1,
  gpusPerNode: 8,
  intraNode: 'pcie',
  pcieGen: 4,
  gpusPerPcieSwitch: 2,
  gpusPerSocket: 4,
  ...extra,
});

/** Whether the route between two local GPUs crosses host memory. */
function staged(system: System, a: number, b: number): boolean {
  return system.fabric.route(a, b).some((link) => system.topology.links[link].kind === 'host');
}

test("NCCL's default P2P level follows paths.cc for each release, CPU and GPU count", () => {
  const cases: [Partial<SystemSpec>, string][] = [
    // 2.23 on: "By default don't use P2P across CPU Host Bridges", SYS on AMD with at most two GPUs.
    [{}, 'PXB'],
    [{ ncclVersion: '2.26.2', cpuVendor: 'amd', gpusPerNode: 8 }, 'PXB'],
    [{ ncclVersion: '2.30.7', cpuVendor: 'amd', gpusPerNode: 2 }, 'SYS'],
    [{ ncclVersion: '2.23.4', cpuVendor: 'intel', gpusPerNode: 2 }, 'PXB'],
    // Up to 2.22: SYS unless the CPU is Intel or ARM.
    [{ ncclVersion: '2.18.5', cpuVendor: 'amd', gpusPerNode: 8 }, 'SYS'],
    [{ ncclVersion: '2.21.5', cpuVendor: 'arm', gpusPerNode: 8 }, 'PXB'],
    [{ ncclVersion: '2.22.3' }, 'PXB'],
    // NCCL_P2P_LEVEL overrides the default whatever the release.
    [{ ncclVersion: '2.18.5', cpuVendor: 'amd', p2pLevel: 'PIX' }, 'PIX'],
    [{ p2pLevel: 'SYS' }, 'SYS'],
  ];
  for (const [extra, level] of cases) assert.equal(ncclP2pLevel(box(extra)), level, JSON.stringify(extra));
});

test('only pairs within the P2P level go peer to peer; the rest cross host memory', () => {
  // Two GPUs per switch, four per socket: 0-1 share a switch (PIX), 1-2 meet at the CPU (PHB), 3-4 cross sockets.
  const pxb = resolveSystem(box({}));
  assert.equal(staged(pxb, 0, 1), false);
  assert.equal(staged(pxb, 1, 2), true);
  assert.equal(staged(pxb, 3, 4), true);
  assert.equal(pxb.fabric.hostStaged, true);
  const phb = resolveSystem(box({ p2pLevel: 'PHB' }));
  assert.deepEqual([staged(phb, 0, 1), staged(phb, 1, 2), staged(phb, 3, 4)], [false, false, true]);
  const sys = resolveSystem(box({ p2pLevel: 'SYS' }));
  assert.deepEqual([staged(sys, 0, 1), staged(sys, 1, 2), staged(sys, 3, 4)], [false, false, false]);
  assert.equal(sys.fabric.hostStaged, false);
  // p2p: false (the driver refuses P2P) stages every pair whatever the level says.
  const off = resolveSystem(box({ p2p: false, p2pLevel: 'SYS' }));
  assert.deepEqual([staged(off, 0, 1), staged(off, 1, 2), staged(off, 3, 4)], [true, true, true]);
  // Two GPUs on root ports of one AMD socket: NCCL 2.30 allows P2P through the CPU; on Intel it stages.
  const pair = { gpusPerNode: 2, gpusPerPcieSwitch: 0, gpusPerSocket: 2 };
  assert.equal(staged(resolveSystem(box({ ...pair, cpuVendor: 'amd' })), 0, 1), false);
  assert.equal(staged(resolveSystem(box({ ...pair, cpuVendor: 'intel' })), 0, 1), true);
  // NVLink pairs never leave their link.
  const bridged = resolveSystem(presetSystem('bridge-h100pciex2')!);
  assert.equal(staged(bridged, 0, 1), false);
});

test('staging a pair never speeds a ring up, and a wider P2P level never slows it', () => {
  const levels = ['LOC', 'PIX', 'PHB', 'SYS'] as const;
  for (const bytes of [1 << 16, 1 << 20, 1 << 24, 1 << 28]) {
    for (const protocol of ['LL', 'Simple'] as const) {
      let previousUs = Infinity;
      for (const p2pLevel of levels) {
        const { timeUs } = simulateCollective(resolveSystem(box({ p2pLevel })), {
          kind: 'allreduce',
          bytes: asBytes(bytes),
          algorithm: 'ring',
          protocol,
        });
        assert.ok(timeUs <= previousUs * (1 + 1e-9), `${p2pLevel} ${bytes} B ${protocol}: ${timeUs} > ${previousUs}`);
        previousUs = timeUs;
      }
    }
  }
});

test("a pre-Ada PCIe ring's Simple steps keep NCCL's PCIe figure: Simple at 1 MiB beats LL at 256 KiB", () => {
  // With the NVLink-fitted ×3.8 on every Simple step, 8× A100 PCIe fell from 7.1 GB/s (LL, 256 KiB) to 4.6 (Simple,
  // 1 MiB, 399 µs): 14 steps of 21.7 µs. A Simple step moves twice LL's payload per wire byte, so at four times the
  // size it carries more.
  for (const name of ['pcie-a100x8', 'pcie-a10x4']) {
    const system = resolveSystem(presetSystem(name)!);
    const at = (bytes: number, protocol: 'LL' | 'Simple'): number =>
      simulateCollective(system, { kind: 'allreduce', bytes: asBytes(bytes), algorithm: 'ring', protocol }).busbwGBps;
    const ll = at(1 << 18, 'LL');
    const simple = at(1 << 20, 'Simple');
    assert.ok(simple > ll, `${name}: Simple at 1 MiB ${simple} GB/s ≤ LL at 256 KiB ${ll}`);
  }
});

// What a PCIe box can carry. A ring AllReduce sends busbw bytes per second out of every GPU, so on one node its
// busbw can exceed none of the links every ring must cross: a GPU's PCIe link, the inter-socket link (a ring over
// GPUs on two sockets crosses it at least once each way) and, when P2P is off and NCCL stages through host memory
// (SHM), the socket's DRAM, which every staged byte of its GPUs crosses twice (written, then read back). An NVLink
// bridge pair carries its busbw over the bridge alone. Large messages saturate the narrowest of these, time grows
// with size for a fixed algorithm and protocol, and turning P2P on never slows a ring down.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  presetSystem,
  resolveSystem,
  simulateCollective,
  type Protocol,
  type System,
  type SystemSpec,
  asBytes,
} from '../../../src/engine/index';

const MiB = 1 << 20;

const pcieBoxArbitrary: fc.Arbitrary<SystemSpec> = fc
  .record({
    gpu: fc.constantFrom('RTX4090', 'L40S', 'A100-PCIe', 'A10'),
    gpusPerNode: fc.constantFrom(2, 4, 8),
    p2p: fc.boolean(),
    perSwitch: fc.constantFrom(0, 2, 4),
    pcieGen: fc.constantFrom(3 as const, 4 as const, 5 as const),
    twoSockets: fc.boolean(),
  })
  .map(({ gpu, gpusPerNode, p2p, perSwitch, pcieGen, twoSockets }): SystemSpec => ({
    gpu,
    nodes: 1,
    gpusPerNode,
    intraNode: 'pcie',
    p2p,
    pcieGen,
    gpusPerPcieSwitch: perSwitch,
    gpusPerSocket: twoSockets ? gpusPerNode / 2 : gpusPerNode,
  }));

/**
 * The narrowest link every ring on this single-node PCIe system crosses, as the busbw it allows, GB/s. A PCIe
 * switch's uplink carries every staged send of the GPUs behind it (each goes up to host memory and back down);
 * with P2P a ring leaves and re-enters the switch at least once each way unless all GPUs sit behind it. These
 * boxes name no CPU or NCCL release, so NCCL's default P2P level is PXB (paths.cc, 2.23 on): with P2P on, the GPUs
 * behind one switch talk peer to peer and every other pair is staged, so a ring stages at least one send out of each
 * switch and out of each GPU on a root port, in host memory of the sender's socket.
 */
function pcieRingBoundGBps(system: System): number {
  const { links, vertices } = system.topology;
  const staged = system.spec.p2p === false;
  const kindOf = new Map(vertices.map((v) => [v.id, v.kind]));
  const upFrom = (id: string): string | undefined =>
    links.find((l) => l.from === id && l.kind === 'pcie' && kindOf.get(l.to) !== 'gpu')?.to;
  // Each GPU's root complex: up its PCIe link, through its switch if it has one.
  const socketOf = new Map<string, string>();
  for (const v of vertices) {
    if (v.kind !== 'gpu') continue;
    let at = upFrom(v.id);
    if (at !== undefined && kindOf.get(at) === 'pcie-switch') at = upFrom(at);
    if (at !== undefined) socketOf.set(v.id, at);
  }
  const gpusOn = (cpu: string): number => [...socketOf.values()].filter((s) => s === cpu).length;
  // The groups of GPUs that talk peer to peer (one switch, or one GPU on a root port) on a socket: each sends at
  // least once through host memory when the node has more than one of them.
  const islandsOn = (cpu: string): number => {
    const switches = new Set<string>();
    let rootPortGpus = 0;
    for (const v of vertices) {
      if (v.kind !== 'gpu' || socketOf.get(v.id) !== cpu) continue;
      const parent = upFrom(v.id);
      if (parent !== undefined && kindOf.get(parent) === 'pcie-switch') switches.add(parent);
      else rootPortGpus++;
    }
    return switches.size + rootPortGpus;
  };
  const stagedSendsOn = (cpu: string): number => (staged ? gpusOn(cpu) : islandsOn(cpu));
  const sockets = new Set(socketOf.values()).size;
  const gpusBehind = (switchId: string): number =>
    links.filter((l) => l.to === switchId && kindOf.get(l.from) === 'gpu').length;
  let bound = Infinity;
  for (const link of links) {
    if (link.kind === 'inter-socket' && sockets > 1) bound = Math.min(bound, link.GBps);
    // Staged: each GPU of the socket writes its sends into this DRAM and they are read back from it.
    if (link.kind === 'host' && gpusOn(link.from) > 0)
      bound = Math.min(bound, link.GBps / (2 * stagedSendsOn(link.from)));
    if (link.kind !== 'pcie') continue;
    const switchEnd = [link.from, link.to].find((id) => kindOf.get(id) === 'pcie-switch');
    const isUplink = switchEnd !== undefined && [link.from, link.to].some((id) => kindOf.get(id) === 'cpu');
    if (!isUplink) bound = Math.min(bound, link.GBps);
    else if (staged) bound = Math.min(bound, link.GBps / gpusBehind(switchEnd));
    else if (gpusBehind(switchEnd) < system.gpusPerNode) bound = Math.min(bound, link.GBps);
  }
  return bound;
}

function busbw(system: System, bytes: number, protocol: Protocol | 'auto' = 'Simple'): number {
  return simulateCollective(system, { kind: 'allreduce', bytes: asBytes(bytes), algorithm: 'ring', protocol })
    .busbwGBps;
}

test('a PCIe ring never carries more than the PCIe link, the inter-socket link or staged host memory allow', () => {
  fc.assert(
    fc.property(pcieBoxArbitrary, fc.integer({ min: 16, max: 30 }), (spec, log2Bytes) => {
      const system = resolveSystem(spec);
      const bound = pcieRingBoundGBps(system);
      const got = busbw(system, 2 ** log2Bytes, 'auto');
      assert.ok(got <= bound * (1 + 1e-9), `${system.label} ${2 ** log2Bytes} B: busbw ${got} > bound ${bound}`);
    }),
    { numRuns: 100, seed: 20261202 },
  );
});

test('large messages saturate the narrowest PCIe-side link (within 10 %)', () => {
  fc.assert(
    fc.property(pcieBoxArbitrary, (spec) => {
      const system = resolveSystem(spec);
      const bound = pcieRingBoundGBps(system);
      const got = busbw(system, 1 << 30);
      assert.ok(got >= 0.9 * bound, `${system.label}: 1 GiB busbw ${got} below 0.9 × ${bound}`);
    }),
    { numRuns: 30, seed: 20261203 },
  );
});

test('with the protocol fixed, a bigger message never takes less time on a PCIe box', () => {
  for (const name of [
    'pcie-4090x8',
    'pcie-l40sx8',
    'pcie-a100x8',
    'pcie-a10x4',
    'bridge-h100pciex2',
    'bridge-3090x2',
  ]) {
    const system = resolveSystem(presetSystem(name)!);
    for (const protocol of ['LL', 'Simple'] as const) {
      let previousUs = 0;
      for (let bytes = 1024; bytes <= 1 << 30; bytes *= 2) {
        const { timeUs } = simulateCollective(system, {
          kind: 'allreduce',
          bytes: asBytes(bytes),
          algorithm: 'ring',
          protocol,
        });
        assert.ok(timeUs >= previousUs, `${name} ring/${protocol}: ${bytes} B in ${timeUs} µs < ${previousUs}`);
        previousUs = timeUs;
      }
    }
  }
});

test('turning P2P on never slows a PCIe ring down (staging only adds a DRAM round trip)', () => {
  fc.assert(
    fc.property(pcieBoxArbitrary, fc.integer({ min: 10, max: 30 }), (spec, log2Bytes) => {
      const staged = resolveSystem({ ...spec, p2p: false });
      const direct = resolveSystem({ ...spec, p2p: true });
      const bytes = 2 ** log2Bytes;
      for (const protocol of ['LL', 'Simple'] as const) {
        const stagedUs = simulateCollective(staged, {
          kind: 'allreduce',
          bytes: asBytes(bytes),
          algorithm: 'ring',
          protocol,
        }).timeUs;
        const directUs = simulateCollective(direct, {
          kind: 'allreduce',
          bytes: asBytes(bytes),
          algorithm: 'ring',
          protocol,
        }).timeUs;
        assert.ok(
          directUs <= stagedUs * (1 + 1e-9),
          `${staged.label} ${bytes} B ${protocol}: P2P ${directUs} µs > staged ${stagedUs}`,
        );
      }
    }),
    { numRuns: 40, seed: 20261204 },
  );
});

test('an NVLink bridge pair carries its busbw over the bridge alone and saturates it', () => {
  for (const name of ['bridge-h100pciex2', 'bridge-3090x2']) {
    const system = resolveSystem(presetSystem(name)!);
    const bridge = system.topology.links.filter((l) => l.kind === 'nvlink');
    assert.equal(bridge.length, 2, `${name}: one bridge, both directions`);
    const bridgeGBps = bridge[0].GBps;
    for (let bytes = MiB; bytes <= 1 << 30; bytes *= 4)
      assert.ok(busbw(system, bytes, 'auto') <= bridgeGBps * (1 + 1e-9), `${name} ${bytes} B above the bridge`);
    assert.ok(busbw(system, 1 << 30) >= 0.9 * bridgeGBps, `${name}: 1 GiB below 0.9 of the bridge`);
  }
});

// No simulated time may beat physics: the bytes that must leave (or enter) the busiest GPU port or node's NICs,
// divided by that port's bandwidth, plus one hop of latency. Checked on random systems, algorithms and sizes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  presetSystem,
  resolveSystem,
  simulateCollective,
  type Algorithm,
  type CollectiveKind,
  type System,
  type SystemSpec,
  asGBps,
  asMicros,
  asBytes,
} from '../../../src/engine/index';
import { algorithmUnavailable } from '../../../src/engine/select';

const systemArbitrary: fc.Arbitrary<SystemSpec> = fc.oneof(
  fc
    .record({
      preset: fc.constantFrom(
        'dgx1-v100',
        'dgx-a100',
        'dgx-h100',
        'hgx-h200',
        'dgx-b200',
        'gb200-nvl72-tray',
        'pcie-4090x8',
        'pcie-l40sx8',
        'pcie-a100x8',
        'bridge-3090x2',
      ),
      nodes: fc.integer({ min: 1, max: 4 }),
    })
    .map(({ preset, nodes }) => presetSystem(preset, { nodes }) as SystemSpec),
  fc
    .record({
      gpusPerNode: fc.integer({ min: 2, max: 8 }),
      nodes: fc.integer({ min: 1, max: 3 }),
      p2p: fc.boolean(),
      perSwitch: fc.integer({ min: 1, max: 4 }),
      nics: fc.integer({ min: 1, max: 4 }),
    })
    .map(({ gpusPerNode, nodes, p2p, perSwitch, nics }): SystemSpec => ({
      gpu: 'L40S',
      nodes,
      gpusPerNode,
      intraNode: 'pcie',
      p2p,
      gpusPerPcieSwitch: perSwitch,
      gpusPerSocket: Math.ceil(gpusPerNode / 2),
      nic: { gbps: 200, perNode: nics },
    })),
  fc
    .record({
      n: fc.integer({ min: 2, max: 24 }),
      B: fc.double({ min: 1, max: 500, noNaN: true }),
      alpha: fc.double({ min: 0, max: 10, noNaN: true }),
    })
    .map(({ n, B, alpha }): SystemSpec => ({
      gpu: 'A100-SXM',
      nodes: 1,
      gpusPerNode: n,
      intraNode: 'uniform-ring',
      overrides: { linkGBps: asGBps(B), linkLatencyUs: asMicros(alpha) },
    })),
);

/** The physical floor of one collective on a system, µs. */
export function floorUs(system: System, kind: CollectiveKind, bytes: number): number {
  const { links, vertices } = system.topology;
  const n = system.ranks;
  const gpuIds = new Set(vertices.filter((v) => v.kind === 'gpu').map((v) => v.id));
  // Every GPU port counts, PCIe included (a GPU may also reach peers through its NIC), so sum all its links.
  const portOut = (id: string): number => links.filter((l) => l.from === id).reduce((s, l) => s + l.GBps, 0);
  const portIn = (id: string): number => links.filter((l) => l.to === id).reduce((s, l) => s + l.GBps, 0);
  const share = (bytes * (n - 1)) / n;
  let worstUs = 0;
  for (const id of gpuIds) {
    if (kind !== 'allgather') worstUs = Math.max(worstUs, share / (portOut(id) * 1e3));
    if (kind !== 'reducescatter') worstUs = Math.max(worstUs, share / (portIn(id) * 1e3));
  }
  if (system.nodes > 1) {
    const N = system.nodes;
    const nicOut = links
      .filter(
        (l) =>
          l.kind === 'network' &&
          vertices.find((v) => v.id === l.from)?.kind === 'nic' &&
          vertices.find((v) => v.id === l.from)?.node === 0,
      )
      .reduce((s, l) => s + l.GBps, 0);
    worstUs = Math.max(worstUs, (bytes * (N - 1)) / N / (nicOut * 1e3));
  }
  const hopUs = Math.min(...links.map((l) => l.latencyUs));
  return worstUs + hopUs;
}

test('no simulated time beats the physical floor (random systems, algorithms, sizes)', () => {
  fc.assert(
    fc.property(
      systemArbitrary,
      fc.constantFrom<Algorithm | 'auto'>('auto', 'ring', 'tree', 'nvls', 'nvlstree', 'hierarchical', 'direct'),
      fc.constantFrom<CollectiveKind>('allreduce', 'reducescatter', 'allgather'),
      fc.integer({ min: 0, max: 30 }),
      (spec, algorithm, kind, log2Bytes) => {
        const system = resolveSystem(spec);
        if (algorithm !== 'auto' && algorithmUnavailable(system, algorithm, kind)) return;
        const bytes = asBytes(2 ** log2Bytes);
        const result = simulateCollective(system, { kind, bytes, algorithm });
        const floor = floorUs(system, kind, bytes);
        assert.ok(
          result.timeUs >= floor,
          `${system.label} ${kind} ${algorithm}→${result.algorithm}/${result.protocol} ${bytes} B: ${result.timeUs} µs < floor ${floor} µs`,
        );
      },
    ),
    { numRuns: 150, seed: 20260711 },
  );
});

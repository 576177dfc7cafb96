// The ring folded onto one node (src/engine/algorithms/ring-folded.ts) must time every ring collective exactly as
// the per-rank round does, on every system where it is taken, and must refuse the systems where leaf or spine links
// could bind. The reference is the full expansion (every rank, every channel, every step) on the built topology.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  asBytes,
  resolveSystem,
  simulateCollective,
  type CollectiveKind,
  type Protocol,
  type System,
  type SystemSpec,
} from '../../../src/engine/index';
import { foldedRingRound } from '../../../src/engine/algorithms/ring-folded';
import { channelsFor } from '../../../src/engine/channels';
import { random, pick } from './support/random';

const BASES: readonly SystemSpec[] = [
  { gpu: 'H100-SXM', nodes: 1, gpusPerNode: 8, intraNode: 'nvswitch' },
  { gpu: 'A100-SXM', nodes: 1, gpusPerNode: 8, intraNode: 'nvswitch' },
  { gpu: 'H100-SXM', nodes: 1, gpusPerNode: 4, intraNode: 'nvswitch' },
  { gpu: 'H100-SXM', nodes: 1, gpusPerNode: 2, intraNode: 'nvswitch' },
  { gpu: 'V100-SXM', nodes: 1, gpusPerNode: 8, intraNode: 'nvlink-mesh' },
  { gpu: 'L40S', nodes: 1, gpusPerNode: 8, intraNode: 'pcie' },
];

const KINDS: readonly CollectiveKind[] = ['allreduce', 'reducescatter', 'allgather'];
const PROTOCOLS: readonly Protocol[] = ['Simple', 'LL128', 'LL'];

/** A multi-node system with a NIC per GPU (the systems the fold applies to), leaves and spine drawn at random. */
function randomSpec(next: () => number): SystemSpec {
  const base = pick(next, BASES);
  return {
    ...base,
    nodes: 2 + Math.floor(next() * 22),
    nic: { gbps: pick(next, [100, 200, 400]), perNode: base.gpusPerNode },
    network: { nodesPerLeaf: pick(next, [1, 2, 3, 8, 32]), oversubscription: pick(next, [1, 1, 1.5, 4]) },
    ...(next() < 0.3 ? { pcieGen: 3 as const } : {}),
  };
}

/** The system read from its built vertices and links, as an edited copy would be. */
function built(system: System): System {
  return { ...system, topology: { vertices: system.topology.vertices, links: system.topology.links } };
}

/** Whether the fast path folds this ring (the same test buildRing makes). */
function folds(system: System, kind: CollectiveKind, protocol: Protocol, bytes: number): boolean {
  const channels = channelsFor(system, 'ring', protocol, bytes);
  const ctx = { system, algorithm: 'ring' as const, kind, bytes, protocol, channels, representative: true };
  return foldedRingRound(ctx, bytes / system.ranks / channels, true, 0, system.ranks - 1) !== undefined;
}

test('a folded ring equals the per-rank ring to the microsecond (random systems, every ring collective)', () => {
  let folded = 0;
  let refused = 0;
  for (let seed = 1; seed <= 16; seed++) {
    const next = random(7000 + seed);
    const system = resolveSystem(randomSpec(next));
    const reference = built(system);
    for (const kind of KINDS) {
      // LL128 needs NVLink between GPUs: PCIe nodes draw from the other two.
      const protocol = pick(next, system.fabric.intraClass === 'pcie' ? PROTOCOLS.slice(0, 1).concat('LL') : PROTOCOLS);
      const bytes = asBytes(pick(next, [64 << 10, 4 << 20, 256 << 20]));
      const request = { kind, bytes, algorithm: 'ring' as const, protocol, dtype: 'bf16' as const };
      const fast = simulateCollective(system, request);
      const full = simulateCollective(reference, request, { path: 'full' });
      const where = `seed ${7000 + seed} (${system.label}) ${kind}/${protocol} ${bytes} B`;
      assert.ok(Math.abs(fast.timeUs - full.timeUs) < 1, `${where}: fast ${fast.timeUs} µs, full ${full.timeUs} µs`);
      assert.ok(Math.abs(fast.phases.exchange - full.phases.exchange) < 1, `${where}: exchange phase`);
      assert.ok(Math.abs(fast.phases.broadcast - full.phases.broadcast) < 1, `${where}: broadcast phase`);
      if (folds(system, kind, protocol, bytes)) folded++;
      else refused++;
    }
  }
  // Both branches must have run, or the comparison proves nothing about one of them.
  assert.ok(folded >= 15, `only ${folded} folded rings were compared`);
  assert.ok(refused >= 5, `only ${refused} refused folds were compared`);
});

test('a folded ring builds one node whatever the node count', () => {
  const flows = (nodes: number): number => {
    const system = resolveSystem({ ...BASES[0], nodes, nic: { gbps: 400, perNode: 8 } });
    const ctx = {
      system,
      algorithm: 'ring' as const,
      kind: 'reducescatter' as const,
      bytes: 2 ** 30,
      protocol: 'Simple' as const,
      channels: 16,
      representative: true,
    };
    const round = foldedRingRound(ctx, 1, true, 0, system.ranks - 1);
    assert.ok(round, `${nodes} nodes: the fold was refused`);
    return round.flows.length;
  };
  // Eight classes of eight flows each (seven inside the node, one to the next node), at 4 and at 16,384 nodes.
  assert.equal(flows(4), 64);
  assert.equal(flows(16384), 64);
});

test('the fold is refused where leaf links could bind, on edited systems and on one node', () => {
  const ctxFor = (system: System) => ({
    system,
    algorithm: 'ring' as const,
    kind: 'allreduce' as const,
    bytes: 2 ** 30,
    protocol: 'Simple' as const,
    channels: 16,
    representative: true,
  });
  const oversubscribed = resolveSystem({
    ...BASES[0],
    nodes: 64,
    nic: { gbps: 400, perNode: 8 },
    network: { oversubscription: 4 },
  });
  assert.equal(foldedRingRound(ctxFor(oversubscribed), 1, true, 0, 511), undefined);
  const one = resolveSystem(BASES[0]);
  assert.equal(foldedRingRound(ctxFor(one), 1, true, 0, 7), undefined);
  const fewerNics = resolveSystem({ ...BASES[0], nodes: 4, nic: { gbps: 400, perNode: 4 } });
  assert.equal(foldedRingRound(ctxFor(fewerNics), 1, true, 0, 31), undefined);
  // The per-rank build (representative off, as for an edited system) is never folded.
  const plain = resolveSystem({ ...BASES[0], nodes: 4, nic: { gbps: 400, perNode: 8 } });
  assert.equal(foldedRingRound({ ...ctxFor(plain), representative: false }, 1, true, 0, 31), undefined);
});

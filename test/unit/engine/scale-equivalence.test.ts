// The reductions that keep large systems cheap must not change a single number. Resolution derives every node's
// NIC link indices from node 0's by a constant stride, so each route is checked against the topology itself (a
// chain of links from the sender's GPU to the receiver's). The fast path (one representative node and rail, each
// distinct step once) must equal the full expansion to the microsecond on random small systems, including
// heterogeneous ones where the fast path may not assume identical nodes or rails (a degraded link, a slow node, one
// rail slower on every node).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  asBytes,
  asGBps,
  resolveSystem,
  simulateCollective,
  type Algorithm,
  type Protocol,
  type System,
  type SystemSpec,
} from '../../../src/engine/index';
import { checkNodesIdentical, nodesIdentical } from '../../../src/engine/topology/uniform';
import { random, pick } from './support/random';

const BASES: readonly SystemSpec[] = [
  { gpu: 'H100-SXM', nodes: 1, gpusPerNode: 8, intraNode: 'nvswitch' },
  { gpu: 'A100-SXM', nodes: 1, gpusPerNode: 8, intraNode: 'nvswitch' },
  { gpu: 'H100-SXM', nodes: 1, gpusPerNode: 4, intraNode: 'nvswitch' },
  { gpu: 'V100-SXM', nodes: 1, gpusPerNode: 8, intraNode: 'nvlink-mesh' },
  { gpu: 'A100-PCIe', nodes: 1, gpusPerNode: 4, intraNode: 'nvlink-bridge' },
  { gpu: 'L40S', nodes: 1, gpusPerNode: 8, intraNode: 'pcie' },
];

function randomSpec(next: () => number): SystemSpec {
  const base = pick(next, BASES);
  const nodes = 1 + Math.floor(next() * 5);
  const perNode = pick(next, [1, 2, 4, base.gpusPerNode, 2 * base.gpusPerNode]);
  const nodesPerLeaf = pick(next, [1, 2, 32]);
  return { ...base, nodes, nic: { gbps: pick(next, [100, 200, 400]), perNode }, network: { nodesPerLeaf } };
}

/** The same system with one link (both directions of nothing else) slowed down, as a degraded cable would be. */
function degraded(system: System, link: number, factor: number): System {
  const links = system.topology.links.map((l, i) => (i === link ? { ...l, GBps: asGBps(l.GBps * factor) } : l));
  return { ...system, topology: { ...system.topology, links } };
}

test('every route is a chain of links from the sender GPU to the receiver GPU (random systems)', () => {
  for (let seed = 1; seed <= 40; seed++) {
    const spec = randomSpec(random(seed));
    const system = resolveSystem(spec);
    const { links, vertices } = system.topology;
    const gpuVertex = vertices.filter((v) => v.kind === 'gpu').map((v) => v.id);
    assert.equal(gpuVertex.length, system.ranks, `seed ${seed}`);
    // The builder does not deduplicate vertices: every fabric builder must create each one once.
    assert.equal(new Set(vertices.map((v) => v.id)).size, vertices.length, `seed ${seed}: a vertex id repeats`);
    for (let x = 0; x < system.ranks; x++) {
      for (let y = 0; y < system.ranks; y++) {
        if (x === y) continue;
        for (let slot = 0; slot < Math.max(1, system.fabric.nicsPerNode); slot++) {
          const route = system.fabric.route(x, y, slot);
          const where = `seed ${seed} (${system.label}) route ${x}→${y} slot ${slot}`;
          assert.ok(route.length > 0, where);
          let at = gpuVertex[x];
          for (let k = 0; k < route.length; k++) {
            const link = links[route[k]];
            assert.ok(link, `${where}: link ${route[k]} does not exist`);
            // A host-staged route crosses the same memory link twice, there and back: the second crossing brings
            // the data back to the CPU it left from.
            const repeat = k > 0 && route[k] === route[k - 1];
            if (!repeat) assert.equal(link.from, at, `${where}: hop ${k} starts at ${link.from}, not ${at}`);
            at = repeat ? link.from : link.to;
          }
          const last = links[route[route.length - 1]];
          assert.equal(
            route.length > 1 && route[route.length - 1] === route[route.length - 2] ? last.from : last.to,
            gpuVertex[y],
            where,
          );
        }
      }
    }
  }
});

test('resolution marks only systems whose nodes really are identical; an edited copy is checked', () => {
  for (let seed = 1; seed <= 30; seed++) {
    const next = random(3000 + seed);
    const spec = randomSpec(next);
    const system = resolveSystem({ ...spec, nodes: Math.max(2, spec.nodes) });
    assert.equal(checkNodesIdentical(system), true, `seed ${3000 + seed} (${system.label})`);
    assert.equal(nodesIdentical(system), true);
    const link = Math.floor(next() * system.topology.links.length);
    const edited = degraded(system, link, 0.5);
    // Halving one link of any node, or one direction of a leaf-spine link, breaks the symmetry.
    assert.equal(
      nodesIdentical(edited),
      false,
      `seed ${3000 + seed}: link ${link} (${system.topology.links[link].id})`,
    );
  }
});

const PLANS: readonly { algorithm: Algorithm; protocol: Protocol }[] = [
  { algorithm: 'ring', protocol: 'Simple' },
  { algorithm: 'ring', protocol: 'LL128' },
  { algorithm: 'tree', protocol: 'Simple' },
  { algorithm: 'nvlstree', protocol: 'Simple' },
  { algorithm: 'nvls', protocol: 'Simple' },
  { algorithm: 'hierarchical', protocol: 'Simple' },
];

/** The system read from its built vertices and links, as an edited copy would be. */
function built(system: System): System {
  return { ...system, topology: { vertices: system.topology.vertices, links: system.topology.links } };
}

function sameToTheMicrosecond(system: System, where: string, next: () => number): number {
  const bytes = asBytes(pick(next, [64 << 10, 4 << 20, 64 << 20]));
  let compared = 0;
  for (const plan of PLANS) {
    const request = { bytes, ...plan };
    let fast;
    try {
      fast = simulateCollective(system, request, { path: 'fast' });
    } catch {
      continue; // The plan cannot run on this system (NVLS off Hopper, a tree on one node...): nothing to compare.
    }
    // The reference runs every copy on the built topology (plain arrays of every node's vertices and links), not on
    // the compact description resolution simulates from.
    const full = simulateCollective(built(system), request, { path: 'full' });
    assert.ok(
      Math.abs(fast.timeUs - full.timeUs) < 1,
      `${where} ${plan.algorithm}/${plan.protocol} ${bytes} B: fast ${fast.timeUs} µs, full ${full.timeUs} µs`,
    );
    compared++;
  }
  return compared;
}

test('the fast path equals the full expansion to the microsecond (random homogeneous systems)', () => {
  let compared = 0;
  for (let seed = 1; seed <= 12; seed++) {
    const next = random(1000 + seed);
    const system = resolveSystem(randomSpec(next));
    compared += sameToTheMicrosecond(system, `seed ${1000 + seed} (${system.label})`, next);
  }
  assert.ok(compared >= 20, `only ${compared} comparisons ran`);
});

test('the fast path equals the full expansion to the microsecond with one degraded link (random systems)', () => {
  let compared = 0;
  for (let seed = 1; seed <= 12; seed++) {
    const next = random(2000 + seed);
    const spec = randomSpec(next);
    const system = resolveSystem({ ...spec, nodes: Math.max(2, spec.nodes) });
    // Degrade a link on the last node, which a representative of node 0 would not see.
    const lastNode = system.nodes - 1;
    const candidates = system.topology.links
      .map((l, i) => ({ l, i }))
      .filter(({ l }) => system.topology.vertices.find((v) => v.id === l.from)?.node === lastNode);
    const { i } = pick(next, candidates);
    compared += sameToTheMicrosecond(
      degraded(system, i, 0.25),
      `seed ${2000 + seed} (${system.label}, link ${i} at 25 %)`,
      next,
    );
  }
  assert.ok(compared >= 20, `only ${compared} comparisons ran`);
});

/** The same system with every link of one node (its NVSwitch or NVLinks, PCIe, NICs) at `factor` of its speed. */
function slowNode(system: System, node: number, factor: number): System {
  const nodeOf = new Map(system.topology.vertices.map((v) => [v.id, v.node]));
  const links = system.topology.links.map((l) =>
    nodeOf.get(l.from) === node || nodeOf.get(l.to) === node ? { ...l, GBps: asGBps(l.GBps * factor) } : l,
  );
  return { ...system, topology: { ...system.topology, links } };
}

/** The same system with one rail different on every node: each node's NIC `rail` (both directions) at `factor`. */
function differentRail(system: System, rail: number, factor: number): System {
  const nic = new RegExp(`(^|\\.)nic${rail}$`);
  const links = system.topology.links.map((l) =>
    l.kind === 'network' && (nic.test(l.from) || nic.test(l.to)) ? { ...l, GBps: asGBps(l.GBps * factor) } : l,
  );
  return { ...system, topology: { ...system.topology, links } };
}

test('the fast path equals the full expansion to the microsecond with one slow node (random systems)', () => {
  let compared = 0;
  for (let seed = 1; seed <= 10; seed++) {
    const next = random(4000 + seed);
    const spec = randomSpec(next);
    const system = resolveSystem({ ...spec, nodes: Math.max(2, spec.nodes) });
    const node = Math.floor(next() * system.nodes);
    compared += sameToTheMicrosecond(
      slowNode(system, node, 0.5),
      `seed ${4000 + seed} (${system.label}, node ${node} at 50 %)`,
      next,
    );
  }
  assert.ok(compared >= 15, `only ${compared} comparisons ran`);
});

test('the fast path equals the full expansion to the microsecond with one rail slower on every node', () => {
  let compared = 0;
  for (let seed = 1; seed <= 10; seed++) {
    const next = random(5000 + seed);
    const spec = randomSpec(next);
    const system = resolveSystem({ ...spec, nodes: Math.max(2, spec.nodes) });
    const rail = Math.floor(next() * system.fabric.nicsPerNode);
    const edited = differentRail(system, rail, 0.5);
    assert.ok(
      edited.topology.links.some((l, i) => l !== system.topology.links[i]),
      `seed ${5000 + seed}: rail ${rail} has no network link`,
    );
    // The nodes are still identical to each other; only the rails differ (when there are several), and the check
    // must see it.
    if (system.fabric.nicsPerNode > 1)
      assert.equal(nodesIdentical(edited), false, `seed ${5000 + seed}: rail ${rail} at 50 % passed as uniform`);
    compared += sameToTheMicrosecond(edited, `seed ${5000 + seed} (${system.label}, rail ${rail} at 50 %)`, next);
  }
  assert.ok(compared >= 15, `only ${compared} comparisons ran`);
});

test('the fast path equals the full expansion on larger random systems whose trees cross leaves and the spine', () => {
  let compared = 0;
  for (let seed = 1; seed <= 4; seed++) {
    const next = random(6000 + seed);
    const gpusPerNode = pick(next, [2, 4]);
    const spec: SystemSpec = {
      gpu: 'H100-SXM',
      nodes: 24 + Math.floor(next() * 40),
      gpusPerNode,
      intraNode: 'nvswitch',
      nic: { gbps: 400, perNode: Math.min(gpusPerNode, pick(next, [1, 2, 4])) },
      network: { nodesPerLeaf: pick(next, [2, 4, 8]), oversubscription: pick(next, [1, 4]) },
    };
    const system = resolveSystem(spec);
    compared += sameToTheMicrosecond(system, `seed ${6000 + seed} (${system.label})`, next);
  }
  assert.ok(compared >= 8, `only ${compared} comparisons ran`);
});

// NVLSTree's tree rounds on identical nodes are timed from per-node and per-leaf classes of their flows
// (src/engine/algorithms/nvls-tree-classes.ts) instead of solving the packed flows. Wherever the proof answers, its
// duration must be the solver's on the packed flows, bit for bit, on random systems and capacities: the leaf links
// of each leaf and the nodes' links drawn apart (node-uniform, as identical nodes have them), so that leaf links,
// NICs, PCIe or memory bind, and the proof has to decline where the solver needs more than one step. The proof
// reaches its verdict from classes of nodes, leaves and edges (nvls-tree-node-classes.ts) where every leaf's links
// are alike, and from every edge otherwise: the two verdicts must agree bit for bit (declines included) on every
// round where the classes apply.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildNvls } from '../../../src/engine/algorithms/nvls';
import type { NvlsTreeProof } from '../../../src/engine/algorithms/nvls-tree-classes';
import { channelsFor } from '../../../src/engine/channels';
import { resolveSystem, type Protocol, type SystemSpec } from '../../../src/engine/index';
import { ComponentSolver } from '../../../src/engine/sim/components';
import { shownDurationUs } from '../../../src/engine/sim/shown-round';
import { linkTable } from '../../../src/engine/topology/link-table';
import { random, pick } from './support/random';

test('the class proof of NVLSTree rounds gives the solver’s duration bit for bit, or declines (random systems)', () => {
  let answered = 0;
  let declined = 0;
  let steadyAnswered = 0;
  let crossingLeaves = 0;
  let byClasses = 0;
  let classesDeclined = 0;
  let edgesOnly = 0;
  for (let seed = 1; seed <= 60; seed++) {
    const next = random(9600 + seed);
    const gpusPerNode = pick(next, [2, 4, 8]);
    const nodes = pick(next, [2, 3, 5, 9, 17, 40, 100, 257]);
    const nodesPerLeaf = pick(next, [1, 2, 4, 8, 32]);
    const spec: SystemSpec = {
      gpu: pick(next, ['H100-SXM', 'B200', 'A100-SXM']),
      nodes,
      gpusPerNode,
      intraNode: 'nvswitch',
      nic: { gbps: pick(next, [100, 200, 400, 800]), perNode: gpusPerNode },
      network: { nodesPerLeaf, oversubscription: pick(next, [1, 2, 3, 8]) },
    };
    const system = resolveSystem(spec);
    const bytes = pick(next, [1 << 16, 1 << 20, 64 << 20, 1 << 30]);
    const protocol = pick<Protocol>(next, ['Simple', 'Simple', 'LL128', 'LL']);
    const channels = channelsFor(system, 'nvlstree', protocol, bytes);
    const ctx = { system, algorithm: 'nvlstree' as const, kind: 'allreduce' as const, bytes, protocol, channels };
    const schedule = buildNvls({ ...ctx, representative: true });
    const links = linkTable(system.topology);
    // Every node's links (NIC side, PCIe, memory) scaled alike, and each leaf's links on their own: a leaf link at
    // a fraction of its speed binds, one of 3/7 is off any round share.
    const nodeScale = pick(next, [1, 1, 0.5, 0.25]);
    const memoryScale = pick(next, [1, 1, 0.05, 0.01]);
    // Half the systems have every leaf's links alike (where the classes apply), half each leaf's on its own.
    const alikeLeaves = seed % 2 === 0;
    const leafScales = new Map<number, number>();
    const leafScale = (r: number): number => {
      let scale = leafScales.get(alikeLeaves ? -1 : r);
      if (scale === undefined) {
        scale = pick(next, [1, 1, 1, 0.5, 0.25, 3 / 7, 2]);
        leafScales.set(alikeLeaves ? -1 : r, scale);
      }
      return scale;
    };
    // Rail 0's leaf links, from the routes between every leaf's first node and another leaf's.
    const leafLinks = new Set<number>();
    const leaves = Math.ceil(nodes / nodesPerLeaf);
    for (let l = 0; l < leaves && leaves > 1; l++) {
      const other = (l === 0 ? nodesPerLeaf : 0) * gpusPerNode;
      for (const id of system.fabric.network!.routeParts(l * nodesPerLeaf * gpusPerNode, other, 0).shared)
        leafLinks.add(id);
      for (const id of system.fabric.network!.routeParts(other, l * nodesPerLeaf * gpusPerNode, 0).shared)
        leafLinks.add(id);
    }
    const memoryStart = links.count;
    const capacity = (r: number): number => {
      if (r >= memoryStart + system.ranks) return schedule.engineGBps ?? Infinity;
      if (r >= memoryStart) return system.hbmGBps * memoryScale;
      const link = links.GBps(r);
      if (leafLinks.has(r)) return link * leafScale(r);
      return links.kind(r) === 'nvswitch' ? link : link * nodeScale;
    };
    const where = `seed ${9600 + seed} (${system.label}, ${nodesPerLeaf} a leaf, ${protocol}, ${bytes} B)`;
    // Two solvers called in the same order, so their caches of earlier components match.
    const byProof = new ComponentSolver(capacity, memoryStart + 2 * system.ranks);
    const bySolver = new ComponentSolver(capacity, memoryStart + 2 * system.ranks);
    for (const [i, round] of schedule.rounds.entries()) {
      const packed = round.packed;
      if (!packed?.shown) continue;
      const shown = shownDurationUs(packed.shown, capacity, (others) => byProof.solve(others));
      const solved = bySolver.solve(packed.set).durationUs;
      const proof = packed.shown.proof as NvlsTreeProof;
      const fromClasses = proof.classDurationUs(packed.shown.parts, capacity);
      const fromEdges = proof.edgeDurationUs(packed.shown.parts, capacity);
      if (fromClasses === null) edgesOnly++;
      else {
        assert.ok(Object.is(fromClasses, fromEdges), `${where} round ${i}: classes ${fromClasses}, edges ${fromEdges}`);
        if (fromClasses === undefined) classesDeclined++;
        else byClasses++;
      }
      if (shown === undefined) {
        declined++;
        byProof.solve(packed.set);
        continue;
      }
      answered++;
      if (packed.shown.parts.length > 1) steadyAnswered++;
      if (nodes > nodesPerLeaf) crossingLeaves++;
      assert.ok(Object.is(shown, solved), `${where} round ${i}: proof ${shown} µs, solver ${solved} µs`);
    }
  }
  assert.ok(answered > 300, `only ${answered} rounds answered by the proof`);
  assert.ok(steadyAnswered > 12, `only ${steadyAnswered} steady rounds answered`);
  assert.ok(crossingLeaves > 250, `only ${crossingLeaves} answered rounds cross leaves`);
  assert.ok(declined > 100, `only ${declined} rounds declined: the draws never make the proof refuse`);
  assert.ok(byClasses > 150, `only ${byClasses} rounds answered from the classes`);
  assert.ok(classesDeclined > 40, `only ${classesDeclined} rounds declined from the classes`);
  assert.ok(edgesOnly > 100, `only ${edgesOnly} rounds with leaves apart, left to the per-edge proof`);
  console.log({ answered, declined, byClasses, classesDeclined, edgesOnly });
});

test('the verdict from node classes equals the one from every tree edge, declines included (random larger trees)', () => {
  let answered = 0;
  let declined = 0;
  let steady = 0;
  for (let seed = 1; seed <= 40; seed++) {
    const next = random(9700 + seed);
    const gpusPerNode = pick(next, [2, 4, 8]);
    const nodes = pick(next, [6, 33, 64, 97, 255, 256, 600, 1000, 1500, 2048]);
    const nodesPerLeaf = pick(next, [1, 3, 4, 6, 18, 32]);
    const system = resolveSystem({
      gpu: pick(next, ['H100-SXM', 'B200']),
      nodes,
      gpusPerNode,
      intraNode: 'nvswitch',
      nic: { gbps: pick(next, [200, 400]), perNode: gpusPerNode },
      network: { nodesPerLeaf, oversubscription: pick(next, [1, 2, 8]) },
    });
    const bytes = pick(next, [1 << 20, 64 << 20, 1 << 30]);
    const protocol = pick<Protocol>(next, ['Simple', 'LL128']);
    const channels = channelsFor(system, 'nvlstree', protocol, bytes);
    const ctx = { system, algorithm: 'nvlstree' as const, kind: 'allreduce' as const, bytes, protocol, channels };
    const schedule = buildNvls({ ...ctx, representative: true });
    const links = linkTable(system.topology);
    // A node's sending and receiving NIC-side links scaled apart, so that a parent's receiving links (loaded by
    // one child or two, in one tree or both) set its children's levels and nodes of one role see different ones.
    const network = system.fabric.network!;
    const sending = new Set<number>();
    const receiving = new Set<number>();
    for (let node = 0; node < nodes; node++) {
      const parts = network.routeParts(node * gpusPerNode, ((node + 1) % nodes) * gpusPerNode, 0);
      for (const id of parts.send) sending.add(id);
      for (const id of parts.receive) receiving.add(id);
    }
    const sendScale = pick(next, [1, 0.5, 0.37]);
    const receiveScale = pick(next, [1, 0.25, 0.7, 1.3]);
    const memoryScale = pick(next, [1, 0.02, 0.005]);
    const leafScale = pick(next, [1, 0.25, 3 / 7]);
    const memoryStart = links.count;
    const capacity = (r: number): number => {
      if (r >= memoryStart + system.ranks) return schedule.engineGBps ?? Infinity;
      if (r >= memoryStart) return system.hbmGBps * memoryScale;
      if (sending.has(r)) return links.GBps(r) * sendScale;
      if (receiving.has(r)) return links.GBps(r) * receiveScale;
      return links.kind(r) === 'nvswitch' ? links.GBps(r) : links.GBps(r) * leafScale;
    };
    const where = `seed ${9700 + seed} (${system.label}, ${nodesPerLeaf} a leaf, ${protocol}, ${bytes} B)`;
    for (const [i, round] of schedule.rounds.entries()) {
      const shown = round.packed?.shown;
      if (!shown) continue;
      const proof = shown.proof as NvlsTreeProof;
      const fromClasses = proof.classDurationUs(shown.parts, capacity);
      const fromEdges = proof.edgeDurationUs(shown.parts, capacity);
      assert.notEqual(fromClasses, null, `${where} round ${i}: the classes do not apply`);
      assert.ok(Object.is(fromClasses, fromEdges), `${where} round ${i}: classes ${fromClasses}, edges ${fromEdges}`);
      if (fromClasses === undefined) declined++;
      else {
        answered++;
        if (shown.parts.length > 1) steady++;
      }
    }
  }
  assert.ok(answered > 150, `only ${answered} rounds answered`);
  assert.ok(declined > 100, `only ${declined} rounds declined`);
  assert.ok(steady >= 3, `only ${steady} steady rounds answered`);
  console.log({ answered, declined, steady });
});

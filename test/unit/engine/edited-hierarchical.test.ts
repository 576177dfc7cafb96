// Hierarchical across nodes with fewer NICs than GPUs, in proportion to what differs: local GPUs that share a NIC
// share its links, so the groups across nodes are a node's GPUs on one NIC (hierarchical-edited.ts). An edited
// system solves the touched groups and one stand-in group of each NIC and shape; identical nodes (the fast path),
// which no symmetric fold covers without a NIC per GPU, are the edit that touches nothing. The results must be the
// unreduced simulation's bit for bit: a traced run builds every pair's flow (a trace lists them all), so it is the
// pair-by-pair path the reduction replaces; the full expansion must agree to the microsecond, as for every fast path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asBytes, resolveSystem, simulateCollective, type System } from '../../../src/engine/index';
import { buildHierarchical } from '../../../src/engine/algorithms/hierarchical';
import { chosenInterPairs, nicGroups } from '../../../src/engine/algorithms/hierarchical-edited';
import { editedNodes } from '../../../src/engine/algorithms/edited-nodes';
import { channelsFor } from '../../../src/engine/channels';
import { nodesIdentical } from '../../../src/engine/topology/uniform';
import { random, pick } from './support/random';
import {
  type Edit,
  builtTopology,
  lastNicEdit,
  leaving,
  nodeLinkEdit,
  resultFields,
  sharedLinks,
  withLinks,
  SLOW_NODE,
} from './support/edited-systems';

const EDITS: readonly Edit[] = [
  { name: 'no edit (identical nodes)', apply: (system) => system },
  nodeLinkEdit('one degraded link of a random node', [0.05, 0.25, 0.5, 0.9, 1.5], leaving),
  lastNicEdit('one degraded NIC link of the last node'),
  SLOW_NODE,
  {
    name: 'one degraded leaf or spine link, sometimes a node link besides',
    apply(system, next) {
      const link = pick(next, sharedLinks(system));
      const other = next() < 0.5 ? Math.floor(next() * system.topology.links.length) : -1;
      return withLinks(system, (i) => (i === link ? pick(next, [0.05, 0.25, 0.5]) : i === other ? 0.5 : undefined));
    },
  },
];

/** Flows solved in the schedule's rounds across nodes on the fast path, and flows those rounds stand for. */
function solvedFlows(system: System, bytes: number): { solved: number; every: number } {
  const channels = channelsFor(system, 'hierarchical', 'Simple', bytes);
  const uniform = nodesIdentical(system);
  const ctx = {
    system,
    algorithm: 'hierarchical',
    kind: 'allreduce',
    bytes,
    protocol: 'Simple',
    channels,
    representative: uniform,
    reduceEdits: !uniform,
  } as const;
  let solved = 0;
  let every = 0;
  for (const round of buildHierarchical(ctx).rounds) {
    const first = round.flows[0];
    if (Math.floor(first.rank / system.gpusPerNode) === Math.floor(first.peer / system.gpusPerNode)) continue;
    solved += round.packed?.set.count ?? round.flows.length;
    every += round.flows.length;
  }
  return { solved, every };
}

/** A random H100 system with fewer NICs than GPUs: one NIC, one per two or four GPUs, or three for eight GPUs. */
function fewerNicsSystem(next: () => number): System {
  const gpusPerNode = pick(next, [2, 4, 8, 8]);
  const nics = pick(next, [1, gpusPerNode / 2, gpusPerNode === 8 ? 3 : 1, gpusPerNode === 8 ? 2 : 1]);
  return resolveSystem({
    gpu: 'H100-SXM',
    nodes: pick(next, [2, 3, 5, 9, 17, 33]),
    gpusPerNode,
    intraNode: 'nvswitch',
    nic: { gbps: pick(next, [200, 400]), perNode: nics },
    network: { nodesPerLeaf: pick(next, [1, 2, 3, 4, 32]), oversubscription: pick(next, [1, 1, 2]) },
  });
}

test('hierarchical with fewer NICs than GPUs solves a group per NIC and gives the unreduced results bit for bit', () => {
  let reduced = 0;
  let compared = 0;
  for (let seed = 1; seed <= 30; seed++) {
    const next = random(10400 + seed);
    const system = fewerNicsSystem(next);
    const edit = EDITS[seed % EDITS.length];
    const edited = edit.apply(system, next);
    const nics = system.fabric.nicsPerNode;
    const where = `seed ${10400 + seed} (${system.label}, ${nics} NICs, ${system.fabric.network?.nodesPerLeaf} a leaf, ${edit.name})`;
    const { solved, every } = solvedFlows(edited, 1 << 20);
    if (solved < every) reduced++;
    const sizes = [asBytes(pick(next, [8 << 10, 1 << 20])), asBytes(pick(next, [16 << 20, 256 << 20]))];
    for (const bytes of sizes) {
      const request = { bytes, algorithm: 'hierarchical' } as const;
      const fast = simulateCollective(edited, request);
      const unreduced = simulateCollective(edited, { ...request, trace: true });
      assert.deepEqual(resultFields(fast), resultFields(unreduced), `${where} ${bytes} B`);
      compared++;
      if (bytes > 1 << 20) continue;
      const full = simulateCollective(builtTopology(edited), request, { path: 'full' });
      for (const key of ['exchange', 'reduce', 'broadcast'] as const)
        assert.ok(Math.abs(fast.phases[key] - full.phases[key]) < 1, `${where} ${bytes} B: ${key}`);
      assert.ok(Math.abs(fast.timeUs - full.timeUs) < 1, `${where} ${bytes} B: ${fast.timeUs} µs`);
    }
  }
  assert.equal(compared, 60);
  // The reduction must have run (else this compares the pair-by-pair path with itself).
  assert.ok(reduced >= 20, `only ${reduced} systems were reduced`);
});

test('the groups across nodes are the GPUs on one NIC, touched groups and one stand-in of each NIC and shape', () => {
  // Eight GPUs on two NICs, six nodes, two a leaf: the last node's first NIC link at a quarter of its speed.
  const system = resolveSystem({
    gpu: 'H100-SXM',
    nodes: 6,
    gpusPerNode: 8,
    intraNode: 'nvswitch',
    nic: { gbps: 400, perNode: 2 },
    network: { nodesPerLeaf: 2 },
  });
  const edited = lastNicEdit('last NIC').apply(system, () => 0);
  const g = 8;
  const inter = {
    count: 6 * g,
    from: (i: number) => i,
    to: (i: number) => ((Math.floor(i / g) + 1) % 6) * g + (i % g),
  };
  const ctx = { system: edited, algorithm: 'hierarchical', kind: 'allreduce', bytes: 1 << 20 } as const;
  const chosen = chosenInterPairs({ ...ctx, protocol: 'Simple', channels: 2 }, inter, editedNodes(edited)!);
  // Node 0 to 1 stands for the groups within a leaf, node 1 to 2 for those across leaves (each NIC's group); the
  // last node's edit touches node 4's pairs into it and its own pairs.
  const nodesOf = (pairs: readonly number[]) => pairs.map((pair) => Math.floor(pair / g));
  const expected = [0, 1, 4, 5].flatMap((node) => Array.from({ length: g }, (_, l) => node * g + l));
  assert.deepEqual(chosen, expected, `nodes ${nodesOf(chosen ?? [])}`);
  // GPUs 0-3 share NIC 0 and 4-7 NIC 1.
  assert.deepEqual([...nicGroups(edited.fabric.network!, g, editedNodes(edited)!)!], [0, 0, 0, 0, 4, 4, 4, 4]);
});

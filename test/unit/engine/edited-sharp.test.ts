// Heterogeneity in proportion for NVLS across nodes (SHARP), CollNetDirect, CollNetChain and hierarchical: an edited
// system simulates the nodes an edit touches and one stand-in node (edited-nodes.ts; SHARP's streams and CollNet's
// intra-node stages), every leaf's aggregate (sharp-edited.ts), and for hierarchical's rings across nodes the edited
// rails and one stand-in rail (edited-classes.ts). The results must be the unreduced simulation's bit for bit: a
// traced run builds every flow of every node (a trace lists them all), so it is the node-by-node path the
// reduction replaces; the full expansion (every channel, every repetition, on the built topology) must agree to the
// microsecond, as it does for every fast path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asBytes, resolveSystem, simulateCollective, type Algorithm, type System } from '../../../src/engine/index';
import { editedNodes } from '../../../src/engine/algorithms/edited-nodes';
import { buildCollNet } from '../../../src/engine/algorithms/collnet';
import { buildHierarchical } from '../../../src/engine/algorithms/hierarchical';
import { buildNvls } from '../../../src/engine/algorithms/nvls';
import { channelsFor } from '../../../src/engine/channels';
import { nodesIdentical } from '../../../src/engine/topology/uniform';
import { random, pick } from './support/random';
import {
  type Edit,
  builtTopology,
  lastNicEdit,
  leaving,
  nodeLinkEdit,
  randomH100Spec,
  resultFields,
  sharedLinks,
  slowerRailEdit,
  withLinks,
  SLOW_NODE,
} from './support/edited-systems';

const EDITS: readonly Edit[] = [
  nodeLinkEdit('one degraded link of a random node', [0.05, 0.25, 0.5, 0.9], leaving),
  lastNicEdit('one degraded NIC link of the last node'),
  SLOW_NODE,
  {
    name: 'two degraded switch links on two nodes',
    apply(system, next) {
      const a = system.fabric.switchUplink(Math.floor(next() * system.ranks));
      const b = system.fabric.switchDownlink(Math.floor(next() * system.ranks));
      return withLinks(system, (i) => (i === a ? 0.1 : i === b ? 0.75 : undefined));
    },
  },
  {
    name: 'one degraded leaf or spine link, sometimes a node link besides',
    apply(system, next) {
      const shared = sharedLinks(system);
      const link = pick(next, shared);
      const other = next() < 0.5 ? Math.floor(next() * system.topology.links.length) : -1;
      return withLinks(system, (i) => (i === link ? pick(next, [0.05, 0.25, 0.5]) : i === other ? 0.5 : undefined));
    },
  },
  slowerRailEdit('one rail slower on every node (every node touched: not reduced)'),
];

const ALGORITHMS: readonly Algorithm[] = ['nvls', 'collnetdirect', 'collnetchain', 'hierarchical'];

const BUILDERS = {
  nvls: buildNvls,
  collnetdirect: buildCollNet,
  collnetchain: buildCollNet,
  hierarchical: buildHierarchical,
};

/** Flows solved in the schedule's rounds on the reducing path, and flows the rounds stand for. */
function solvedFlows(
  system: System,
  algorithm: keyof typeof BUILDERS,
  bytes: number,
): { solved: number; every: number } {
  const channels = channelsFor(system, algorithm, 'Simple', bytes);
  const ctx = { system, algorithm, kind: 'allreduce', bytes, protocol: 'Simple', channels, reduceEdits: true } as const;
  let solved = 0;
  let every = 0;
  for (const round of BUILDERS[algorithm](ctx).rounds) {
    solved += round.packed?.set.count ?? round.flows.length;
    every += round.flows.length;
  }
  return { solved, every };
}

test('an edited SHARP system gives the unreduced results bit for bit for NVLS, CollNet and hierarchical, and the full expansion to the µs', () => {
  let reduced = 0;
  let compared = 0;
  for (let seed = 1; seed <= 24; seed++) {
    const next = random(9700 + seed);
    const nodes = pick(next, [2, 3, 5, 17, 33]);
    const spec = randomH100Spec(next, nodes);
    const system = resolveSystem({ ...spec, network: { ...spec.network, sharp: true } });
    const edit = EDITS[seed % EDITS.length];
    const edited = edit.apply(system, next);
    const where = `seed ${9700 + seed} (${system.label}, ${system.fabric.network?.nodesPerLeaf} a leaf, ${edit.name})`;
    const chosen = nodesIdentical(edited) ? undefined : editedNodes(edited);
    if (chosen && chosen.nodes.length < nodes) {
      reduced++;
      // Where nodes can stand for others, each algorithm solves fewer flows than the node-by-node rounds hold.
      for (const algorithm of ALGORITHMS) {
        const { solved, every } = solvedFlows(edited, algorithm as keyof typeof BUILDERS, 1 << 20);
        assert.ok(solved < every, `${where} ${algorithm}: ${solved} of ${every} flows solved`);
      }
    }
    const sizes = [asBytes(pick(next, [8 << 10, 1 << 20])), asBytes(pick(next, [16 << 20, 256 << 20]))];
    for (const bytes of sizes) {
      for (const algorithm of ALGORITHMS) {
        const request = { bytes, algorithm };
        const fast = simulateCollective(edited, request);
        const unreduced = simulateCollective(edited, { ...request, trace: true });
        assert.deepEqual(resultFields(fast), resultFields(unreduced), `${where} ${algorithm} ${bytes} B`);
        compared++;
        // The full expansion runs every channel and chunk: it is compared at the smaller size.
        if (bytes > 1 << 20) continue;
        const full = simulateCollective(builtTopology(edited), request, { path: 'full' });
        for (const key of ['exchange', 'reduce', 'broadcast'] as const)
          assert.ok(Math.abs(fast.phases[key] - full.phases[key]) < 1, `${where} ${algorithm} ${bytes} B: ${key}`);
        assert.ok(Math.abs(fast.timeUs - full.timeUs) < 1, `${where} ${algorithm} ${bytes} B: ${fast.timeUs} µs`);
      }
    }
  }
  assert.equal(compared, 24 * 2 * ALGORITHMS.length);
  // The reduction must have run (else this compares the node-by-node path with itself).
  assert.ok(reduced >= 14, `only ${reduced} systems were reduced`);
});

test('the nodes an edit touches are the ones simulated besides the first unchanged node', () => {
  const system = resolveSystem({ ...randomH100Spec(random(3), 6), network: { nodesPerLeaf: 2, sharp: true } });
  const last = `n${system.nodes - 1}.`;
  const nic = system.topology.links.findIndex((l) => l.kind === 'network' && l.from.startsWith(last));
  assert.deepEqual(editedNodes(withLinks(system, (i) => (i === nic ? 0.25 : undefined)))?.nodes, [0, 5]);
  const up = system.fabric.switchUplink(1);
  const nodeZero = editedNodes(withLinks(system, (i) => (i === up ? 0.5 : undefined)));
  assert.deepEqual(nodeZero?.nodes, [0, 1]);
  assert.equal(nodeZero?.standIn, 1);
  // A leaf or spine link touches no node; an unedited system has nothing to stand in for.
  const spine = system.topology.links.findIndex((l) => l.from === 'rail0.leaf1' && l.to === 'spine');
  const leaf = editedNodes(withLinks(system, (i) => (i === spine ? 0.5 : undefined)));
  assert.deepEqual(leaf?.nodes, [0]);
  assert.deepEqual(leaf?.sharedChanged, [spine]);
  assert.equal(leaf?.nodeOfLink(up), 0);
});

test("a changed leaf or spine link adds its leaf's aggregates to the stand-in leaf's, not every leaf's", () => {
  const spec = randomH100Spec(random(4), 8);
  const system = resolveSystem({ ...spec, network: { nodesPerLeaf: 2, sharp: true } });
  const shared = new Set(sharedLinks(system));
  /** The aggregates NVLS solves (flows on leaf and spine links only), with `link` at a quarter of its speed. */
  const aggregates = (link: number): number => {
    const edited = withLinks(system, (i) => (i === link ? 0.25 : undefined));
    const bytes = 1 << 20;
    const channels = channelsFor(edited, 'nvls', 'Simple', bytes);
    const ctx = { system: edited, algorithm: 'nvls', kind: 'allreduce', bytes, protocol: 'Simple', channels } as const;
    let count = 0;
    for (const round of buildNvls({ ...ctx, reduceEdits: true }).rounds) {
      const set = round.packed!.set;
      for (let f = 0; f < set.count; f++) {
        let own = true;
        for (let k = set.start[f]; k < set.start[f + 1]; k++) own &&= shared.has(set.resource[k]);
        if (own) count++;
      }
    }
    return count;
  };
  const last = `n${system.nodes - 1}.`;
  const nic = system.topology.links.findIndex((l) => l.kind === 'network' && l.from.startsWith(last));
  const uplink = system.topology.links.findIndex((l) => l.from === 'rail0.leaf2' && l.to === 'spine');
  const standIn = aggregates(nic);
  // Four leaves: the NIC edit solves the first leaf's aggregates, the uplink edit leaf 2's besides.
  assert.ok(standIn > 0);
  assert.equal(aggregates(uplink), standIn + standIn / system.gpusPerNode);
});

test('NVLS across nodes with fewer NICs than GPUs solves the touched nodes and a stand-in node, bit for bit', () => {
  let reduced = 0;
  for (let seed = 1; seed <= 8; seed++) {
    const next = random(9750 + seed);
    const spec = randomH100Spec(next, pick(next, [3, 5, 17]));
    const g = Math.max(4, spec.gpusPerNode);
    const system = resolveSystem({
      ...spec,
      gpusPerNode: g,
      nic: { gbps: 400, perNode: g / 2 },
      network: { ...spec.network, sharp: true },
    });
    const edit = EDITS[seed % 3];
    const edited = edit.apply(system, next);
    const where = `seed ${9750 + seed} (${system.label}, ${edit.name})`;
    const { solved, every } = solvedFlows(edited, 'nvls', 1 << 20);
    if (solved < every) reduced++;
    for (const bytes of [asBytes(1 << 20), asBytes(pick(next, [16 << 20, 256 << 20]))]) {
      const request = { bytes, algorithm: 'nvls' } as const;
      const fast = simulateCollective(edited, request);
      const unreduced = simulateCollective(edited, { ...request, trace: true });
      assert.deepEqual(resultFields(fast), resultFields(unreduced), `${where} ${bytes} B`);
    }
  }
  assert.ok(reduced >= 6, `only ${reduced} systems were reduced`);
});

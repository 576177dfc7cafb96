// Heterogeneity in proportion for a degraded leaf or spine link: such a link serves the nodes of one leaf, but of one
// rail only, so NVLSTree and the tree simulate that rail over every node plus one stand-in rail and the stand-in
// switch groups (algorithms/edited-classes.ts) instead of running node by node. Their results must be the unreduced
// run's bit for bit: a traced run builds every flow of every node (a trace lists them all). The full expansion must
// agree to the microsecond, as it does for every fast path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asBytes, resolveSystem, simulateCollective, type Protocol, type System } from '../../../src/engine/index';
import { editedClasses } from '../../../src/engine/algorithms/edited-classes';
import { nodesIdentical } from '../../../src/engine/topology/uniform';
import { random, pick } from './support/random';
import { builtTopology, randomH100Spec, resultFields, sharedLinks, withLinks } from './support/edited-systems';

/** The rail a leaf or spine link belongs to, from its name (`rail3.leaf1->spine` or `spine->rail3.leaf1`). */
function railOf(system: System, link: number): number {
  const match = /rail(\d+)\./.exec(system.topology.links[link].id);
  assert.ok(match, `link ${system.topology.links[link].id} names its rail`);
  return Number(match[1]);
}

test('a degraded leaf or spine link gives the unreduced results bit for bit (NVLSTree and tree), and the full expansion to the µs', () => {
  let reduced = 0;
  let crossed = 0;
  let compared = 0;
  for (let seed = 1; seed <= 30; seed++) {
    const next = random(9300 + seed);
    const nodes = pick(next, [2, 3, 5, 9, 17, 33]);
    const spec = randomH100Spec(next, nodes);
    const system = resolveSystem({ ...spec, network: { nodesPerLeaf: pick(next, [1, 2, 3, 4, 5, 8, 32]) } });
    const shared = sharedLinks(system);
    // One leaf or spine link at a random rate, sometimes a second one (of any rail).
    const first = pick(next, shared);
    const second = next() < 0.3 ? pick(next, shared) : -1;
    const rates = new Map([
      [first, pick(next, [0.05, 0.25, 0.5, 0.9, 1.5])],
      [second, pick(next, [0.1, 0.5])],
    ]);
    const edited = withLinks(system, (i) => (i === first || i === second ? rates.get(i) : undefined));
    const where = `seed ${9300 + seed} (${system.label}, ${system.fabric.network?.nodesPerLeaf} a leaf, links ${first} ${second})`;
    assert.equal(nodesIdentical(edited), false, `${where}: the shared links differ`);
    const classes = editedClasses(edited);
    assert.ok(classes, `${where}: a leaf or spine link is reduced`);
    if (classes.rails.length < system.gpusPerNode) reduced++;
    // A link that the rails' routes cross marks its rail; one they never cross (a single leaf's uplink) marks none.
    const expected = new Set<number>();
    for (const link of [first, second]) {
      if (link < 0) continue;
      const leaves = Math.ceil(nodes / system.fabric.network!.nodesPerLeaf);
      if (leaves > 1) expected.add(railOf(system, link));
    }
    assert.deepEqual(
      classes.editedRails,
      [...expected].sort((a, b) => a - b),
      where,
    );
    if (expected.size > 0) crossed++;
    const protocol = pick<Protocol>(next, ['Simple', 'LL128', 'LL']);
    const sizes = [asBytes(pick(next, [64 << 10, 1 << 20])), asBytes(pick(next, [16 << 20, 256 << 20]))];
    for (const bytes of sizes) {
      for (const algorithm of ['nvlstree', 'tree'] as const) {
        const request = { bytes, algorithm, protocol: algorithm === 'nvlstree' ? ('Simple' as const) : protocol };
        const fast = simulateCollective(edited, request);
        const unreduced = simulateCollective(edited, { ...request, trace: true });
        assert.deepEqual(
          resultFields(fast),
          resultFields(unreduced),
          `${where} ${algorithm} ${request.protocol} ${bytes} B`,
        );
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
  assert.equal(compared, 120);
  // The reduction must have run, on links the rails cross (else this compares the node-by-node path with itself).
  assert.ok(reduced >= 20, `only ${reduced} systems were reduced`);
  assert.ok(crossed >= 12, `only ${crossed} edits touched a rail`);
});

test('a degraded leaf or spine link touches the one rail that crosses it', () => {
  const spec = {
    gpu: 'H100-SXM',
    nodes: 5,
    gpusPerNode: 4,
    intraNode: 'nvswitch',
    nic: { gbps: 400, perNode: 4 },
    network: { nodesPerLeaf: 2 },
  } as const;
  const system = resolveSystem(spec);
  const link = (id: string): number => system.topology.links.findIndex((l) => l.id === id);
  const up = link('rail2.leaf1->spine');
  const down = link('spine->rail0.leaf2');
  assert.ok(up >= 0 && down >= 0);
  const upEdit = editedClasses(withLinks(system, (i) => (i === up ? 0.25 : undefined)));
  assert.deepEqual(upEdit, { rails: [0, 2], switchRanks: [0, 1, 2, 3], editedRails: [2], editedRanks: [] });
  // Rail 0 is edited, so the next rail stands for the unchanged ones.
  const downEdit = editedClasses(withLinks(system, (i) => (i === down ? 0.5 : undefined)));
  assert.deepEqual(downEdit?.rails, [0, 1]);
  assert.deepEqual(downEdit?.editedRails, [0]);
  // Under one leaf no route crosses the leaf's uplink: the edit touches no rail.
  const one = resolveSystem({ ...spec, network: { nodesPerLeaf: 8 } });
  const alone = one.topology.links.findIndex((l) => l.id === 'rail1.leaf0->spine');
  const aloneEdit = editedClasses(withLinks(one, (i) => (i === alone ? 0.25 : undefined)));
  assert.deepEqual(aloneEdit?.rails, [0]);
  assert.deepEqual(aloneEdit?.editedRails, []);
});

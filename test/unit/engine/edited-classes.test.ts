// Heterogeneity in proportion: an edited NVLSTree system (a degraded link, a slow node, a different rail) simulates
// the rails and NVSwitch ranks its edit touches plus one stand-in for the unchanged ones (algorithms/edited-classes.ts).
// Its results must be the unreduced simulation's bit for bit: a traced run builds every flow (a trace lists them all),
// so it is the node-by-node path the reduction replaces, and the full expansion (every channel, every repetition,
// on the built topology) must agree to the microsecond as it does for every fast path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asBytes, resolveSystem, simulateCollective } from '../../../src/engine/index';
import { editedClasses } from '../../../src/engine/algorithms/edited-classes';
import { linkEdits, nodesAlikeByEdits } from '../../../src/engine/topology/edits';
import { checkNodesIdentical, nodesIdentical } from '../../../src/engine/topology/uniform';
import { assertClose } from './support/close';
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
  nodeLinkEdit('one degraded link of a random node', [0.25, 0.5, 0.9], leaving),
  lastNicEdit("one degraded NIC link of the last node (the benchmark's edit)"),
  SLOW_NODE,
  slowerRailEdit('one rail slower on every node'),
  {
    name: 'two degraded switch links on two nodes',
    apply(system, next) {
      const a = system.fabric.switchUplink(Math.floor(next() * system.ranks));
      const b = system.fabric.switchDownlink(Math.floor(next() * system.ranks));
      return withLinks(system, (i) => (i === a ? 0.5 : i === b ? 0.75 : undefined));
    },
  },
  {
    name: 'one degraded leaf or spine link (its rail is simulated over every node)',
    apply(system, next) {
      const shared = sharedLinks(system);
      if (shared.length === 0) return system;
      const link = pick(next, shared);
      return withLinks(system, (i) => (i === link ? 0.5 : undefined));
    },
  },
];

test('an edited NVLSTree system gives the unreduced results bit for bit, and the full expansion to the µs', () => {
  let reduced = 0;
  let compared = 0;
  for (let seed = 1; seed <= 36; seed++) {
    const next = random(7000 + seed);
    const nodes = pick(next, [2, 3, 5, 17, 33]);
    const system = resolveSystem(randomH100Spec(next, nodes));
    const edit = EDITS[seed % EDITS.length];
    const edited = edit.apply(system, next);
    const where = `seed ${7000 + seed} (${system.label}, ${edit.name})`;
    const classes = nodesIdentical(edited) ? undefined : editedClasses(edited);
    if (classes && classes.rails.length < system.gpusPerNode) reduced++;
    for (const bytes of [asBytes(pick(next, [64 << 10, 4 << 20])), asBytes(pick(next, [16 << 20, 64 << 20]))]) {
      for (const algorithm of ['nvlstree', 'auto'] as const) {
        const request = { bytes, algorithm, ...(algorithm === 'nvlstree' ? { protocol: 'Simple' as const } : {}) };
        const fast = simulateCollective(edited, request);
        const unreduced = simulateCollective(edited, { ...request, trace: true });
        // NCCL's choice may be a ring, whose reduction (ring-edited.ts) agrees to rounding, not bit for bit.
        if (fast.algorithm === 'ring')
          assertClose(resultFields(fast), resultFields(unreduced), `${where} ${algorithm} ${bytes} B`);
        else assert.deepEqual(resultFields(fast), resultFields(unreduced), `${where} ${algorithm} ${bytes} B`);
        compared++;
        // The full expansion runs every channel and chunk: it is compared at the smaller size.
        if (bytes > 4 << 20) continue;
        const full = simulateCollective(builtTopology(edited), request, { path: 'full' });
        for (const key of ['exchange', 'reduce', 'broadcast'] as const)
          assert.ok(Math.abs(fast.phases[key] - full.phases[key]) < 1, `${where} ${algorithm} ${bytes} B: ${key}`);
        assert.ok(Math.abs(fast.timeUs - full.timeUs) < 1, `${where} ${algorithm} ${bytes} B: ${fast.timeUs} µs`);
      }
    }
  }
  assert.ok(compared >= 140, `only ${compared} comparisons ran`);
  // The reduction must have run where it can (else this compares the node-by-node path with itself).
  assert.ok(reduced >= 12, `only ${reduced} systems were reduced`);
});

test('the rails and ranks an edit touches are the ones simulated besides one stand-in', () => {
  const system = resolveSystem(randomH100Spec(random(1), 6));
  const g = system.gpusPerNode;
  const last = `n${system.nodes - 1}.`;
  const nic = system.topology.links.findIndex((l) => l.kind === 'network' && l.from.startsWith(last));
  const nicEdit = editedClasses(withLinks(system, (i) => (i === nic ? 0.25 : undefined)));
  assert.ok(nicEdit, 'a degraded NIC link is reduced');
  // One rail carries the link, one more stands for the rest; every rank's switch flows are alike.
  assert.equal(nicEdit.rails.length, 2);
  assert.deepEqual(
    nicEdit.switchRanks,
    Array.from({ length: g }, (_, l) => l),
  );
  const rank = system.ranks - 1;
  const up = system.fabric.switchUplink(rank);
  const switchEdit = editedClasses(withLinks(system, (i) => (i === up ? 0.5 : undefined)));
  assert.ok(switchEdit);
  assert.deepEqual(switchEdit.rails, [0]);
  assert.deepEqual(switchEdit.switchRanks, [...Array.from({ length: g }, (_, l) => l), rank]);
  // A resolved system has no edits; links that no longer follow the resolved layout are not reduced.
  assert.equal(linkEdits(system)?.changed.length, 0);
  const fewer = { ...system, topology: { ...system.topology, links: system.topology.links.slice(0, -1) } };
  assert.equal(editedClasses(fewer), undefined);
});

test('the verdict from the changed links equals the check of every link (random edits, all nodes alike or not)', () => {
  let alike = 0;
  for (let seed = 1; seed <= 40; seed++) {
    const next = random(8000 + seed);
    const base = resolveSystem({
      ...randomH100Spec(next, pick(next, [2, 3, 7])),
      gpu: pick(next, ['H100-SXM', 'A100-SXM']),
    });
    const count = base.topology.links.length;
    const perNode = base.topology.links.filter((l) => l.from.startsWith('n0.')).length;
    // Either one link anywhere, or one link inside node 0 changed alike on every node (the nodes stay alike
    // unless it carries one rail's traffic).
    const everywhere = next() < 0.6;
    const inside = base.topology.links.flatMap((l, i) =>
      l.from.startsWith('n0.') && l.to.startsWith('n0.') ? [i] : [],
    );
    const link = everywhere ? pick(next, inside) : Math.floor(next() * count);
    const factor = pick(next, [0.5, 1.5]);
    const place = (id: string): string => id.replace(/^n\d+\./, '');
    const target = base.topology.links[link];
    const edited = withLinks(base, (i) => {
      const l = base.topology.links[i];
      if (!everywhere) return i === link ? factor : undefined;
      return place(l.from) === place(target.from) && place(l.to) === place(target.to) ? factor : undefined;
    });
    const byEdits = nodesAlikeByEdits(edited);
    assert.notEqual(byEdits, undefined, `seed ${8000 + seed}: the edits are known`);
    const rails = checkNodesIdentical(edited);
    if (rails) alike++;
    assert.equal(nodesIdentical(edited), rails, `seed ${8000 + seed}: link ${link} (${perNode} per node)`);
  }
  assert.ok(alike >= 5 && alike <= 35, `${alike} of 40 edited systems had alike nodes`);
});

// Heterogeneity in proportion for NCCL's tree: on an edited system (a slow node, a degraded NIC link or NVLink, a
// different rail) whose reductions' memories cannot bind, the fast path leaves them out and simulates the groups the
// edit touches and one stand-in of each kind (src/engine/algorithms/tree-edited.ts). Its results must be the
// unreduced run's bit for bit: a traced run builds every flow of every node (a trace lists them all). The full
// expansion, which charges every memory and runs every channel and chunk, must agree to the microsecond, which
// checks that leaving the memories out changed nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  asBytes,
  asGBps,
  resolveSystem,
  simulateCollective,
  type Protocol,
  type System,
  type SystemSpec,
} from '../../../src/engine/index';
import { channelsFor } from '../../../src/engine/channels';
import { editedTreeShape } from '../../../src/engine/algorithms/tree-edited';
import { idleTreeMemory } from '../../../src/engine/algorithms/tree-memory';
import { treeShape } from '../../../src/engine/algorithms/tree-shape';
import type { BuildContext } from '../../../src/engine/algorithms/context';
import { random, pick } from './support/random';
import {
  type Edit,
  builtTopology,
  nodeLinkEdit,
  randomH100Spec,
  resultFields,
  slowerRailEdit,
  withLinks,
  SLOW_NODE,
} from './support/edited-systems';

/** A random H100 system with a NIC per GPU; a few have memory slow enough that it may bind (never reduced). */
function randomSpec(next: () => number, nodes: number): SystemSpec {
  return {
    ...randomH100Spec(next, nodes),
    ...(next() < 0.2 ? { overrides: { hbmGBps: asGBps(pick(next, [400, 900])) } } : {}),
  };
}

const EDITS: readonly Edit[] = [
  SLOW_NODE,
  nodeLinkEdit(
    'one degraded NIC-side link of a random node',
    [0.25, 0.5, 1.5],
    (l, node, nodes) => nodes.get(l.from) === node && (l.kind === 'network' || l.kind === 'pcie'),
  ),
  {
    name: 'one degraded NVLink (a switch uplink or downlink)',
    apply(system, next) {
      const rank = Math.floor(next() * system.ranks);
      const link = next() < 0.5 ? system.fabric.switchUplink(rank) : system.fabric.switchDownlink(rank);
      return withLinks(system, (i) => (i === link ? pick(next, [0.25, 0.5]) : undefined));
    },
  },
  slowerRailEdit('a different rail (one NIC slower on every node)'),
];

/** The context the fast path builds the tree with on an edited system. */
function fastContext(system: System, bytes: number, protocol: Protocol): BuildContext {
  const channels = channelsFor(system, 'tree', protocol, bytes);
  return { system, algorithm: 'tree', kind: 'allreduce', bytes, protocol, channels, reduceEdits: true };
}

test('a forced tree on an edited system gives the unreduced results bit for bit, and the full expansion to the µs', () => {
  let reduced = 0;
  let refused = 0;
  let compared = 0;
  for (let seed = 1; seed <= 32; seed++) {
    const next = random(7700 + seed);
    const nodes = pick(next, [2, 3, 5, 17, 33]);
    const system = resolveSystem(randomSpec(next, nodes));
    const edit = EDITS[seed % EDITS.length];
    const edited = edit.apply(system, next);
    const where = `seed ${7700 + seed} (${system.label}, hbm ${system.hbmGBps}, ${edit.name})`;
    const protocol = pick<Protocol>(next, ['Simple', 'LL128', 'LL']);
    const sizes = [asBytes(pick(next, [4 << 10, 64 << 10, 1 << 20])), asBytes(pick(next, [16 << 20, 256 << 20]))];
    const ctx = fastContext(edited, sizes[1], protocol);
    const classes = idleTreeMemory(ctx);
    if (classes) {
      // Fewer edges are simulated than the node-by-node shape has (each depth still counts every edge's term).
      const count = (shape: ReturnType<typeof treeShape>): number =>
        shape.byDepth.reduce((sum, depth) => sum + depth.child.length, 0);
      const every = count(treeShape({ ...ctx, reduceEdits: false }));
      const kept = count(editedTreeShape(ctx, classes));
      if (kept < every) reduced++;
    } else refused++;
    for (const bytes of sizes) {
      const request = { bytes, algorithm: 'tree' as const, protocol };
      const fast = simulateCollective(edited, request);
      const unreduced = simulateCollective(edited, { ...request, trace: true });
      assert.deepEqual(resultFields(fast), resultFields(unreduced), `${where} ${protocol} ${bytes} B`);
      compared++;
      // The full expansion runs every channel and chunk: it is compared at the smaller size.
      if (bytes > 1 << 20) continue;
      const full = simulateCollective(builtTopology(edited), request, { path: 'full' });
      for (const key of ['exchange', 'reduce', 'broadcast'] as const)
        assert.ok(Math.abs(fast.phases[key] - full.phases[key]) < 1, `${where} ${protocol} ${bytes} B: ${key}`);
      assert.ok(Math.abs(fast.timeUs - full.timeUs) < 1, `${where} ${protocol} ${bytes} B: ${fast.timeUs} µs`);
    }
  }
  assert.equal(compared, 64);
  // The reduction must have run where it can (else this compares the node-by-node path with itself), and memory
  // slow enough to bind must have been refused.
  assert.ok(reduced >= 16, `only ${reduced} systems were reduced`);
  assert.ok(refused >= 2, `only ${refused} systems were refused`);
});

test('memory that could bind is charged: the tree is then neither reduced nor changed', () => {
  const spec: SystemSpec = {
    gpu: 'H100-SXM',
    nodes: 5,
    gpusPerNode: 4,
    intraNode: 'nvswitch',
    nic: { gbps: 400, perNode: 4 },
    network: { nodesPerLeaf: 2 },
  };
  const link = (system: System): number =>
    system.topology.links.findIndex((l) => l.kind === 'network' && l.from.startsWith('n4.'));
  const edit = (system: System): System => withLinks(system, (i) => (i === link(system) ? 0.25 : undefined));
  // Resolved H100 memory (3,350 GB/s) takes three bytes per reduced byte from a 355 GB/s NVLink and a 48 GB/s
  // PCIe link into the GPU: 1,210 GB/s at most, never tight. At 1,200 GB/s it could be.
  const fast = edit(resolveSystem(spec));
  assert.ok(idleTreeMemory(fastContext(fast, 1 << 26, 'Simple')));
  assert.ok(idleTreeMemory(fastContext(fast, 1 << 26, 'LL')), 'LL moves half as many payload bytes per wire byte');
  const slow = edit(resolveSystem({ ...spec, overrides: { hbmGBps: asGBps(1200) } }));
  assert.equal(idleTreeMemory(fastContext(slow, 1 << 26, 'Simple')), undefined);
  assert.ok(idleTreeMemory(fastContext(slow, 1 << 26, 'LL')), 'under LL the same memory takes at most 605 GB/s');
  // The full path's reference charges every memory, and a system of identical nodes is represented already.
  assert.equal(idleTreeMemory({ ...fastContext(fast, 1 << 26, 'Simple'), reference: true }), undefined);
  assert.equal(
    idleTreeMemory({ ...fastContext(resolveSystem(spec), 1 << 26, 'Simple'), representative: true }),
    undefined,
  );
});

test("the reduced shape keeps the node-by-node shape's byte terms, sample paths and edge order", () => {
  let checked = 0;
  for (let seed = 1; seed <= 12; seed++) {
    const next = random(7800 + seed);
    const system = resolveSystem({ ...randomSpec(next, pick(next, [3, 17, 33])), overrides: undefined });
    const edited = EDITS[seed % EDITS.length].apply(system, next);
    const ctx = fastContext(edited, pick(next, [4 << 10, 1 << 20, 256 << 20]), pick(next, ['Simple', 'LL'] as const));
    const classes = idleTreeMemory(ctx);
    if (!classes) continue;
    const every = treeShape({ ...ctx, reduceEdits: false });
    const kept = editedTreeShape(ctx, classes);
    const where = `seed ${7800 + seed} (${system.label}, ${ctx.channels} channels)`;
    assert.deepEqual(kept.weights, every.weights, where);
    assert.equal(kept.byDepth.length, every.byDepth.length, where);
    every.byDepth.forEach((depth, i) => {
      const reduced = kept.byDepth[i];
      // Every edge's term, in order: the runs expand to the weights of the node-by-node edges.
      const terms = (reduced.termRuns ?? []).flatMap((run) => Array<number>(run.count).fill(run.weight));
      assert.deepEqual(
        terms,
        depth.channelClass.map((c) => every.weights[c]),
        `${where}: depth ${i + 1} terms`,
      );
      assert.deepEqual(reduced.samplePaths, depth.samplePaths, `${where}: depth ${i + 1} samples`);
      // The kept edges are node-by-node edges, in the same order, with the same routes.
      const key = (shape: typeof depth, j: number): string =>
        `${shape.channelClass[j]}:${shape.child[j]}:${shape.parent[j]}:${shape.upRoutes[j]}:${shape.downRoutes[j]}`;
      const all = depth.child.map((_, j) => key(depth, j));
      let at = 0;
      for (let j = 0; j < reduced.child.length; j++) {
        while (at < all.length && all[at] !== key(reduced, j)) at++;
        assert.ok(at < all.length, `${where}: depth ${i + 1} edge ${key(reduced, j)} out of order or unknown`);
        at++;
      }
    });
    checked++;
  }
  assert.ok(checked >= 6, `only ${checked} shapes were compared`);
});

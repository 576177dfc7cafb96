// A trace names the links each span crosses. Resolution leaves the per-node links unbuilt (compact-topology.test.ts),
// and the ids are answered from the layout (topology/link-ids.ts): node 0's ids renamed for node k and for the leaf
// k hangs from. These tests hold every answer against the built links, check that the answers say no to ids of a
// node past the last, of the wrong leaf or of two nodes, and that a trace summarised per node names the same links
// as one drawn from the built links while building none.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  LazyDrawnTrace,
  asBytes,
  resolveSystem,
  simulateCollective,
  summarisedCollectiveTrace,
  type CollectiveResult,
  type Span,
  type System,
  type SystemSpec,
} from '../../../src/engine/index';
import { PRESETS } from '../../../src/engine/topology/presets';
import { linkIds, materialised } from '../../../src/engine/topology/link-table';

const SPECS: readonly SystemSpec[] = [
  ...Object.values(PRESETS)
    .filter((spec) => spec.nic !== undefined)
    .flatMap((spec) => [2, 40].map((nodes) => ({ ...spec, nodes }))),
  // Leaves of one to three nodes, the last one partly filled where the node count is no multiple of that.
  leafed({ gpu: 'H100-SXM', gpusPerNode: 8, intraNode: 'nvswitch' }, [400, 4], 9, 2),
  leafed({ gpu: 'V100-SXM', gpusPerNode: 8, intraNode: 'nvlink-mesh' }, [100, 2], 7, 3),
  leafed({ gpu: 'L40S', gpusPerNode: 4, intraNode: 'pcie' }, [100, 1], 5, 1),
];

/** A system of `nodes` nodes whose NICs (`gbps`, `perNode`) hang from leaves of `nodesPerLeaf` nodes. */
function leafed(
  node: Pick<SystemSpec, 'gpu' | 'gpusPerNode' | 'intraNode'>,
  [gbps, perNode]: [gbps: number, perNode: number],
  nodes: number,
  nodesPerLeaf: number,
): SystemSpec {
  return { ...node, nodes, nic: { gbps, perNode }, network: { nodesPerLeaf } };
}

test('every link id answered from the layout equals the built link, and only built ids are known', () => {
  for (const spec of SPECS) {
    const system = resolveSystem(spec);
    const ids = linkIds(system.topology);
    const built = resolveSystem(spec).topology.links;
    const where = `${system.label}, ${spec.nodes} nodes`;
    for (let i = 0; i < built.length; i++) {
      assert.equal(ids.id(i), built[i].id, `${where}: link ${i}`);
      assert.equal(ids.has(built[i].id), true, `${where}: ${built[i].id}`);
    }
    assert.equal(materialised(system.topology), false, `${where}: naming the links built them`);
    const known = new Set(built.map((l) => l.id));
    // The same link on a node past the last, under another leaf, or between two nodes is not a link.
    const last = spec.nodes - 1;
    const wrong = built.flatMap((l) => [
      l.id.replaceAll(`n${last}.`, `n${spec.nodes}.`),
      l.id.replace(/\.leaf(\d+)/, (_, leaf: string) => `.leaf${Number(leaf) + 1}`),
      l.id.replace(/^n0\./, 'n1.'),
    ]);
    for (const id of wrong) assert.equal(ids.has(id), known.has(id), `${where}: ${id}`);
  }
});

test('a summarised trace names the same links as one drawn from the built links, and builds none', () => {
  // 40 nodes of 8 GPUs: two leaves per rail (32 nodes a leaf), so the NIC links of nodes 32.. name leaf 1.
  for (const algorithm of ['ring', 'nvlstree'] as const) {
    const spec = { ...PRESETS['dgx-h100'], nodes: 40 };
    const request = { bytes: asBytes(2 ** 24), algorithm, trace: true };
    const lazy = resolveSystem(spec);
    const simulated = simulateCollective(lazy, request);
    const summary = summarisedCollectiveTrace(lazy, ...withTrace(simulated));
    assert.equal(materialised(lazy.topology), false, `${algorithm}: the trace built every node's links`);
    const resolved = resolveSystem(spec);
    const plain = { ...resolved, topology: { vertices: resolved.topology.vertices, links: resolved.topology.links } };
    const referenceRun = simulateCollective(plain, request);
    assert.deepEqual(simulated.trace, referenceRun.trace, `${algorithm}: the simulated spans`);
    const reference = summarisedCollectiveTrace(plain, ...withTrace(referenceRun));
    assert.deepEqual(summary, reference, `${algorithm}: the summary`);
    // Node 35's spans, mostly mirrored from other nodes': their links are moved onto node 35 and its leaf.
    const node35 = (system: System, run: CollectiveResult): Span[] => {
      const drawn = new LazyDrawnTrace(system, run, run.trace!);
      const spans: Span[] = [];
      for (let rank = 35 * 8; rank < 36 * 8; rank++)
        for (const item of drawn.rankItems(rank)) if (item.span) spans.push(item.span);
      return spans;
    };
    const drawn = node35(lazy, simulated);
    assert.deepEqual(drawn, node35(plain, referenceRun), `${algorithm}: node 35`);
    assert.equal(materialised(lazy.topology), false, `${algorithm}: mirroring built every node's links`);
    assert.ok(
      drawn.some((s) => s.links.some((id) => /^n35\.nic\d+->rail\d+\.leaf1$/.test(id))),
      `${algorithm}: no span of node 35 crosses its leaf`,
    );
  }
});

function withTrace<R extends { trace?: unknown }>(result: R): [R, NonNullable<R['trace']>] {
  return [result, result.trace as NonNullable<R['trace']>];
}

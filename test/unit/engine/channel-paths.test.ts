// channelPaths: every channel's ring visits every GPU once, every tree spans the GPUs, every vertex id is one of
// the topology's, and the algorithm and channel count agree with what simulateCollective runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  channelPaths,
  channelPlan,
  EngineError,
  presetSystem,
  resolveSystem,
  simulateCollective,
  type ChannelPath,
  type System,
  asBytes,
} from '../../../src/engine/index';

const MiB = 2 ** 20;

function system(name: string, nodes?: number): System {
  return resolveSystem(presetSystem(name, nodes ? { nodes } : undefined)!);
}

function gpuIds(s: System): string[] {
  return s.topology.vertices.filter((v) => v.kind === 'gpu').map((v) => v.id);
}

function assertKnownVertices(s: System, paths: readonly ChannelPath[]): void {
  const known = new Set(s.topology.vertices.map((v) => v.id));
  for (const path of paths) {
    for (const id of path.vertices) assert.ok(known.has(id), `channel ${path.channel}: unknown vertex ${id}`);
    for (const [a, b] of path.edges)
      assert.ok(known.has(a) && known.has(b), `channel ${path.channel}: unknown edge ${a} → ${b}`);
  }
}

function assertRing(s: System, path: ChannelPath): void {
  const gpus = gpuIds(s);
  assert.equal(path.kind, 'ring');
  assert.equal(path.vertices.length, gpus.length, `channel ${path.channel} visits ${path.vertices.length} GPUs`);
  assert.deepEqual([...path.vertices].sort(), [...gpus].sort(), `channel ${path.channel} visits every GPU once`);
  // Each GPU sends to the next in order and the last closes the ring.
  assert.deepEqual(
    path.edges,
    path.vertices.map((v, i, all) => [v, all[(i + 1) % all.length]]),
  );
}

/** Every GPU but one root has exactly one parent, and walking up from any GPU reaches the root without a cycle. */
function assertSpanningTree(s: System, path: ChannelPath): void {
  const gpus = gpuIds(s);
  assert.equal(path.kind, 'tree');
  assert.equal(path.edges.length, gpus.length - 1, `channel ${path.channel}: n − 1 edges`);
  const parent = new Map<string, string>();
  for (const [p, c] of path.edges) {
    assert.ok(!parent.has(c), `channel ${path.channel}: ${c} has two parents`);
    parent.set(c, p);
  }
  const roots = gpus.filter((g) => !parent.has(g));
  assert.equal(roots.length, 1, `channel ${path.channel}: one root (${roots.join(', ')})`);
  assert.equal(path.vertices[0], roots[0], 'the vertex list starts at the root');
  for (const g of gpus) {
    let x = g;
    for (let hops = 0; x !== roots[0]; hops++) {
      assert.ok(hops <= gpus.length, `channel ${path.channel}: cycle above ${g}`);
      x = parent.get(x)!;
    }
  }
}

test('single-node NVSwitch rings: one ring per channel over all 8 GPUs, channels as the simulator runs', () => {
  const s = system('dgx-h100');
  const plan = channelPlan(s, { bytes: asBytes(256 * MiB), algorithm: 'ring' });
  const result = simulateCollective(s, { bytes: asBytes(256 * MiB), algorithm: 'ring' });
  assert.equal(plan.algorithm, 'ring');
  assert.equal(plan.channels, result.channels);
  assert.equal(plan.paths.length, result.channels);
  assert.deepEqual(
    plan.paths.map((p) => p.channel),
    Array.from({ length: plan.channels }, (_, i) => i),
  );
  for (const path of plan.paths) assertRing(s, path);
  assertKnownVertices(s, plan.paths);
});

test('the DGX-1 mesh rings follow NVLink: every hop is a direct NVLink between the two GPUs', () => {
  const s = system('dgx1-v100');
  const paths = channelPaths(s, { bytes: asBytes(64 * MiB), algorithm: 'ring' });
  const nvlinks = new Set(s.topology.links.filter((l) => l.kind === 'nvlink').map((l) => `${l.from}->${l.to}`));
  for (const path of paths) {
    assertRing(s, path);
    for (const [a, b] of path.edges)
      assert.ok(nvlinks.has(`${a}->${b}`), `channel ${path.channel}: ${a} → ${b} is an NVLink`);
  }
});

test('multi-node rings enter each node at a different GPU per channel class', () => {
  const s = system('dgx-h100', 2);
  const paths = channelPaths(s, { bytes: asBytes(256 * MiB), algorithm: 'ring' });
  assert.ok(paths.length >= 8);
  for (const path of paths) assertRing(s, path);
  assertKnownVertices(s, paths);
  // Classes 0 and 1 start node 0 at GPU 0 and GPU 1 respectively, so they cross the network on different NICs.
  assert.notEqual(paths[0].vertices[0], paths[1].vertices[0]);
});

test('trees: a double binary tree over 4 nodes, each channel a spanning tree, the two trees differ', () => {
  const s = system('dgx-a100', 4);
  const plan = channelPlan(s, { bytes: asBytes(64 * MiB), algorithm: 'tree' });
  assert.equal(plan.algorithm, 'tree');
  assert.equal(plan.paths.length, simulateCollective(s, { bytes: asBytes(64 * MiB), algorithm: 'tree' }).channels);
  for (const path of plan.paths) assertSpanningTree(s, path);
  assertKnownVertices(s, plan.paths);
  const key = (p: ChannelPath) =>
    p.edges
      .map((e) => e.join('>'))
      .sort()
      .join(' ');
  assert.notEqual(key(plan.paths[0]), key(plan.paths[1]), 'channels 0 and 1 run the two different trees');
  // Inside a node the tree is a chain, so exactly (nodes − 1) edges cross between nodes.
  const nodeOf = new Map(s.topology.vertices.map((v) => [v.id, v.node]));
  const crossing = plan.paths[0].edges.filter(([a, b]) => nodeOf.get(a) !== nodeOf.get(b));
  assert.equal(crossing.length, 3);
});

test('the engine’s own choice: NVLS on one H100 node is a star from the NVSwitch to every GPU', () => {
  const s = system('dgx-h100');
  const plan = channelPlan(s, { bytes: asBytes(256 * MiB) });
  assert.equal(plan.algorithm, simulateCollective(s, { bytes: asBytes(256 * MiB) }).algorithm);
  assert.equal(plan.algorithm, 'nvls');
  assertKnownVertices(s, plan.paths);
  const sw = s.topology.vertices.find((v) => v.kind === 'switch')!.id;
  for (const path of plan.paths) {
    assert.equal(path.vertices[0], sw);
    assert.deepEqual(
      path.edges.map(([a]) => a),
      gpuIds(s).map(() => sw),
    );
    assert.deepEqual(path.edges.map(([, b]) => b).sort(), gpuIds(s).sort());
  }
});

test('small messages run on fewer channels, and the paths follow', () => {
  const s = system('dgx-h100', 2);
  const small = channelPlan(s, { bytes: asBytes(4096), algorithm: 'ring', protocol: 'LL' });
  const large = channelPlan(s, { bytes: asBytes(512 * MiB), algorithm: 'ring', protocol: 'Simple' });
  assert.ok(small.paths.length < large.paths.length, `${small.paths.length} < ${large.paths.length}`);
  assert.equal(
    small.paths.length,
    simulateCollective(s, { bytes: asBytes(4096), algorithm: 'ring', protocol: 'LL' }).channels,
  );
});

test('bad requests fail with EngineError', () => {
  const s = system('dgx-h100');
  assert.throws(() => channelPaths(s, { bytes: asBytes(-1) }), EngineError);
  assert.throws(() => channelPaths(s, { bytes: asBytes(1024), algorithm: 'tree', kind: 'allgather' }), EngineError);
});

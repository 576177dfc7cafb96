// The topology panel's pure computations: utilisation from a trace, channel paths and the layered layout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  TraceBuilder,
  presetSystem,
  resolveSystem,
  simulateCollective,
  asGBps,
  asMicros,
  asBytes,
} from '../../src/engine/index';
import type { TopologyLink, TopologyVertex } from '../../src/protocol';
import { channelsFromTrace, layoutTopology, linkUtilisation, undirectedLinks } from '../../webview/topology/model';

const LINKS: TopologyLink[] = [
  { id: 'a->b', from: 'a', to: 'b', GBps: asGBps(100), latencyUs: asMicros(1), kind: 'nvlink' },
  { id: 'b->a', from: 'b', to: 'a', GBps: asGBps(100), latencyUs: asMicros(1), kind: 'nvlink' },
  { id: 'b->c', from: 'b', to: 'c', GBps: asGBps(50), latencyUs: asMicros(1), kind: 'nvlink' },
  { id: 'c->a', from: 'c', to: 'a', GBps: asGBps(50), latencyUs: asMicros(1), kind: 'nvlink' },
];

test('utilisation is bytes carried over capacity during the trace, capped at 1', () => {
  const builder = new TraceBuilder({ origin: 'test', title: 't', ranks: 3 });
  const lane = builder.lane('rank', 'rank 0', { rank: 0, node: 0 });
  // 10 µs at 100 GB/s is 1 MB of capacity: 0.5 MB is half; b->c at 50 GB/s gets 2 MB, more than it could carry.
  builder.add({
    lane,
    rank: 0,
    phase: 'exchange',
    step: 0,
    channel: 0,
    chunk: 0,
    bytes: asBytes(500_000),
    links: ['a->b'],
    startUs: asMicros(0),
    endUs: asMicros(10),
  });
  builder.add({
    lane,
    rank: 0,
    phase: 'exchange',
    step: 1,
    channel: 0,
    chunk: 0,
    bytes: asBytes(2_000_000),
    links: ['b->c'],
    startUs: asMicros(0),
    endUs: asMicros(10),
  });
  const { utilisation, bytes } = linkUtilisation(builder.build(), LINKS);
  assert.equal(utilisation.get('a->b'), 0.5);
  assert.equal(utilisation.get('b->c'), 1);
  assert.equal(utilisation.get('b->a'), 0);
  assert.equal(bytes.get('b->c'), 2_000_000);
  const pairs = undirectedLinks(LINKS, utilisation);
  assert.equal(pairs.length, 3, 'a->b and b->a share one line');
  assert.equal(pairs.find((p) => p.a === 'a' && p.b === 'b')?.utilisation, 0.5);
});

test('a ring channel is recognised from the links its spans used', () => {
  const builder = new TraceBuilder({ origin: 'test', title: 't', ranks: 3 });
  const lane = builder.lane('rank', 'rank 0', { rank: 0, node: 0 });
  for (const [i, link] of ['a->b', 'b->c', 'c->a'].entries())
    builder.add({
      lane,
      rank: 0,
      phase: 'exchange',
      step: i,
      channel: 1,
      chunk: 0,
      bytes: asBytes(1),
      links: [link],
      startUs: asMicros(i),
      endUs: asMicros(i + 1),
    });
  builder.add({
    lane,
    rank: 0,
    phase: 'exchange',
    step: 0,
    channel: 2,
    chunk: 0,
    bytes: asBytes(1),
    links: ['a->b', 'b->a'],
    startUs: asMicros(0),
    endUs: asMicros(1),
  });
  builder.add({
    lane,
    rank: 0,
    phase: 'exchange',
    step: 0,
    channel: 2,
    chunk: 0,
    bytes: asBytes(1),
    links: ['b->c'],
    startUs: asMicros(0),
    endUs: asMicros(1),
  });
  const channels = channelsFromTrace(builder.build(), LINKS);
  assert.deepEqual(
    channels.map((c) => [c.channel, c.kind, c.edges?.length]),
    [
      [1, 'ring', 3],
      [2, 'tree', 3],
    ],
  );
});

test('the layout puts GPUs above their switch inside each node, and the fabric below all nodes', () => {
  const system = resolveSystem(presetSystem('dgx-h100', { nodes: 2 })!);
  const vertices = system.topology.vertices as readonly TopologyVertex[];
  const layout = layoutTopology(vertices);
  assert.equal(layout.positions.size, vertices.length);
  assert.equal(layout.nodes.length, 2);
  const gpu = layout.positions.get(vertices.find((v) => v.kind === 'gpu' && v.node === 0)!.id)!;
  const nvswitch = layout.positions.get(vertices.find((v) => v.kind === 'switch' && v.node === 0)!.id)!;
  const fabric = vertices.filter((v) => v.node < 0).map((v) => layout.positions.get(v.id)!);
  assert.ok(gpu.y < nvswitch.y);
  assert.ok(fabric.length > 0 && fabric.every((p) => p.y > nvswitch.y + 100 && p.y < layout.height));
  const node1 = vertices.filter((v) => v.node === 1).map((v) => layout.positions.get(v.id)!.x);
  assert.ok(Math.min(...node1) > layout.nodes[1].x, 'node 1 vertices sit in node 1 box');
  // A ring trace over the engine's system uses some of these links.
  const trace = simulateCollective(presetSystem('dgx-h100')!, {
    bytes: asBytes(2 ** 24),
    algorithm: 'ring',
    trace: true,
  }).trace!;
  const single = resolveSystem(presetSystem('dgx-h100')!);
  const { utilisation } = linkUtilisation(trace, single.topology.links);
  assert.ok(
    [...utilisation.values()].some((u) => u > 0.1),
    'the ring keeps some links busy',
  );
});

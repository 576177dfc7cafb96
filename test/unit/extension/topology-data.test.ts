// topologyData: the topology panel's data carries every channel's ring or tree from the engine, follows the
// algorithm of a trace of the same system, and drops traces of other systems.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { channelPlan, presetSystem, resolveSystem, simulateCollective, asBytes } from '../../../src/engine/index';
import type { TopologyMessage } from '../../../src/protocol';
import { MAX_CHANNEL_EDGES, topologyData } from '../../../src/extension/glue/topology-data';

const MiB = asBytes(2 ** 20);
const h100x2 = resolveSystem(presetSystem('dgx-h100', { nodes: 2 })!);

test('channels for the selected bucket size, with vertex ids from the topology, survive posting', () => {
  const data = topologyData({ system: h100x2, label: h100x2.label, bytes: asBytes(25 * MiB) });
  const plan = channelPlan(h100x2, { bytes: asBytes(25 * MiB) });
  assert.equal(data.label, h100x2.label);
  assert.equal(data.channels?.length, plan.channels);
  assert.ok(plan.channels >= 2);
  const ids = new Set(data.vertices.map((v) => v.id));
  for (const path of data.channels!)
    for (const [a, b] of path.edges ?? []) assert.ok(ids.has(a) && ids.has(b), `${a} → ${b}`);
  // postMessage clones the data; the JSON form is what the panel's saved state keeps.
  const message: TopologyMessage = { type: 'topology', data };
  assert.deepEqual(JSON.parse(JSON.stringify(message)).data.channels, JSON.parse(JSON.stringify(data.channels)));
});

test('a trace of this system fixes the algorithm, so the overlay matches the coloured links', () => {
  const bytes = asBytes(25 * MiB);
  const result = simulateCollective(h100x2, { bytes, algorithm: 'ring', trace: true });
  const data = topologyData({ system: h100x2, label: h100x2.label, bytes, trace: result.trace });
  assert.equal(data.trace, result.trace);
  assert.ok(
    data.channels!.every((c) => c.kind === 'ring'),
    data.channels!.map((c) => c.kind).join(','),
  );
  assert.equal(data.channels!.length, result.channels);
  // The trace's spans on channel 0 run between the ring's neighbours.
  const ring = data.channels![0];
  const next = new Map(ring.edges!.map(([a, b]) => [a, b]));
  const gpuOfLink = new Map(h100x2.topology.links.map((l) => [l.id, l]));
  const span = result.trace!.spans.find((s) => s.channel === 0 && s.links.length > 0)!;
  const first = gpuOfLink.get(span.links[0])!;
  const last = gpuOfLink.get(span.links[span.links.length - 1])!;
  assert.equal(next.get(first.from), last.to);
});

test('a trace of another system is left out and the engine picks the channels itself', () => {
  const other = resolveSystem(presetSystem('dgx-a100')!);
  const trace = simulateCollective(other, { bytes: MiB, trace: true }).trace;
  const data = topologyData({ system: h100x2, label: h100x2.label, bytes: asBytes(25 * MiB), trace });
  assert.equal(data.trace, undefined);
  assert.equal(data.channels?.length, channelPlan(h100x2, { bytes: asBytes(25 * MiB) }).channels);
});

test('on a large cluster the channels sent stay under the edge budget, and at least one is sent', () => {
  const big = resolveSystem(presetSystem('dgx-h100', { nodes: 512 })!);
  const data = topologyData({ system: big, label: big.label, bytes: asBytes(256 * MiB) });
  const edges = data.channels!.reduce((sum, c) => sum + (c.edges?.length ?? 0), 0);
  assert.ok(data.channels!.length >= 1);
  assert.ok(
    edges <= MAX_CHANNEL_EDGES || data.channels!.length === 1,
    `${edges} edges in ${data.channels!.length} channels`,
  );
  assert.ok(
    data.channels!.length < channelPlan(big, { bytes: asBytes(256 * MiB) }).channels,
    'some channels were left out',
  );
});

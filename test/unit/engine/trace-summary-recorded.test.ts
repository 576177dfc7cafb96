// A summary from a run recorded for it (traceForSummary: the run keeps its flows and times, and Span objects are made
// for the ranks the summary draws only) against the summary of the full trace: the same trace, field for field, on
// identical nodes (ring, NVLSTree's tree roles), a slow node and one degraded NIC link; the same numbers as the run
// without a trace; and Span objects for fewer ranks than the system has.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  asBytes,
  asGBps,
  presetSystem,
  resolveSystem,
  simulateCollective,
  summarisedCollectiveTrace,
  type CollectiveRequest,
  type RecordedSpans,
  type System,
  type Trace,
} from '../../../src/engine/index';
import { nodeOf, withLinks } from './support/edited-systems';

const bytes = asBytes(4 * 1024 * 1024);

/** The system with the first network link leaving `node` at a quarter of its bandwidth. */
function degradedNicLink(system: System, node: number): System {
  const index = system.topology.links.findIndex((l) => l.kind === 'network' && l.from.startsWith(`n${node}.`));
  assert.ok(index >= 0, `node ${node} has a network link`);
  const links = system.topology.links.map((l, i) => (i === index ? { ...l, GBps: asGBps(l.GBps / 4) } : l));
  return { ...system, topology: { ...system.topology, links } };
}

function slowNode(system: System, node: number): System {
  const nodes = nodeOf(system);
  return withLinks(system, (i) => {
    const l = system.topology.links[i];
    return nodes.get(l.from) === node || nodes.get(l.to) === node ? 0.5 : undefined;
  });
}

/** Compares the two summaries; returns the recorded one and the ranks it made Span objects for. */
function check(
  system: System,
  request: CollectiveRequest,
  spanLimit: number,
  where: string,
  allDrawn = false,
): { summary: Trace; drawn: ReadonlySet<number> } {
  const untraced = simulateCollective(system, request);
  const traced = { ...request, trace: true, traceSpanLimit: spanLimit };
  const full = simulateCollective(system, traced);
  const recorded = simulateCollective(system, { ...traced, traceForSummary: true });
  assert.equal(recorded.timeUs, untraced.timeUs, `${where}: the time of the run without a trace`);
  assert.deepEqual(recorded.phases, untraced.phases, `${where}: its phases`);
  assert.equal(full.timeUs, untraced.timeUs, `${where}: the full trace's run, the same time`);
  assert.equal(recorded.spanCount, full.spanCount, `${where}: as many simulated spans`);
  assert.equal(recorded.trace!.spans.length, 0, `${where}: no Span object before the summary asks`);
  const spans = recorded.recordedSpans!;
  let drawn: ReadonlySet<number> = new Set();
  const spy: RecordedSpans = {
    count: spans.count,
    endUs: spans.endUs,
    forEach: (visit, keys) => spans.forEach(visit, keys),
    traceOf(ranks) {
      drawn = ranks;
      return spans.traceOf(ranks);
    },
  };
  const expected = summarisedCollectiveTrace(system, full, full.trace!);
  const actual = summarisedCollectiveTrace(system, recorded, recorded.trace!, spy);
  assert.deepEqual(actual.metadata, expected.metadata, `${where}: metadata`);
  assert.deepEqual(actual.lanes, expected.lanes, `${where}: lanes`);
  assert.equal(actual.spans.length, expected.spans.length, `${where}: span count`);
  for (let i = 0; i < expected.spans.length; i++)
    assert.deepEqual(actual.spans[i], expected.spans[i], `${where}: span ${i}`);
  if (!allDrawn)
    assert.ok(drawn.size > 0 && drawn.size < system.ranks, `${where}: ${drawn.size} of ${system.ranks} ranks drawn`);
  if (spanLimit < Infinity) assert.ok(full.spanCount <= spanLimit && actual.metadata.facts?.drawn, `${where}: cut`);
  return { summary: actual, drawn };
}

/** Asserts that `node`'s lanes are a group of their own: an edited node is never folded into the alike ones. */
function onItsOwn(summary: Trace, system: System, node: number): void {
  const lanes = summary.lanes.filter((l) => l.rank !== undefined && Math.floor(l.rank / system.gpusPerNode) === node);
  assert.ok(lanes.length >= system.gpusPerNode, `node ${node} has its lanes`);
  for (const lane of lanes) assert.match(lane.label, new RegExp(`node ${node} on its own$`));
}

const sixNodes = resolveSystem(presetSystem('dgx-h100', { nodes: 6 })!);
const sixteenNodes = resolveSystem(presetSystem('dgx-h100', { nodes: 16 })!);

test('identical nodes, ring: the recorded summary is the full trace’s, from node 0 alone', () => {
  const { drawn } = check(sixNodes, { kind: 'allreduce', bytes, algorithm: 'ring' }, Infinity, 'ring');
  assert.ok(drawn.size <= 2 * sixNodes.gpusPerNode, `${drawn.size} ranks drawn`);
});

test('identical nodes, NVLSTree: the recorded summary is the full trace’s, cut at a span limit or not', () => {
  const request: CollectiveRequest = { kind: 'allreduce', bytes: asBytes(256 * 1024 * 1024), algorithm: 'nvlstree' };
  check(sixteenNodes, request, Infinity, 'nvlstree');
  check(sixteenNodes, request, 2000, 'nvlstree, 2,000 spans');
});

test('a span limit that leaves nodes without spans: they are drawn from ranks of other nodes, which are drawn too', () => {
  // Tree on 3 nodes cut at 40 spans: node 0's GPUs have no spans of their own and mirror node 1's, while node 0
  // draws the group of nodes 0 and 1: node 1's spans must be made although no group is drawn from it.
  const system = resolveSystem(presetSystem('dgx-h100', { nodes: 3 })!);
  const request: CollectiveRequest = { kind: 'allreduce', bytes: asBytes(64 * 1024 * 1024), algorithm: 'tree' };
  const { drawn } = check(system, request, 40, 'tree, 40 spans', true);
  assert.ok(drawn.has(8) && drawn.has(15), 'node 1 is drawn for node 0');
});

for (const algorithm of ['ring', 'nvlstree'] as const) {
  test(`an edited system (node 4 at half speed), ${algorithm}: the recorded summary is the full trace's`, () => {
    const system = slowNode(algorithm === 'ring' ? sixNodes : sixteenNodes, 4);
    const { summary } = check(system, { kind: 'allreduce', bytes, algorithm }, Infinity, `slow node, ${algorithm}`);
    onItsOwn(summary, system, 4);
  });

  test(`one degraded NIC link on node 2, ${algorithm}: the recorded summary is the full trace's`, () => {
    const system = degradedNicLink(algorithm === 'ring' ? sixNodes : sixteenNodes, 2);
    const where = `degraded link, ${algorithm}`;
    const { summary, drawn } = check(system, { kind: 'allreduce', bytes, algorithm }, Infinity, where);
    const g = system.gpusPerNode;
    assert.ok(
      Array.from({ length: g }, (_, i) => 2 * g + i).every((rank) => drawn.has(rank)),
      'the edited node is drawn',
    );
    onItsOwn(summary, system, 2);
  });
}

// A trace summarised per node (trace/summary.ts) against the full trace drawn rank by rank (trace/lazy.ts): every
// node a lane group stands for draws, GPU by GPU, the spans of the group's lanes (times, phases, steps, bytes), on
// identical nodes and on an edited system, and the full trace of every rank is the in-memory drawn trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  LazyDrawnTrace,
  asBytes,
  drawnCollectiveTrace,
  nodeGroups,
  presetSystem,
  resolveSystem,
  simulateCollective,
  summarisedCollectiveTrace,
  type CollectiveRequest,
  type Span,
  type System,
} from '../../../src/engine/index';
import { nodeOf, withLinks } from './support/edited-systems';

/** What the summary must reproduce of a span, ordered so two GPUs' spans compare as lists. */
const shape = (s: Span): string =>
  `${s.phase} ${s.step} ${s.channel} ${s.chunk} ${s.bytes} ${s.startUs} ${s.endUs} ${s.name?.startsWith('reduce from') ? 'stream' : 'rank'}`;
const shapes = (spans: readonly Span[]): string[] => spans.map(shape).sort();

function slowNode(system: System, node: number): System {
  const nodes = nodeOf(system);
  return withLinks(system, (i) => {
    const l = system.topology.links[i];
    return nodes.get(l.from) === node || nodes.get(l.to) === node ? 0.5 : undefined;
  });
}

function check(system: System, request: CollectiveRequest, where: string): { groups: number[][] } {
  const result = simulateCollective(system, { ...request, trace: true, traceSpanLimit: Infinity });
  const trace = result.trace!;
  const lazy = new LazyDrawnTrace(system, result, trace);
  const full = new Map<number, Span[]>();
  for (const item of lazy.items())
    if (item.span) full.set(item.span.rank, [...(full.get(item.span.rank) ?? []), item.span]);
  assert.equal(full.size, system.ranks, `${where}: the full trace draws every rank`);
  // The full trace of every rank is the drawn trace kept in memory, where that one is not cut by its cap.
  const drawn = drawnCollectiveTrace(system, result, trace);
  const lazySpans = [...full.values()].flat();
  assert.deepEqual(shapes(lazySpans), shapes(drawn.spans), `${where}: lazy and in-memory drawn traces agree`);

  const summary = summarisedCollectiveTrace(system, result, trace);
  const groups = nodeGroups(lazy).map((g) => [...g.nodes]);
  const covered = groups.flat().sort((a, b) => a - b);
  assert.deepEqual(
    covered,
    Array.from({ length: system.nodes }, (_, i) => i),
    `${where}: each node in one group`,
  );
  const g = system.gpusPerNode;
  for (const nodes of groups) {
    const first = nodes[0];
    for (let local = 0; local < g; local++) {
      const lanes = new Set(summary.lanes.filter((l) => l.rank === first * g + local).map((l) => l.id));
      const drawnHere = summary.spans.filter((s) => lanes.has(s.lane));
      for (const node of nodes)
        assert.deepEqual(
          shapes(full.get(node * g + local) ?? []),
          shapes(drawnHere),
          `${where}: node ${node}, GPU ${local} draws what its group's lane shows`,
        );
      const label = summary.lanes.find((l) => lanes.has(l.id))!.label;
      assert.match(label, nodes.length > 1 ? new RegExp(`stands for ${nodes.length} nodes`) : /on its own/);
    }
  }
  // The step end: the summary ends where the full trace and the prediction do.
  const endOf = (spans: readonly Span[]) => spans.reduce((m, s) => Math.max(m, s.endUs), 0);
  assert.equal(endOf(summary.spans), endOf(lazySpans), `${where}: same end`);
  assert.ok(Math.abs(endOf(summary.spans) - result.timeUs) <= 1e-6 * result.timeUs, `${where}: ends at the prediction`);
  return { groups };
}

const system = resolveSystem(presetSystem('dgx-h100', { nodes: 6 })!);
// NVLSTree's nodes differ by their place in the tree: enough nodes that some share one.
const treeSystem = resolveSystem(presetSystem('dgx-h100', { nodes: 16 })!);
const bytes = asBytes(4 * 1024 * 1024);
const systemFor = (algorithm: 'ring' | 'nvlstree') => (algorithm === 'ring' ? system : treeSystem);

test('identical nodes: one ring group stands for all six nodes, equal to the full trace', () => {
  const { groups } = check(system, { kind: 'allreduce', bytes, algorithm: 'ring' }, 'ring');
  assert.equal(groups.length, 1);
});

test('identical nodes under NVLSTree: groups by tree role, each equal to the full trace of its nodes', () => {
  const { groups } = check(treeSystem, { kind: 'allreduce', bytes, algorithm: 'nvlstree' }, 'nvlstree');
  assert.ok(groups.length < treeSystem.nodes, `${groups.length} groups`);
});

for (const algorithm of ['ring', 'nvlstree'] as const) {
  test(`an edited system (node 4 at half speed), ${algorithm}: the slow node is drawn on its own`, () => {
    const edited = slowNode(systemFor(algorithm), 4);
    const { groups } = check(edited, { kind: 'allreduce', bytes, algorithm }, `edited ${algorithm}`);
    assert.deepEqual(
      groups.find((nodes) => nodes.includes(4)),
      [4],
    );
    assert.ok(groups.length < edited.nodes, `${groups.length} groups: the unedited nodes are summarised`);
  });
}

// The drawn trace of a ring folded onto one node (algorithms/ring-folded.ts, trace/mirror.ts). On identical nodes a
// ring maps onto itself when every rank is shifted by one node, so the drawn trace must too: every node's lanes hold
// node 0's spans with every rank (lane, peer, "from rank N") shifted by the node's first rank and every link moved
// to that node. The fold used to draw a crossing flow's reduction at its sender's peer on node 1 while its memory
// was charged to node 0's own receiving GPU: node 0's rail spans were sends only, node 1's reductions only, and the
// ranks of node 1 were then filled from those reductions (issue 14's 16-rank timeline screenshots).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  asBytes,
  drawnCollectiveTrace,
  presetSystem,
  resolveSystem,
  simulateCollective,
  type CollectiveKind,
  type Trace,
} from '../../../src/engine/index';

const MiB = 1024 * 1024;

/** Node `node`'s spans, each written as node 0's would be: ranks and link nodes shifted back by `node`. */
function nodeSpans(trace: Trace, gpusPerNode: number, nodes: number, node: number): string[] {
  const ranks = gpusPerNode * nodes;
  const back = (rank: number) => (((rank - node * gpusPerNode) % ranks) + ranks) % ranks;
  const shiftText = (text: string) =>
    text
      .replace(/rank (\d+)/g, (_, r: string) => `rank ${back(Number(r))}`)
      .replace(/\bn(\d+)\./g, (_, n: string) => `n${(((Number(n) - node) % nodes) + nodes) % nodes}.`);
  const labels = new Map(trace.lanes.map((l) => [l.id, l.label]));
  return trace.spans
    .filter((s) => Math.floor(s.rank / gpusPerNode) === node)
    .map((s) =>
      [
        shiftText(labels.get(s.lane) ?? '?'),
        s.phase,
        shiftText(s.name ?? ''),
        typeof s.args?.peer === 'number' ? back(s.args.peer) : '-',
        s.step,
        s.channel,
        s.bytes,
        s.startUs.toFixed(3),
        s.endUs.toFixed(3),
        s.links.map(shiftText).join(','),
      ].join(' | '),
    )
    .sort();
}

/** The spans of `a` left once each span of `b` has taken away one equal span (a multiset difference). */
function without(a: readonly string[], b: readonly string[]): string[] {
  const left = new Map<string, number>();
  for (const s of b) left.set(s, (left.get(s) ?? 0) + 1);
  return a.filter((s) => {
    const n = left.get(s) ?? 0;
    if (n > 0) left.set(s, n - 1);
    return n === 0;
  });
}

for (const [kind, nodes] of [
  ['allreduce', 2],
  ['allreduce', 3],
  ['reducescatter', 2],
  ['allgather', 2],
] as [CollectiveKind, number][]) {
  test(`a folded ${kind} ring on ${nodes} identical nodes draws every node's lanes as node 0's, shifted by rank`, () => {
    const system = resolveSystem(presetSystem('dgx-h100', { nodes })!);
    const result = simulateCollective(system, { kind, bytes: asBytes(25 * MiB), algorithm: 'ring', trace: true });
    assert.equal(result.trace?.metadata.facts?.path, 'fast', 'the fold is taken');
    const drawn = drawnCollectiveTrace(system, result, result.trace!);
    const g = system.gpusPerNode;
    const first = nodeSpans(drawn, g, nodes, 0);
    assert.ok(
      first.some((s) => / \| reduce \| reduce from rank /.test(s)) === (kind !== 'allgather'),
      'a reduction drawn on node 0 exactly when the collective reduces',
    );
    assert.ok(
      first.some((s) => /rail\d/.test(s)),
      "node 0's rail spans are drawn",
    );
    for (let node = 1; node < nodes; node++) {
      const other = nodeSpans(drawn, g, nodes, node);
      const missing = without(first, other);
      const extra = without(other, first);
      assert.deepEqual(
        { missing: missing.slice(0, 4), extra: extra.slice(0, 4), counts: [first.length, other.length] },
        { missing: [], extra: [], counts: [first.length, first.length] },
        `node ${node} is node 0 shifted by ${node * g} ranks`,
      );
    }
  });
}

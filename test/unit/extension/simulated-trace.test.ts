// The timeline of one simulated collective against the prediction beside it (issue 14): the drawn spans end at
// the predicted time, every rank of the system has spans, the topology heat reaches every node and rail that
// carries traffic, and the range statistics of any range add up to the spans inside it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  PHASES,
  presetSystem,
  resolveSystem,
  simulateCollective,
  type Trace,
  asBytes,
} from '../../../src/engine/index';
import { MAX_TRACE_SPANS } from '../../../src/engine/constants';
import { ENGINE_TRACE_SPAN_CAP, drawnCollectiveTrace } from '../../../src/extension/glue/simulated-trace';
import { TimelineModel } from '../../../webview/timeline/model';
import { linkUtilisation } from '../../../webview/topology/model';

const MiB = 1024 * 1024;
const CASES: [preset: string, nodes: number, bytes: number][] = [
  ['dgx-h100', 2, 100 * MiB], // nvlstree on the fast path: one rank stands for node 1 (the 615 vs 590 µs)
  ['dgx-h100', 2, 25 * MiB], // the 234 vs 209 µs
  ['dgx-h100', 2, 8],
  ['dgx-a100', 4, 100 * MiB],
  ['gb200-nvl72-tray', 2, 64 * MiB],
  ['pcie-4090x8', 1, 1 * MiB],
];

function simulate(preset: string, nodes: number, bytes: number) {
  const system = resolveSystem(presetSystem(preset, { nodes })!);
  const result = simulateCollective(system, { kind: 'allreduce', bytes: asBytes(bytes), trace: true });
  return { system, result, drawn: drawnCollectiveTrace(system, result) };
}

function ranksWithSpans(trace: Trace): Set<number> {
  const laneRank = new Map(trace.lanes.map((l) => [l.id, l.rank]));
  return new Set(trace.spans.map((s) => laneRank.get(s.lane)).filter((r): r is number => r !== undefined));
}

test("the trace cap the glue knows is the engine's", () => {
  assert.equal(ENGINE_TRACE_SPAN_CAP, MAX_TRACE_SPANS);
});

for (const [preset, nodes, bytes] of CASES) {
  test(`${preset} × ${nodes}, ${bytes} B: drawn from 0 to the predicted time, on every rank`, () => {
    const { system, result, drawn } = simulate(preset, nodes, bytes);
    const model = TimelineModel.fromTrace(drawn);
    assert.equal(model.startUs, 0, 'the collective is drawn from its launch');
    const truncated = drawn.metadata.facts?.drawn;
    if (truncated === undefined) {
      assert.ok(
        Math.abs(model.endUs - result.timeUs) <= 1e-6 * result.timeUs,
        `drawn ${model.endUs} µs, predicted ${result.timeUs} µs`,
      );
    } else {
      assert.ok(model.endUs < result.timeUs);
      assert.match(String(truncated), new RegExp(`of the predicted ${Math.round(result.timeUs * 10) / 10} µs`));
    }
    assert.equal(drawn.metadata.facts?.['predicted (µs)'], Math.round(result.timeUs * 10) / 10);
    const drawnRanks = ranksWithSpans(drawn);
    for (let rank = 0; rank < system.ranks; rank++) assert.ok(drawnRanks.has(rank), `rank ${rank} has spans`);
    // Every link id names a link of the system, so the topology heat can colour it.
    const linkIds = new Set(system.topology.links.map((l) => l.id));
    for (const span of drawn.spans)
      for (const id of span.links) assert.ok(linkIds.has(id), `${id} is a link of ${system.label}`);
  });
}

test("a 16-rank nvlstree run heats both nodes and every rail, not node 1's first rail alone", () => {
  const { system, result, drawn } = simulate('dgx-h100', 2, 100 * MiB);
  assert.equal(result.algorithm, 'nvlstree');
  const { bytes } = linkUtilisation(drawn, system.topology.links);
  const busy = (pattern: RegExp): number => [...bytes].filter(([id, b]) => pattern.test(id) && b > 0).length;
  for (let gpu = 0; gpu < 8; gpu++) {
    assert.ok(busy(new RegExp(`^n1\\.gpu${gpu}->`)) > 0, `node 1 gpu ${gpu} sends`);
    assert.ok(busy(new RegExp(`^n0\\.gpu${gpu}->`)) > 0, `node 0 gpu ${gpu} sends`);
    assert.ok(busy(new RegExp(`^n1\\.nic${gpu}->rail${gpu}\\.`)) > 0, `node 1 sends on rail ${gpu}`);
  }
});

test("range statistics add up: phases and idle fill each rank's range, bytes are the spans' bytes", () => {
  for (const [preset, nodes, bytes] of [
    ['dgx-h100', 2, 100 * MiB],
    ['dgx-a100', 4, 100 * MiB],
  ] as const) {
    const { drawn } = simulate(preset, nodes, bytes);
    const model = TimelineModel.fromTrace(drawn);
    const rankLanes = new Set(
      drawn.lanes.filter((l) => (l.kind === 'rank' || l.kind === 'stream') && l.rank !== undefined).map((l) => l.id),
    );
    const span = model.endUs - model.startUs;
    for (const [from, to] of [
      [model.startUs, model.endUs],
      [model.startUs + span * 0.3, model.startUs + span * 0.55],
      [span * 0.9, span * 2],
    ]) {
      const stats = model.rangeStats(from, to);
      const ranksTimesRange = stats.ranks * (to - from);
      const summed = stats.phaseUs.reduce((a, b) => a + b, 0) + stats.idleUs;
      assert.ok(
        Math.abs(summed - ranksTimesRange) <= 1e-6 * ranksTimesRange,
        `${preset}: phases + idle ${summed} = ranks × range ${ranksTimesRange}`,
      );
      assert.equal(stats.ranks, drawn.metadata.ranks);
      let expected = 0;
      for (const s of drawn.spans) {
        if (!rankLanes.has(s.lane) || s.links.length === 0 || s.endUs <= s.startUs) continue;
        const overlap = Math.min(to, s.endUs) - Math.max(from, s.startUs);
        if (overlap > 0) expected += (s.bytes * overlap) / (s.endUs - s.startUs);
      }
      assert.ok(expected > 0 || from >= model.endUs);
      assert.ok(
        Math.abs(stats.transferredBytes - expected) <= 1e-9 * Math.max(1, expected),
        `${preset}: moved ${stats.transferredBytes} = spans' ${expected}`,
      );
    }
    // Over the whole collective the launch before the first transfer counts as the ranks' time, not as idle.
    const whole = model.rangeStats(model.startUs, model.endUs);
    assert.ok(whole.phaseUs[PHASES.indexOf('other')] > 0, 'the launch is counted');
  }
});

/** Counts of a rank's spans by phase and by where its peer is: its own node, another node, or none (local work). */
function partsOfRanks(trace: Trace, gpusPerNode: number): Map<number, string> {
  const counts = new Map<number, Map<string, number>>();
  for (const s of trace.spans) {
    const named = /from rank (\d+)/.exec(s.name ?? '');
    const peer = typeof s.args?.peer === 'number' ? s.args.peer : named ? Number(named[1]) : undefined;
    const part =
      peer === undefined
        ? 'local'
        : Math.floor(peer / gpusPerNode) === Math.floor(s.rank / gpusPerNode)
          ? 'node'
          : 'rail';
    const rank = counts.get(s.rank) ?? new Map<string, number>();
    rank.set(`${s.phase}:${part}`, (rank.get(`${s.phase}:${part}`) ?? 0) + 1);
    counts.set(s.rank, rank);
  }
  return new Map([...counts].map(([rank, c]) => [rank, JSON.stringify([...c].sort())]));
}

// The fast path lets node 0's NVSwitch traffic stand for every node's and local GPU 0's rail traffic for every
// rail's (algorithms/hierarchical.ts, nvls-tree.ts). Drawn as simulated, rank 0 alone had rail spans on node 0,
// node 1's ranks had no NVSwitch spans, and the node headers read "node 0 · 9 lanes" / "node 1 · 16 lanes".
for (const [nodes, algorithm] of [
  [2, 'nvlstree'],
  [2, 'hierarchical'],
  [4, 'nvlstree'],
  [4, 'hierarchical'],
] as const) {
  test(`dgx-h100 × ${nodes}, ${algorithm}: every GPU of a node is drawn alike, with its NVSwitch and its rail traffic`, () => {
    const system = resolveSystem(presetSystem('dgx-h100', { nodes })!);
    const result = simulateCollective(system, { kind: 'allreduce', bytes: asBytes(25 * MiB), algorithm, trace: true });
    const drawn = drawnCollectiveTrace(system, result);
    const g = system.gpusPerNode;
    const parts = partsOfRanks(drawn, g);
    for (let rank = 0; rank < system.ranks; rank++) {
      const own = parts.get(rank) ?? '';
      assert.match(own, /:node"/, `rank ${rank} has NVSwitch spans: ${own}`);
      assert.match(own, /:rail"/, `rank ${rank} has rail spans: ${own}`);
      const first = Math.floor(rank / g) * g;
      assert.equal(own, parts.get(first), `rank ${rank} is drawn like rank ${first} of its node`);
    }
    const lanesPerNode = Array.from({ length: nodes }, (_, n) => drawn.lanes.filter((l) => l.node === n).length);
    if (nodes === 2) {
      // Two nodes play mirror roles in the trees, so they are drawn alike too.
      assert.equal(parts.get(g), parts.get(0), 'node 1 is drawn like node 0');
      assert.equal(lanesPerNode[1], lanesPerNode[0], `lanes per node: ${lanesPerNode.join(', ')}`);
    }
  });
}

test('a folded two-node ring draws NVSwitch traffic on node 1 as well, not its rail spans alone', () => {
  const system = resolveSystem(presetSystem('dgx-h100', { nodes: 2 })!);
  const result = simulateCollective(system, {
    kind: 'allreduce',
    bytes: asBytes(25 * MiB),
    algorithm: 'ring',
    trace: true,
  });
  const parts = partsOfRanks(drawnCollectiveTrace(system, result), system.gpusPerNode);
  for (let rank = 0; rank < system.ranks; rank++) {
    assert.match(parts.get(rank) ?? '', /:node"/, `rank ${rank} has NVSwitch spans`);
    assert.match(parts.get(rank) ?? '', /:rail"/, `rank ${rank} has rail spans`);
  }
});

// The drawn trace of a system large enough that mirroring every empty rank would pass the engine's span cap: the
// panels get the same bounded trace as `simulate --trace`, mirrored up to the cap, with the rest counted as left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_TRACE_SPANS,
  drawnCollectiveTrace as engineDrawnTrace,
  presetSystem,
  resolveSystem,
  simulateCollective,
  asBytes,
} from '../../../src/engine/index';
import { drawnCollectiveTrace } from '../../../src/extension/glue/simulated-trace';

test('a 512-rank ring is mirrored only up to the span cap, the same for the panels and the CLI', () => {
  const system = resolveSystem(presetSystem('dgx-h100', { nodes: 64 })!);
  const result = simulateCollective(system, {
    kind: 'allreduce',
    bytes: asBytes(64 * 1024 * 1024),
    algorithm: 'ring',
    trace: true,
  });
  const drawn = drawnCollectiveTrace(system, result);
  assert.deepEqual(drawn, engineDrawnTrace(system, result, result.trace!));
  assert.ok(drawn.spans.length <= MAX_TRACE_SPANS, `${drawn.spans.length} spans`);

  const rankOfLane = new Map(drawn.lanes.map((l) => [l.id, l.rank]));
  const simulatedRanks = new Set(result.trace!.spans.map((s) => rankOfLane.get(s.lane)));
  const drawnRanks = new Set(drawn.spans.map((s) => rankOfLane.get(s.lane)));
  const mirrored = Number(/^(\d+) ranks drawn/.exec(String(drawn.metadata.facts?.['mirrored ranks']))?.[1]);
  const leftOut = Number(/^(\d+) ranks left empty/.exec(String(drawn.metadata.facts?.['ranks left out']))?.[1]);
  assert.ok(mirrored > 0 && leftOut > 0, `mirrored ${mirrored}, left out ${leftOut}`);
  assert.equal(drawnRanks.size, simulatedRanks.size + mirrored, 'each mirrored rank has spans');
  assert.equal(simulatedRanks.size + mirrored + leftOut, system.ranks, 'every rank is simulated, mirrored or left out');
  // One more mirrored rank would not have fitted: the cap, not a smaller limit, decides where mirroring stops.
  const perRank = drawn.spans.filter((s) => s.args?.['mirrors rank'] !== undefined).length / mirrored;
  assert.ok(drawn.spans.length + perRank > MAX_TRACE_SPANS - 2 * system.ranks, 'mirrored up to the cap');
});

test('above 1,024 ranks the panels get the per-node summary unless the setting asks for every rank', () => {
  const system = resolveSystem(presetSystem('dgx-h100', { nodes: 129 })!);
  const result = simulateCollective(system, {
    kind: 'allreduce',
    bytes: asBytes(1024 * 1024),
    algorithm: 'ring',
    trace: true,
  });
  const summary = drawnCollectiveTrace(system, result);
  assert.match(String(summary.metadata.facts?.detail), /^summary: \d+ lane groups? for 129 nodes/);
  assert.ok(
    summary.lanes.some((l) => / · stands for \d+ nodes/.test(l.label)),
    'a lane says what it stands for',
  );
  assert.ok(new Set(summary.spans.map((s) => s.rank)).size < system.ranks);
  const full = drawnCollectiveTrace(system, result, 'full');
  assert.deepEqual(full, engineDrawnTrace(system, result, result.trace!));
});

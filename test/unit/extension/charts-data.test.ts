import { test } from 'node:test';
import assert from 'node:assert/strict';
import { presetSystem, resolveSystem, asBytes, asGBps, asMicros } from '../../../src/engine/index';
import {
  compareAlgorithmsAt,
  modelSweepRange,
  nodeScaling,
  phaseLadder,
  sweepSeries,
} from '../../../src/extension/glue/charts-data';

const h100 = resolveSystem(presetSystem('dgx-h100')!);

test('the sweep has the auto curve and one curve per algorithm the system runs', () => {
  const series = sweepSeries(h100, asBytes(1024), asBytes(64 * 2 ** 20));
  assert.equal(series[0].label, 'auto (what NCCL would pick)');
  assert.ok(series.length > 2);
  for (const s of series) assert.ok(s.rows.every((r, i) => i === 0 || r.bytes > s.rows[i - 1].bytes));
  const sizes = series[0].rows.map((r) => r.bytes);
  for (const s of series)
    assert.deepEqual(
      s.rows.map((r) => r.bytes),
      sizes,
      s.label,
    );
});

test("the algorithm comparison is sorted and marks exactly the tuner's pick", () => {
  const rows = compareAlgorithmsAt(h100, asBytes(64 * 2 ** 20));
  assert.ok(rows.length >= 3);
  assert.equal(rows.filter((r) => r.chosen).length, 1);
  assert.ok(rows.every((r, i) => i === 0 || r.timeUs >= rows[i - 1].timeUs));
});

test('phase ladders and node scaling come from the engine', () => {
  const ladder = phaseLadder(h100, asBytes(25 * 2 ** 20));
  assert.equal(ladder.length, 6);
  assert.ok(ladder.every((r) => r.exchangeUs + r.reduceUs + r.broadcastUs > 0));
  const scaling = nodeScaling(
    (nodes) => resolveSystem(presetSystem('dgx-h100', { nodes })!),
    asBytes(256 * 2 ** 20),
    8,
  );
  assert.deepEqual(
    scaling.map((r) => r.ranks),
    [8, 16, 32, 64],
  );
});

test('the model line of a comparison spans every measured series, ends outside the points', () => {
  const point = (bytes: number) => ({ bytes: asBytes(bytes), timeUs: asMicros(1), busbwGBps: asGBps(1) });
  // All-reduces near 1 GiB and all-gathers near 8 MiB, as in a DeepSpeed comms log.
  const allReduce = { label: 'allreduce', points: [point(679 * 2 ** 20), point(2 ** 30)] };
  const allGather = { label: 'allgather', points: [point(7.6 * 2 ** 20), point(9 * 2 ** 20)] };
  assert.deepEqual(modelSweepRange([allReduce, allGather]), { minBytes: 4 * 2 ** 20, maxBytes: 2 ** 30 });
  assert.deepEqual(modelSweepRange([{ label: 'one', points: [point(3000)] }]), { minBytes: 2048, maxBytes: 4096 });
  assert.equal(modelSweepRange([]), undefined);
});

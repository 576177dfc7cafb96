// Long panel computations run in slices (webview/shared/slices.ts) so that input never waits for long: the counter
// tracks of a large trace are computed after the first paint in slices of a few milliseconds. Sliced or not, the
// result is the same, across many chunks of the loops; the slices keep to their budget; a computation for a trace
// that is no longer shown stops.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SLICE_CHUNK, finish, runInSlices, type Steps } from '../../webview/shared/slices';
import { rateSeries, traceCounterSteps, traceCounters } from '../../webview/timeline/counters';
import { TimelineModel } from '../../webview/timeline/model';
import { sortIndicesByTime } from '../../webview/timeline/sort-by-time';

/** A small seeded generator, so a failure names inputs that can be reproduced. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Runs the next slice when the test says so; the real page queues it behind input and frames. */
const immediately = (next: () => void): void => void setImmediate(next);

/** A computation of `count` steps, each advancing a fake clock by `stepMs`. */
function* clockSteps(clock: { nowMs: number }, count: number, stepMs: number): Steps<number> {
  for (let i = 0; i < count; i++) {
    clock.nowMs += stepMs;
    yield;
  }
  return count;
}

test('slices keep to their budget: 100 steps of 1 ms in 8 ms slices are 13 slices, none over 8 ms', async () => {
  const clock = { nowMs: 0 };
  const done = await runInSlices(clockSteps(clock, 100, 1), {
    budgetMs: 8,
    now: () => clock.nowMs,
    schedule: immediately,
  });
  assert.ok(done);
  assert.equal(done.value, 100);
  assert.equal(done.report.slices, 13);
  assert.equal(done.report.longestSliceMs, 8);
  assert.equal(done.report.slicesOver50Ms, 0);
  assert.equal(done.report.elapsedMs, 100);
});

test('a cancelled computation stops before its next slice and resolves with nothing', async () => {
  const clock = { nowMs: 0 };
  let slices = 0;
  const done = await runInSlices(clockSteps(clock, 100, 1), {
    budgetMs: 8,
    now: () => clock.nowMs,
    schedule: (next) => void setImmediate(() => (slices++, next())),
    cancelled: () => clock.nowMs >= 16,
  });
  assert.equal(done, undefined);
  assert.equal(clock.nowMs, 16, 'two slices ran, the third was dropped');
  assert.equal(slices, 3);
});

test('an error inside a slice rejects the computation', async () => {
  function* failing(): Steps<number> {
    yield;
    throw new Error('broken span');
  }
  await assert.rejects(runInSlices(failing(), { schedule: immediately }), /broken span/);
});

test('the sort over many chunks equals the comparator sort', () => {
  const random = generator(7);
  const n = 3 * SLICE_CHUNK + 123;
  const times = Array.from({ length: n }, () => Math.round(random() * 5000) * 0.5 - 100);
  const expected = [...times.keys()].sort((a, b) => times[a] - times[b]);
  assert.deepEqual([...sortIndicesByTime(times)], expected);
});

test('counters of a trace of several chunks: sliced, whole and a direct sum agree', async () => {
  const random = generator(11);
  const lanes = 8;
  const count = 2 * SLICE_CHUNK + 999;
  const startUs = new Float64Array(count);
  const endUs = new Float64Array(count);
  const lane = new Uint32Array(count);
  const phase = new Uint8Array(count);
  const transferBytes = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    lane[i] = i % lanes;
    startUs[i] = Math.floor(i / lanes) * 10 + random() * 3;
    endUs[i] = startUs[i] + 1 + random() * 6;
    phase[i] = i % 4;
    transferBytes[i] = i % 2 === 0 ? 1 + Math.floor(random() * 1e6) : 0;
  }
  const model = TimelineModel.fromColumns(
    { origin: 'simulated', title: 'generated', ranks: lanes },
    Array.from({ length: lanes }, (_, l) => ({ id: l, kind: 'rank' as const, label: `rank ${l}`, rank: l, node: 0 })),
    { startUs, endUs, lane, phase, transferBytes },
  );
  const whole = traceCounters(model);
  const sliced = await runInSlices(traceCounterSteps(model), { budgetMs: 1, schedule: immediately });
  assert.ok(sliced);
  assert.ok(sliced.report.slices > 1, `cut into slices (${sliced.report.slices})`);
  assert.deepEqual(sliced.value, whole);
  // The busbw counter holds every byte of every transfer on the ranks' rows, divided by the 8 ranks on display.
  const moved = transferBytes.reduce((sum, b) => sum + b, 0);
  const busbw = whole[0];
  assert.equal(busbw.divisor, lanes);
  const total = busbw.cumulativeBytes[busbw.cumulativeBytes.length - 1];
  assert.ok(Math.abs(total - moved) <= 1e-9 * moved, `${total} vs ${moved}`);
  // And it is the same series as rateSeries computed in one go on the same spans.
  const transfers = [...transferBytes.keys()].filter((i) => transferBytes[i] > 0);
  const direct = rateSeries(
    busbw.label,
    transfers.map((i) => startUs[i]),
    transfers.map((i) => endUs[i]),
    transfers.map((i) => transferBytes[i]),
    lanes,
  );
  assert.equal(direct.timesUs.length, busbw.timesUs.length);
  assert.ok(Math.abs(direct.cumulativeBytes.at(-1)! - total) <= 1e-9 * moved);
});

test('finish runs a computation to its end at once', () => {
  const clock = { nowMs: 0 };
  assert.equal(finish(clockSteps(clock, 5, 2)), 5);
  assert.equal(clock.nowMs, 10);
});

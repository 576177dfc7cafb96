// The timeline's data model without a browser: grouping spans into rows, the window search, hit testing, range
// statistics and the level-of-detail buckets, on inputs small enough to check by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PHASES, type Lane } from '../../src/engine/index';
import { TimelineModel } from '../../webview/timeline/model';
import { rangeSummary } from '../../webview/timeline/range-stats';
import { argFact } from '../../webview/timeline/details';
import { ColumnScratch, EMPTY, columnsForRow } from '../../webview/timeline/raster';
import { TimeScale, panWindow, zoomWindow } from '../../webview/timeline/time-scale';

const META = { origin: 'test', title: 't', ranks: 2 };
const LANES: Lane[] = [
  { id: 7, kind: 'link', label: 'gpu0->gpu1', node: 0 },
  { id: 3, kind: 'rank', label: 'rank 1', node: 0, rank: 1 },
  { id: 5, kind: 'rank', label: 'rank 0', node: 0, rank: 0 },
];
const phase = (name: string): number => PHASES.indexOf(name as (typeof PHASES)[number]);

function columns(spans: [lane: number, startUs: number, endUs: number, phase: string, bytes?: number][]) {
  return {
    startUs: Float64Array.from(spans, (s) => s[1]),
    endUs: Float64Array.from(spans, (s) => s[2]),
    lane: Uint32Array.from(spans, (s) => s[0]),
    phase: Uint8Array.from(spans, (s) => phase(s[3])),
    transferBytes: Float64Array.from(spans, (s) => s[4] ?? 0),
  };
}

test('spans are grouped by row (ranks in rank order, then links) and sorted by start', () => {
  const model = TimelineModel.fromColumns(
    META,
    LANES,
    columns([
      [3, 30, 40, 'reduce'],
      [7, 0, 10, 'exchange'],
      [5, 20, 25, 'broadcast'],
      [3, 5, 15, 'exchange'],
      [5, 0, 10, 'compute'],
    ]),
  );
  assert.deepEqual(
    model.rows.map((l) => l.label),
    ['rank 0', 'rank 1', 'gpu0->gpu1'],
  );
  assert.deepEqual([...model.rowOffsets], [0, 2, 4, 5]);
  assert.deepEqual([...model.start], [0, 20, 5, 30, 0]);
  assert.deepEqual(
    [0, 1, 2, 3, 4].map((k) => model.originalIndex(k)),
    [4, 2, 3, 0, 1],
  );
  assert.deepEqual([model.startUs, model.endUs], [0, 40]);
  assert.equal(model.rowOf(3), 1);
  assert.throws(() => TimelineModel.fromColumns(META, LANES, columns([[9, 0, 1, 'reduce']])), /unknown lane 9/);
});

test('hit testing finds the span under a time, the nearest within tolerance, and the shortest of overlapping ones', () => {
  const model = TimelineModel.fromColumns(
    META,
    LANES,
    columns([
      [5, 0, 100, 'compute'],
      [5, 40, 45, 'exchange'],
      [5, 200, 210, 'reduce'],
    ]),
  );
  // The exchange inside the compute span is drawn on the track below it (tracks.ts), where the pointer finds it.
  assert.equal(model.originalIndex(model.hitTest(1, 42, 0)), 1, 'the short exchange inside the long compute');
  assert.equal(model.originalIndex(model.hitTest(0, 42, 0)), 0);
  assert.equal(model.originalIndex(model.hitTest(0, 10, 0)), 0);
  assert.equal(model.hitTest(0, 150, 10), -1);
  assert.equal(model.originalIndex(model.hitTest(0, 195, 10)), 2);
  assert.equal(model.hitTest(5, 10, 1), -1, 'no such row');
  // Spans that overlap without one holding the other share a track; the shorter one wins where both are.
  const overlapping = TimelineModel.fromColumns(
    META,
    LANES,
    columns([
      [5, 0, 100, 'compute'],
      [5, 90, 110, 'exchange'],
    ]),
  );
  assert.equal(overlapping.originalIndex(overlapping.hitTest(0, 95, 0)), 1, 'the short exchange over the compute');
});

test('range statistics count phase time and bytes over the rank rows, clipped to the range', () => {
  // Interleaved across lanes, so the bytes are read back through the model's permutation.
  const model = TimelineModel.fromColumns(
    META,
    LANES,
    columns([
      [7, 0, 10, 'exchange', 99_999],
      [3, 0, 10, 'exchange', 10_000],
      [5, 0, 10, 'exchange', 10_000],
      [3, 10, 20, 'reduce'],
      [5, 10, 20, 'reduce'],
    ]),
  );
  assert.notEqual(model.originalIndex(0), 0, 'the input was regrouped');
  const stats = model.rangeStats(5, 15);
  assert.equal(stats.ranks, 2);
  assert.deepEqual([stats.phaseUs[phase('exchange')], stats.phaseUs[phase('reduce')]], [10, 10]);
  // Half of each rank's 10 kB falls in the range: 5 kB per rank in 10 µs is 0.5 GB/s; the link lane is not a rank.
  assert.equal(stats.transferredBytes, 10_000);
  assert.equal(stats.busbwGBps, 0.5);
  // A rank's stream lane (its reduce kernels) counts towards the phases, not as another rank.
  const withStream = TimelineModel.fromColumns(
    META,
    [...LANES, { id: 9, kind: 'stream', label: 'rank 0 · reduce', node: 0, rank: 0 }],
    columns([
      [5, 0, 10, 'exchange', 10_000],
      [9, 0, 10, 'reduce'],
      [3, 0, 10, 'exchange', 10_000],
    ]),
  );
  const streamed = withStream.rangeStats(0, 10);
  assert.equal(streamed.ranks, 2);
  // Rank 0's exchange and reduce overlap, so they share its 10 µs; rank 1's exchange holds all of its 10 µs.
  assert.deepEqual(
    [streamed.phaseUs[phase('exchange')], streamed.phaseUs[phase('reduce')], streamed.idleUs],
    [15, 5, 0],
  );
});

test('range statistics of a training step: a collective yields to its phases, its message bytes give algbw', () => {
  // Rank 0: a collective 0..20 holding exchange 0..10 and reduce 10..20, and compute 0..5 on the same lane, which
  // nests inside the exchange (it is drawn a track below it); rank 1: compute 0..10.
  const model = TimelineModel.fromColumns(
    META,
    LANES,
    columns([
      [5, 0, 20, 'collective', 40_000],
      [5, 0, 10, 'exchange'],
      [5, 10, 20, 'reduce'],
      [5, 0, 5, 'compute'],
      [3, 0, 10, 'compute'],
    ]),
  );
  const stats = model.rangeStats(0, 20);
  assert.equal(stats.phaseUs[phase('collective')], 0, 'the container does not count twice');
  assert.deepEqual(
    [stats.phaseUs[phase('compute')], stats.phaseUs[phase('exchange')], stats.phaseUs[phase('reduce')], stats.idleUs],
    // The innermost span of a lane holds it: compute 0..5 on rank 0, then the exchange 5..10, then the reduce.
    [15, 5, 10, 10],
  );
  assert.equal(
    stats.phaseUs.reduce((a, b) => a + b, 0) + stats.idleUs,
    2 * 20,
    "phases and idle fill both ranks' range",
  );
  // Without links the exchange moved nothing measurable; the collective's 40 kB message over 2 ranks in 20 µs is 1 GB/s.
  assert.equal(stats.transferredBytes, 0);
  assert.equal(stats.collectiveBytes, 40_000);
  assert.equal(stats.algbwGBps, 1);
  const lines = rangeSummary(stats).map((l) => `${l.label}: ${l.text}`);
  assert.ok(lines.includes('algbw: 1.0 GB/s per rank over 2 ranks'), lines.join('\n'));
  assert.ok(!lines.some((l) => l.startsWith('busbw')), 'no busbw is claimed where no span crossed a link');
  assert.equal(
    rangeSummary(model.rangeStats(30, 40)).find((l) => l.label === 'moved')?.text,
    'no span in the range moved bytes',
  );
});

test('zoomed out, level-of-detail buckets give the same columns as visiting every span', () => {
  const n = 20_000;
  const spans: [number, number, number, string][] = [];
  for (let i = 0; i < n; i++) spans.push([5, i * 10, i * 10 + 6, i % 2000 < 1000 ? 'exchange' : 'reduce']);
  const model = TimelineModel.fromColumns(META, LANES, columns(spans));
  assert.ok(model.lods[0], 'the busy row has a pyramid');
  assert.equal(model.lods[1], null, 'empty rows have none');
  const width = 400;
  const viaLod = new ColumnScratch();
  viaLod.resize(width);
  const viaScan = new ColumnScratch();
  viaScan.resize(width);
  const view = { startUs: model.startUs, endUs: model.endUs, width };
  const visitedLod = columnsForRow(model, 0, view, null, viaLod);
  // A mask that matches everything forces the span-by-span path with identical colours.
  const visitedScan = columnsForRow(model, 0, view, new Uint8Array(n).fill(1), viaScan);
  assert.ok(visitedLod < visitedScan / 10, `the pyramid visits far fewer items (${visitedLod} vs ${visitedScan})`);
  let same = 0;
  for (let c = 0; c < width; c++) if (viaLod.slot[c] === viaScan.slot[c]) same++;
  assert.ok(same >= width - 4, `${same} of ${width} columns agree (only boundary columns may differ)`);
  assert.ok(
    [...viaLod.slot].every((s) => s !== EMPTY),
    'a busy row has no empty column when zoomed out',
  );
});

test('the time scale maps both ways and puts ticks at round steps from the trace origin', () => {
  const scale = new TimeScale(16, 1016, 100, 500);
  assert.equal(scale.timeToPx(16), 100);
  assert.equal(scale.timeToPx(1016), 600);
  assert.equal(scale.pxToTime(scale.timeToPx(123.25)), 123.25);
  const { stepUs, timesUs } = scale.ticks(90, 16);
  assert.equal(stepUs, 200);
  assert.deepEqual(timesUs, [16, 216, 416, 616, 816, 1016]);
  // Zooming keeps the time under the anchor in place and never leaves the bounds.
  const bounds = { startUs: 0, endUs: 1000 };
  const zoomed = zoomWindow({ startUs: 0, endUs: 1000 }, 0.5, 250, bounds);
  assert.deepEqual(zoomed, { startUs: 125, endUs: 625 });
  assert.deepEqual(zoomWindow(zoomed, 100, 300, bounds), bounds);
  assert.deepEqual(panWindow(zoomed, 10_000, bounds), { startUs: 500, endUs: 1000 });
});

test('span arguments read as words and times, not raw fields', () => {
  assert.deepEqual(argFact('readyUs', 649364.699), ['ready', '649 ms']);
  assert.deepEqual(argFact('waitedUs', 12.5), ['waited', '12.5 µs']);
  assert.deepEqual(argFact('microStep', 2), ['micro step', '2']);
  assert.deepEqual(argFact('mirrors rank', 8), ['mirrors rank', '8']);
});

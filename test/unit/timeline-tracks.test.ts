// Nesting in the timeline model: spans inside spans of one lane are drawn one track deeper, the way Perfetto draws
// a thread's slices, while the hit test, the rasteriser and the range statistics keep working on the tracks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PHASES, type Lane } from '../../src/engine/index';
import { TimelineModel } from '../../webview/timeline/model';
import { ColumnScratch, EMPTY, columnsForRow } from '../../webview/timeline/raster';
import { isNestedTrack, MAX_DEPTH, type Track } from '../../webview/timeline/tracks';

const META = { origin: 'test', title: 't', ranks: 2 };
const LANES: Lane[] = [
  { id: 3, kind: 'stream', label: 'rank 1 · CPU', node: 0, rank: 1 },
  { id: 5, kind: 'stream', label: 'rank 0 · communication', node: 0, rank: 0 },
];
const phase = (name: string): number => PHASES.indexOf(name as (typeof PHASES)[number]);

function columns(spans: [lane: number, startUs: number, endUs: number, phase: string][]) {
  return {
    startUs: Float64Array.from(spans, (s) => s[1]),
    endUs: Float64Array.from(spans, (s) => s[2]),
    lane: Uint32Array.from(spans, (s) => s[0]),
    phase: Uint8Array.from(spans, (s) => phase(s[3])),
  };
}

/** Each row as "label@depth: original indices", the layout a reader sees. */
function layout(model: TimelineModel): string[] {
  return model.rows.map((lane, r) => {
    const indices: number[] = [];
    for (let k = model.rowOffsets[r]; k < model.rowOffsets[r + 1]; k++) indices.push(model.originalIndex(k));
    return `${lane.label}@${(lane as Track).depth ?? 0}: ${indices.join(',')}`;
  });
}

test('a collective holds its phases one track below; a CPU stack nests level by level', () => {
  const model = TimelineModel.fromColumns(
    META,
    LANES,
    columns([
      [5, 0, 20, 'collective'], // 0
      [5, 0, 10, 'exchange'], // 1
      [5, 10, 15, 'reduce'], // 2
      [5, 15, 20, 'broadcast'], // 3
      [3, 0, 100, 'other'], // 4: a Python function
      [3, 10, 50, 'other'], // 5: an op it called
      [3, 20, 30, 'compute'], // 6: inside that op
      [3, 60, 90, 'other'], // 7: a second call of the function
    ]),
  );
  assert.deepEqual(layout(model), [
    'rank 0 · communication@0: 0',
    'rank 0 · communication@1: 1,2,3',
    'rank 1 · CPU@0: 4',
    'rank 1 · CPU@1: 5,7',
    'rank 1 · CPU@2: 6',
  ]);
  assert.deepEqual(
    model.rows.map((l) => isNestedTrack(l)),
    [false, true, false, true, true],
  );
  // Stripes mark lanes, not depths: both tracks of the first lane share one background.
  assert.deepEqual([...model.stripe], [0, 0, 1, 1, 1]);
  // The hit test picks the span on the track under the pointer: the phase below, the collective above.
  assert.equal(model.originalIndex(model.hitTest(1, 12, 0)), 2);
  assert.equal(model.originalIndex(model.hitTest(0, 12, 0)), 0);
  // Drawn: the collective fills its track, its phases fill theirs, in order.
  const scratch = new ColumnScratch();
  scratch.resize(20);
  columnsForRow(model, 0, { startUs: 0, endUs: 20, width: 20 }, null, scratch);
  assert.deepEqual(new Set(scratch.slot), new Set([phase('collective')]));
  columnsForRow(model, 1, { startUs: 0, endUs: 20, width: 20 }, null, scratch);
  assert.deepEqual(
    [scratch.slot[5], scratch.slot[12], scratch.slot[17]],
    [phase('exchange'), phase('reduce'), phase('broadcast')],
  );
  // Nesting does not change the statistics: phases and idle still fill both ranks' range exactly once.
  const stats = model.rangeStats(0, 100);
  assert.equal(stats.phaseUs.reduce((a, b) => a + b, 0) + stats.idleUs, 2 * 100);
  assert.equal(stats.phaseUs[phase('collective')], 0, 'the collective yields to its phases on its own rank');
});

test('channels side by side, partial overlaps and flat lanes do not nest', () => {
  const flat = TimelineModel.fromColumns(
    META,
    LANES,
    columns([
      [5, 0, 10, 'exchange'], // channel 0
      [5, 0, 10, 'exchange'], // channel 1, the same interval
      [5, 2, 8, 'exchange'], // a shorter channel inside: phases are leaves
      [5, 12, 20, 'reduce'],
      [3, 0, 10, 'compute'],
      [3, 5, 15, 'compute'], // overlaps, is not inside
    ]),
  );
  assert.deepEqual(
    flat.rows.map((l) => l.label),
    ['rank 0 · communication', 'rank 1 · CPU'],
  );
  assert.equal(EMPTY, 255);
});

test('a parent listed after its child at the same start still holds it; depth is capped', () => {
  const model = TimelineModel.fromColumns(
    META,
    LANES,
    columns([
      [3, 0, 5, 'compute'], // the child first in the input
      [3, 0, 10, 'other'],
    ]),
  );
  assert.deepEqual(layout(model), ['rank 0 · communication@0: ', 'rank 1 · CPU@0: 1', 'rank 1 · CPU@1: 0']);
  // A recursion 40 deep draws on at most MAX_DEPTH + 1 tracks.
  const deep = Array.from({ length: 40 }, (_, d): [number, number, number, string] => [3, d, 100 - d, 'other']);
  const capped = TimelineModel.fromColumns(META, LANES, columns(deep));
  assert.equal(capped.rows.filter((l) => l.label === 'rank 1 · CPU').length, MAX_DEPTH + 1);
  assert.equal(capped.spanCount, 40);
});

test('range statistics: a span yields to the spans nested inside it, so a step does not halve its compute', () => {
  // Rank 1's CPU lane: a step (other) from 0 to 100, a backward pass (compute) from 10 to 60 inside it, and a layer
  // (compute) inside that; rank 0's communication lane idle.
  const model = TimelineModel.fromColumns(
    META,
    LANES,
    columns([
      [3, 0, 100, 'other'],
      [3, 10, 60, 'compute'],
      [3, 20, 30, 'compute'],
    ]),
  );
  assert.equal(model.rows.length, 4, 'three tracks for the CPU lane, one for the idle lane');
  const stats = model.rangeStats(0, 100);
  // Where the pass runs, only compute holds the rank; the step's own time is what no inner span covers.
  assert.equal(stats.phaseUs[phase('compute')], 50);
  assert.equal(stats.phaseUs[phase('other')], 50);
  assert.equal(stats.phaseUs.reduce((a, b) => a + b, 0) + stats.idleUs, 2 * 100);
  const inside = model.rangeStats(15, 25);
  assert.equal(inside.phaseUs[phase('compute')], 10);
  assert.equal(inside.phaseUs[phase('other')], 0);
});

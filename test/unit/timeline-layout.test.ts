// Track groups and pinned tracks in the timeline: each node's tracks sit under a header that folds them into one
// summary line, a pinned lane (all its tracks) moves to a band at the top, and every model row stays reachable
// (its own line, or its folded group's), so a selection or a flow arrow always has a line to land on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PHASES, type Lane } from '../../src/engine/index';
import {
  COUNTERS_KEY,
  buildLayout,
  lineAt,
  nodeKey,
  restoredLayoutState,
  savedLayoutState,
  toggleFold,
  togglePin,
  type Layout,
  type LayoutState,
} from '../../webview/timeline/layout';
import { TimelineModel } from '../../webview/timeline/model';
import { ColumnScratch, EMPTY, columnsForRow, columnsForRows } from '../../webview/timeline/raster';

const EMPTY_STATE: LayoutState = { folded: new Set(), pinned: new Set() };

/** Two nodes of two ranks, a link lane per node, and one lane with no node. */
const LANES: Lane[] = [0, 1, 2, 3]
  .map((rank): Lane => ({ id: rank, kind: 'rank', label: `rank ${rank}`, rank, node: rank >> 1 }))
  .concat([
    { id: 4, kind: 'link', label: 'ib0', node: 0 },
    { id: 5, kind: 'link', label: 'ib1', node: 1 },
    { id: 6, kind: 'stream', label: 'host', rank: 0 },
  ]);

function model(): TimelineModel {
  // One span per lane, plus one span nested in rank 1's, so rank 1 has two tracks.
  const spans: [lane: number, startUs: number, endUs: number][] = [
    [0, 0, 10],
    [1, 5, 30],
    [1, 10, 20],
    [2, 20, 40],
    [3, 40, 50],
    [4, 0, 5],
    [5, 45, 50],
    [6, 0, 50],
  ];
  return TimelineModel.fromColumns({ origin: 'test', title: 't', ranks: 4 }, LANES, {
    startUs: Float64Array.from(spans, (s) => s[1]),
    endUs: Float64Array.from(spans, (s) => s[2]),
    lane: Uint32Array.from(spans, (s) => s[0]),
    phase: Uint8Array.from(spans, (_, i) => PHASES.indexOf(i === 1 ? 'collective' : i === 2 ? 'reduce' : 'exchange')),
  });
}

/** Each line as text: "group node 0 (rows)", "track label", "counter label". */
function lines(m: TimelineModel, layout: Layout): string[] {
  return [...layout.pinned, ...layout.scrolling].map((line) => {
    if (line.kind === 'group') return `${line.folded ? '+' : '-'}${line.label}`;
    if (line.kind === 'counter') return `counter ${line.label}`;
    return `${line.pinned ? 'pinned ' : ''}${m.rows[line.row].label}`;
  });
}

test('each node gets a header line above its tracks, rows without a node follow without one', () => {
  const m = model();
  const layout = buildLayout(m.rows, [], EMPTY_STATE);
  assert.deepEqual(lines(m, layout), [
    '-node 0 · 3 lanes',
    'rank 0',
    'rank 1',
    'rank 1',
    'ib0',
    '-node 1 · 3 lanes',
    'rank 2',
    'rank 3',
    'ib1',
    'host',
  ]);
  // Every model row has the line it is drawn on.
  m.rows.forEach((_, row) => {
    const line = lineAt(layout, layout.lineOfRow[row]);
    assert.ok(line?.kind === 'track' && line.row === row, `row ${row} is on its own line`);
  });
});

test('a single node gets no header: one group would only add a line', () => {
  const lanes = LANES.filter((l) => l.node !== 1).map((l) => l);
  const layout = buildLayout(lanes, [], EMPTY_STATE);
  assert.equal(layout.scrolling.filter((l) => l.kind === 'group').length, 0, 'no header for the only node');
  assert.equal(layout.scrolling.length, lanes.length);
});

test('a folded node is one line that holds all its rows; unfolding restores them', () => {
  const m = model();
  const folded = toggleFold(EMPTY_STATE, nodeKey(0));
  const layout = buildLayout(m.rows, [], folded);
  assert.deepEqual(lines(m, layout), ['+node 0 · 3 lanes', '-node 1 · 3 lanes', 'rank 2', 'rank 3', 'ib1', 'host']);
  const header = layout.scrolling[0];
  assert.ok(header.kind === 'group');
  // The header holds the four rows of node 0 (rank 0, rank 1's two tracks, ib0), and they all point to it.
  assert.equal(header.rows.length, 4);
  for (const row of header.rows) assert.equal(layout.lineOfRow[row], 0);
  const unfolded = buildLayout(m.rows, [], toggleFold(folded, nodeKey(0)));
  assert.deepEqual(lines(m, unfolded), lines(m, buildLayout(m.rows, [], EMPTY_STATE)));
});

test('a folded node draws, in each column, what its tracks draw there merged', () => {
  const m = model();
  const layout = buildLayout(m.rows, [], toggleFold(EMPTY_STATE, nodeKey(0)));
  const header = layout.scrolling[0];
  assert.ok(header.kind === 'group');
  const view = { startUs: 0, endUs: 50, width: 50 };
  const merged = new ColumnScratch();
  merged.resize(50);
  columnsForRows(m, header.rows, view, null, merged);
  const single = new ColumnScratch();
  single.resize(50);
  const busy = new Uint8Array(50);
  for (const row of header.rows) {
    columnsForRow(m, row, view, null, single);
    single.slot.forEach((slot, c) => {
      if (slot !== EMPTY) busy[c] = 1;
    });
  }
  // A column is painted on the summary exactly where some track of the node paints it.
  merged.slot.forEach((slot, c) => assert.equal(slot !== EMPTY, busy[c] === 1, `column ${c}`));
  // Node 0 runs from 0 to 30 µs (rank 0, rank 1, ib0) and is idle after.
  assert.notEqual(merged.slot[25], EMPTY);
  assert.equal(merged.slot[35], EMPTY);
});

test('pinning a lane moves all its tracks to the pinned band, in model order, and unpinning puts them back', () => {
  const m = model();
  // Rank 1 (lane 1, two tracks) and the host lane.
  let state = togglePin(togglePin(EMPTY_STATE, 6), 1);
  const layout = buildLayout(m.rows, [], state);
  assert.deepEqual(
    layout.pinned.map((l) => (l.kind === 'track' ? m.rows[l.row].label : l.kind)),
    ['rank 1', 'rank 1', 'host'],
  );
  assert.ok(
    !lines(m, layout)
      .slice(3)
      .some((text) => text.endsWith('rank 1')),
    'rank 1 left the scrolling lines',
  );
  assert.ok(lines(m, layout).includes('-node 0 · 2 lanes'), 'the node header counts the lanes left under it');
  // A pinned lane stays pinned when its node folds.
  state = toggleFold(state, nodeKey(0));
  const folded = buildLayout(m.rows, [], state);
  assert.equal(folded.pinned.length, 3);
  const rank1 = m.rows.findIndex((l) => l.label === 'rank 1');
  assert.ok(folded.lineOfRow[rank1] < folded.pinned.length, 'rank 1 is drawn in the pinned band');
  const back = buildLayout(m.rows, [], togglePin(togglePin(EMPTY_STATE, 6), 6));
  assert.deepEqual(lines(m, back), lines(m, buildLayout(m.rows, [], EMPTY_STATE)));
});

test('counters get their own group at the end, which folds like a node', () => {
  const m = model();
  const open = buildLayout(m.rows, ['busbw', 'ib0'], EMPTY_STATE);
  assert.deepEqual(lines(m, open).slice(-3), ['-counters · 2', 'counter busbw', 'counter ib0']);
  const folded = buildLayout(m.rows, ['busbw', 'ib0'], toggleFold(EMPTY_STATE, COUNTERS_KEY));
  assert.deepEqual(lines(m, folded).slice(-2), ['host', '+counters · 2']);
});

test('the saved fold and pin state gives the same lines after a reload, and only for groups and lanes the trace has', () => {
  const m = model();
  const state = toggleFold(togglePin(togglePin(EMPTY_STATE, 6), 1), nodeKey(1));
  const saved = JSON.parse(JSON.stringify(savedLayoutState(state))) as ReturnType<typeof savedLayoutState>;
  assert.deepEqual(saved, { folded: ['node 1'], pinned: [1, 6] });
  const restored = restoredLayoutState(m.rows, saved);
  assert.deepEqual(lines(m, buildLayout(m.rows, ['busbw'], restored)), lines(m, buildLayout(m.rows, ['busbw'], state)));
  // A state saved for another trace: node 7 and lane 99 do not exist here and change nothing.
  const foreign = restoredLayoutState(m.rows, { folded: ['node 7', COUNTERS_KEY], pinned: [99, 4] });
  assert.deepEqual([...foreign.folded], [COUNTERS_KEY]);
  assert.deepEqual([...foreign.pinned], [4]);
  assert.deepEqual(restoredLayoutState(m.rows, {}), { folded: new Set(), pinned: new Set() });
});

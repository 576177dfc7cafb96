// What the timeline shows on each line, in the style of Perfetto's track groups: the tracks of each node under a
// header line with a twisty (folded, the header is one summary lane of all of them), pinned tracks in a band at
// the top that does not scroll, and counter tracks in a group of their own at the end. The model's rows stay
// flat (they are what the rasteriser, the level-of-detail buckets and the hit test work on); this is the mapping
// from display lines to those rows.
import type { Lane } from '../../src/engine/index';
import { t } from '../shared/strings';
import type { Track } from './tracks';

/** A header line: a node's tracks or the counters, shown under it or, folded, summarised on the header itself. */
export interface GroupLine {
  readonly kind: 'group';
  /** "node 3" or "counters": the key fold state is kept under. */
  readonly key: string;
  readonly label: string;
  readonly folded: boolean;
  /** Model rows of the group, in display order (a folded node draws them merged on this line). */
  readonly rows: readonly number[];
  /** Counter indices of the group (a folded counter group draws its first one on this line). */
  readonly counters: readonly number[];
}

/** A model row shown on its own line. */
export interface TrackLine {
  readonly kind: 'track';
  readonly row: number;
  readonly pinned: boolean;
}

/** A counter (bytes in flight on a link, busbw over time) drawn as an area chart on its own line. */
export interface CounterLine {
  readonly kind: 'counter';
  readonly counter: number;
  readonly label: string;
}

export type DisplayLine = GroupLine | TrackLine | CounterLine;

export interface Layout {
  /** Lines in the band at the top that does not scroll: the pinned tracks, in model order. */
  readonly pinned: readonly DisplayLine[];
  /** Every other line, in order; the scrollable part of the panel. */
  readonly scrolling: readonly DisplayLine[];
  /**
   * Where each model row is shown: its index in [...pinned, ...scrolling] (its own line, or its folded group's
   * header line), so a selected span can be outlined and a flow arrow drawn to the line that holds it.
   */
  readonly lineOfRow: Int32Array;
}

export interface LayoutState {
  /** Keys of the folded groups (GroupLine.key). */
  readonly folded: ReadonlySet<string>;
  /** Lane ids (Track.laneId, or Lane.id for a lane that did not nest) of the pinned lanes: all their tracks pin. */
  readonly pinned: ReadonlySet<number>;
}

/** The trace's lane id of a row: a track's lane, or the row's own id when the lane did not nest. */
export const laneIdOf = (lane: Lane): number => (lane as Partial<Track>).laneId ?? lane.id;

export const nodeKey = (node: number): string => `node ${node}`;
export const COUNTERS_KEY = 'counters';

/**
 * Lays out the model's rows (sorted by node, as the model sorts them) and the counters' labels. Nodes get header
 * lines only when the trace has two or more: one node under a header would only add a line. Rows without a node
 * (links of a fabric, imported streams) follow the groups without a header.
 */
export function buildLayout(rows: readonly Lane[], counterLabels: readonly string[], state: LayoutState): Layout {
  const pinned: DisplayLine[] = [];
  const scrolling: DisplayLine[] = [];
  const placement: { row: number; line: number; inPinned: boolean }[] = [];
  const nodes = new Set(rows.map((l) => l.node).filter((n): n is number => n !== undefined));
  const grouped = nodes.size >= 2;
  let r = 0;
  while (r < rows.length) {
    const node = rows[r].node;
    let end = r + 1;
    while (end < rows.length && rows[end].node === node) end++;
    const members: number[] = [];
    for (let k = r; k < end; k++) {
      if (state.pinned.has(laneIdOf(rows[k]))) {
        placement.push({ row: k, line: pinned.length, inPinned: true });
        pinned.push({ kind: 'track', row: k, pinned: true });
      } else members.push(k);
    }
    if (grouped && node !== undefined && members.length > 0) {
      const key = nodeKey(node);
      const folded = state.folded.has(key);
      const lanes = new Set(members.map((k) => laneIdOf(rows[k]))).size;
      const header = scrolling.length;
      scrolling.push({
        kind: 'group',
        key,
        label: lanes === 1 ? t('node {0} · 1 lane', node) : t('node {0} · {1} lanes', node, lanes),
        folded,
        rows: members,
        counters: [],
      });
      for (const k of members) {
        placement.push({ row: k, line: folded ? header : scrolling.length, inPinned: false });
        if (!folded) scrolling.push({ kind: 'track', row: k, pinned: false });
      }
    } else {
      for (const k of members) {
        placement.push({ row: k, line: scrolling.length, inPinned: false });
        scrolling.push({ kind: 'track', row: k, pinned: false });
      }
    }
    r = end;
  }
  if (counterLabels.length > 0) {
    const folded = state.folded.has(COUNTERS_KEY);
    scrolling.push({
      kind: 'group',
      key: COUNTERS_KEY,
      label: t('counters · {0}', counterLabels.length),
      folded,
      rows: [],
      counters: counterLabels.map((_, i) => i),
    });
    if (!folded) counterLabels.forEach((label, counter) => scrolling.push({ kind: 'counter', counter, label }));
  }
  const lineOfRow = new Int32Array(rows.length).fill(-1);
  for (const p of placement) lineOfRow[p.row] = p.inPinned ? p.line : pinned.length + p.line;
  return { pinned, scrolling, lineOfRow };
}

/** The line at an index of [...pinned, ...scrolling]. */
export function lineAt(layout: Layout, index: number): DisplayLine | undefined {
  return index < layout.pinned.length ? layout.pinned[index] : layout.scrolling[index - layout.pinned.length];
}

/** A new state with a group folded or unfolded. */
export function toggleFold(state: LayoutState, key: string): LayoutState {
  const folded = new Set(state.folded);
  if (!folded.delete(key)) folded.add(key);
  return { folded, pinned: state.pinned };
}

/** A new state with a lane pinned or unpinned. */
export function togglePin(state: LayoutState, laneId: number): LayoutState {
  const pinned = new Set(state.pinned);
  if (!pinned.delete(laneId)) pinned.add(laneId);
  return { folded: state.folded, pinned };
}

/** The fold and pin state as the panel saves it (webview setState), in a stable order. */
export function savedLayoutState(state: LayoutState): { folded: string[]; pinned: number[] } {
  return { folded: [...state.folded].sort(), pinned: [...state.pinned].sort((a, b) => a - b) };
}

/**
 * The fold and pin state to restore for a trace from what was saved before a reload: only the groups the trace
 * has (its nodes' headers and the counters) and the lanes it has, so a saved state that no longer fits the trace
 * folds or pins nothing else.
 */
export function restoredLayoutState(
  rows: readonly Lane[],
  saved: { readonly folded?: readonly string[]; readonly pinned?: readonly number[] },
): LayoutState {
  const groups = new Set<string>([COUNTERS_KEY]);
  const lanes = new Set<number>();
  for (const row of rows) {
    if (row.node !== undefined) groups.add(nodeKey(row.node));
    lanes.add(laneIdOf(row));
  }
  return {
    folded: new Set((saved.folded ?? []).filter((key) => groups.has(key))),
    pinned: new Set((saved.pinned ?? []).filter((id) => lanes.has(id))),
  };
}

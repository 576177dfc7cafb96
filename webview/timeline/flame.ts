// The flame graph of a selected range, as Perfetto's and Speedscope's aggregate views give it: the spans inside the
// range merged by their nesting path (one node per distinct stack of names, over every counted lane), each node's
// width the time its spans ran inside the range. A span's total and self time are those of the name table
// (aggregate.ts): clipped to the range, self being what the track one deeper did not cover. So the root's total,
// the sum of every node's self time, is the busy time the table's self column adds up to.
import { CLOCK_CHECK_ELEMENTS, UNSLICED, finish, type SliceClock, type Steps } from '../shared/slices';
import { clippedSpanUs, countedRows, defaultName, trackDepth } from './aggregate';
import type { TimelineModel } from './model';

export interface FlameNode {
  readonly name: string;
  /** Time this node's spans ran inside the range, summed over them, µs. */
  totalUs: number;
  /** The part of totalUs that no span nested inside them covered, µs. */
  selfUs: number;
  /** Sorted indices of the spans merged into this node (a click on the node highlights them). */
  readonly spans: number[];
  /** Phase of the node's first span: the node takes the timeline's colour for it. */
  readonly phase: number;
  readonly children: FlameNode[];
}

/** The merged stacks of [startUs, endUs]: a root with no span whose children are the outermost names. */
export function rangeFlame(model: TimelineModel, startUs: number, endUs: number): FlameNode {
  return finish(rangeFlameSteps(model, startUs, endUs));
}

/** rangeFlame as a computation that yields whenever `clock` is due, a group of spans at a time. */
export function* rangeFlameSteps(
  model: TimelineModel,
  startUs: number,
  endUs: number,
  clock: SliceClock = UNSLICED,
  nameOf: (sorted: number) => string = defaultName(model),
): Steps<FlameNode> {
  const root: FlameNode = { name: '', totalUs: 0, selfUs: 0, spans: [], phase: 0, children: [] };
  const byPath = new Map<FlameNode, Map<string, FlameNode>>();
  const rows = countedRows(model.rows);
  // Tracks of one lane are consecutive rows, depth 0 first: a lane's spans are gathered from all of them, then
  // walked by start so that each span finds the span one track up that holds it.
  for (let first = 0; first < rows.length;) {
    let last = first + 1;
    while (last < rows.length && rows[last] === rows[last - 1] + 1 && trackDepth(model.rows, rows[last]) > 0) last++;
    // The tracks' spans are each sorted by start: merged by start, the outer track first at equal starts, without
    // sorting (a million spans sorted as objects took seconds).
    const tracks = rows.slice(first, last);
    const depths = tracks.map((row) => trackDepth(model.rows, row));
    const heads = tracks.map((row) => model.firstVisible(row, startUs));
    const ends = tracks.map((row) => model.rowOffsets[row + 1]);
    // The latest span seen on each track, and the node it was merged into.
    const openSpan: number[] = [];
    const openNode: FlameNode[] = [];
    for (let n = 1; ; n++) {
      let k = -1;
      for (let j = 0; j < tracks.length; j++) {
        if (
          heads[j] < ends[j] &&
          model.start[heads[j]] < endUs &&
          (k < 0 || model.start[heads[j]] < model.start[heads[k]])
        )
          k = j;
      }
      if (k < 0) break;
      if ((n & (CLOCK_CHECK_ELEMENTS - 1)) === 0 && clock.due()) yield;
      const i = heads[k]++;
      const row = tracks[k];
      const depth = depths[k];
      const clipped = clippedSpanUs(model, row, i, startUs, endUs);
      if (!clipped) continue;
      // The parent is the latest span one track up; a span whose depth was capped, or whose parent only
      // overlapped it, falls back to the nearest track above that still holds its start.
      let up = depth - 1;
      while (up >= 0 && !(openSpan[up] !== undefined && model.end[openSpan[up]] >= model.start[i])) up--;
      const parent = up >= 0 ? openNode[up] : root;
      const node = childNamed(byPath, parent, nameOf(i), model.phase[i]);
      node.totalUs += clipped.totalUs;
      node.selfUs += clipped.selfUs;
      node.spans.push(i);
      openSpan[depth] = i;
      openNode[depth] = node;
      openSpan.length = depth + 1;
      openNode.length = depth + 1;
    }
    first = last;
  }
  root.totalUs = sumSelf(root);
  sortByTotal(root);
  return root;
}

function childNamed(
  byPath: Map<FlameNode, Map<string, FlameNode>>,
  parent: FlameNode,
  name: string,
  phase: number,
): FlameNode {
  let named = byPath.get(parent);
  if (!named) byPath.set(parent, (named = new Map()));
  let node = named.get(name);
  if (!node) {
    node = { name, totalUs: 0, selfUs: 0, spans: [], phase, children: [] };
    named.set(name, node);
    parent.children.push(node);
  }
  return node;
}

function sumSelf(node: FlameNode): number {
  return node.children.reduce((sum, child) => sum + sumSelf(child), node.selfUs);
}

/** Widest child first, as Speedscope's left-heavy view: the names that took the time lie at the left. */
function sortByTotal(node: FlameNode): void {
  node.children.sort((a, b) => b.totalUs - a.totalUs || a.name.localeCompare(b.name));
  for (const child of node.children) sortByTotal(child);
}

/** The deepest level of the graph below the root (0 for a root with no children). */
export function flameDepth(node: FlameNode): number {
  return node.children.reduce((deepest, child) => Math.max(deepest, 1 + flameDepth(child)), 0);
}

/** A mask over the model's sorted spans with a 1 for each span merged into `node`, as the search box's mask. */
export function spanMask(node: FlameNode, spanCount: number): Uint8Array {
  const mask = new Uint8Array(spanCount);
  for (const i of node.spans) mask[i] = 1;
  return mask;
}

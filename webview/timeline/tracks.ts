// Nesting, the way Perfetto and Nsight draw a thread: a span that lies inside another span of the same lane is drawn
// one track below it (a training step's collective above its exchange, reduce and broadcast; a CPU op above the ops
// it called). Each lane whose spans nest becomes one display track per depth, so the rasteriser, the level-of-detail
// buckets and the hit test keep working on flat rows, each holding spans that do not contain each other.
import { PHASES, type Lane } from '../../src/engine/index';

/** A display row: a lane at one nesting depth. Depth 0 is the lane itself and carries its label. */
export interface Track extends Lane {
  /** 0 for the outermost spans of the lane, 1 for the spans inside them, and so on. */
  readonly depth: number;
  /** Id of the lane the track belongs to (Lane.id of the trace), which a track's own id is not. */
  readonly laneId: number;
}

/** Deeper nesting than this is drawn on the deepest track: a runaway stack must not create thousands of rows. */
export const MAX_DEPTH = 15;

/** The phases of one collective step are leaves: two of them never nest, even when channels make one span hold another. */
const LEAF_PHASES = new Set(
  ['exchange', 'reduce', 'broadcast'].map((p) => PHASES.indexOf(p as (typeof PHASES)[number])),
);

/**
 * The nesting depth of each span of the rows [offsets[r], offsets[r + 1]), spans sorted by start and, at equal
 * starts, longest first (so a parent precedes its children). A span's depth is one more than the innermost earlier
 * span that contains it; a span that only overlaps another (not inside it) takes that span's place on its track.
 * Two spans over the same interval in the same phase are siblings (channels running side by side), not parent and
 * child. Returns null when no span of any row nests, the usual case for simulated collectives, at the cost of
 * one pass.
 */
export function nestingDepths(
  start: Float64Array,
  end: Float64Array,
  phase: Uint8Array,
  offsets: Uint32Array,
): { depth: Uint8Array; rowDepths: Uint8Array } | null {
  const rows = offsets.length - 1;
  let depth: Uint8Array | undefined;
  const rowDepths = new Uint8Array(rows);
  const stack: number[] = [];
  let nested = false;
  for (let r = 0; r < rows; r++) {
    // Most rows (a rank's transfers, a stream's kernels) never overlap themselves: one comparison per span says so,
    // and such a row has nothing to nest. This keeps a million flat spans at a few milliseconds.
    let overlaps = false;
    let latestEnd = -Infinity;
    for (let i = offsets[r]; i < offsets[r + 1] && !overlaps; i++) {
      overlaps = start[i] < latestEnd;
      if (end[i] > latestEnd) latestEnd = end[i];
    }
    if (!overlaps) continue;
    depth ??= new Uint8Array(start.length);
    stack.length = 0;
    let deepest = 0;
    for (let i = offsets[r]; i < offsets[r + 1]; i++) {
      // A span that ends before this one does cannot hold it (nor anything after it: starts only grow).
      while (stack.length > 0 && end[stack[stack.length - 1]] < end[i]) stack.pop();
      const parent = stack.length > 0 ? stack[stack.length - 1] : -1;
      if (parent < 0) {
        depth[i] = 0;
        stack.push(i);
        continue;
      }
      const sameInterval = start[parent] === start[i] && end[parent] === end[i];
      const siblings =
        (sameInterval && phase[parent] === phase[i]) || (LEAF_PHASES.has(phase[parent]) && LEAF_PHASES.has(phase[i]));
      if (siblings) {
        depth[i] = depth[parent];
        continue;
      }
      depth[i] = Math.min(MAX_DEPTH, depth[parent] + 1);
      if (depth[i] > deepest) deepest = depth[i];
      stack.push(i);
    }
    rowDepths[r] = deepest;
    if (deepest > 0) nested = true;
  }
  return nested && depth ? { depth, rowDepths } : null;
}

/**
 * The tracks of each lane (rows in display order, each expanded to rowDepths[r] + 1 tracks) and, for each span in
 * the input's order, the id of the track it is drawn on. Track ids follow display order, so sorting the tracks the
 * way the model sorts lanes keeps them in this order.
 */
export function expandTracks(
  rows: readonly Lane[],
  rowDepths: Uint8Array,
  depthOfSorted: Uint8Array,
  offsets: Uint32Array,
  originalIndex: (sorted: number) => number,
): { tracks: Track[]; trackOfSpan: Uint32Array } {
  const tracks: Track[] = [];
  const firstTrack = new Uint32Array(rows.length);
  rows.forEach((lane, r) => {
    firstTrack[r] = tracks.length;
    for (let d = 0; d <= rowDepths[r]; d++) tracks.push({ ...lane, id: tracks.length, depth: d, laneId: lane.id });
  });
  const trackOfSpan = new Uint32Array(depthOfSorted.length);
  for (let r = 0; r < rows.length; r++) {
    for (let k = offsets[r]; k < offsets[r + 1]; k++) trackOfSpan[originalIndex(k)] = firstTrack[r] + depthOfSorted[k];
  }
  return { tracks, trackOfSpan };
}

/** True for a row that draws deeper spans of the lane above it (its label is that lane's, not repeated). */
export function isNestedTrack(lane: Lane): boolean {
  return (lane as Partial<Track>).depth !== undefined && (lane as Track).depth > 0;
}

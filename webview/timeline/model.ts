// The timeline's data: spans as typed arrays grouped by display row and sorted by start time, so the visible
// window of a row is a binary search away, plus each row's level-of-detail pyramid.
import {
  PHASES,
  type Lane,
  type LaneKind,
  type Phase,
  type Span,
  type Trace,
  type TraceMetadata,
} from '../../src/engine/index';
import { buildRowLod, type RowLod } from './lod';
import type { SliceClock, Steps } from '../shared/slices';
import { computeRangeStats, computeRangeStatsSteps, type RangeSource, type RangeStats } from './range-stats';
import { expandTracks, nestingDepths, type Track } from './tracks';

export const PHASE_COUNT = PHASES.length;
/**
 * What a span is coloured by: its phase, and for compute one more key, so a training step reads like Nsight's
 * NVTX ranges: forward in the compute colour, backward in its own, the optimizer in its phase's.
 */
export const COLOUR_KEYS: readonly string[] = [...PHASES, 'backward'];
export const COLOUR_COUNT = COLOUR_KEYS.length;
const BACKWARD_COLOUR = COLOUR_KEYS.indexOf('backward');
const COMPUTE_PHASE = PHASES.indexOf('compute');
const BACKWARD_NAME = /backward|\bbwd\b|autograd::engine/i;

/** Spans as columns; index i of every array describes span i. */
export interface SpanColumns {
  readonly startUs: Float64Array;
  readonly endUs: Float64Array;
  /** Lane id of each span (Lane.id). */
  readonly lane: Uint32Array;
  /** Index into PHASES. */
  readonly phase: Uint8Array;
  /** Bytes a span moved over links, or a collective span's message bytes (0 for local work), for range bandwidth. */
  readonly transferBytes?: Float64Array;
}

export type { RangeStats } from './range-stats';

/** The trace's lane id of a row: a track's lane, or the row's own id when the lane did not nest. */
const laneIdOf = (lane: Lane): number => (lane as Partial<Track>).laneId ?? lane.id;

const KIND_ORDER: Readonly<Record<LaneKind, number>> = { node: 0, rank: 1, stream: 2, link: 3 };

export class TimelineModel {
  /** Sorted position → index in the original span list, or null when the input was already in row order. */
  private readonly order: Uint32Array | null;
  /** Longest span in each row, µs: the binary search for a window starts this far before it. */
  private readonly rowMaxDurationUs: Float64Array;
  readonly lods: (RowLod | null)[];
  /** Colour key (index into COLOUR_KEYS) per sorted position: the phase, or "backward" for backward compute. */
  readonly colour: Uint8Array;
  /** 1 for rows of every other lane (all tracks of a lane alike), so stripes mark lanes rather than depths. */
  readonly stripe: Uint8Array;
  readonly startUs: number;
  readonly endUs: number;

  private constructor(
    readonly metadata: TraceMetadata,
    /** Lanes in display order (one row each). */
    readonly rows: readonly Lane[],
    /** Spans of row r are the sorted positions [rowOffsets[r], rowOffsets[r + 1]). */
    readonly rowOffsets: Uint32Array,
    readonly start: Float64Array,
    readonly end: Float64Array,
    readonly phase: Uint8Array,
    /** Bytes per span in the input's order (index with originalIndex): moved over links, or a collective's message. */
    readonly transferBytes: Float64Array | null,
    order: Uint32Array | null,
    /** The original spans, for hover and details; absent when the trace came as bare columns. */
    readonly spans: readonly Span[] | undefined,
  ) {
    this.order = order;
    this.stripe = new Uint8Array(rows.length);
    let ordinal = 0;
    rows.forEach((lane, r) => {
      if (r > 0 && laneIdOf(lane) !== laneIdOf(rows[r - 1])) ordinal++;
      this.stripe[r] = ordinal & 1;
    });
    let lo = Infinity;
    let hi = -Infinity;
    this.rowMaxDurationUs = new Float64Array(rows.length);
    for (let r = 0; r < rows.length; r++) {
      let longest = 0;
      for (let i = rowOffsets[r]; i < rowOffsets[r + 1]; i++) {
        if (start[i] < lo) lo = start[i];
        if (end[i] > hi) hi = end[i];
        if (end[i] - start[i] > longest) longest = end[i] - start[i];
      }
      this.rowMaxDurationUs[r] = longest;
    }
    this.startUs = Number.isFinite(lo) ? lo : 0;
    this.endUs = hi > this.startUs ? hi : this.startUs + 1;
    this.colour = spans ? backwardColours(phase, spans, (k) => this.originalIndex(k)) : phase;
    const scratch = { perPhase: new Float32Array(0) };
    this.lods = rows.map((_, r) =>
      buildRowLod(
        start,
        end,
        this.colour,
        rowOffsets[r],
        rowOffsets[r + 1],
        this.startUs,
        this.endUs,
        COLOUR_COUNT,
        scratch,
      ),
    );
  }

  get spanCount(): number {
    return this.start.length;
  }

  static fromTrace(trace: Trace): TimelineModel {
    const n = trace.spans.length;
    const columns = {
      startUs: new Float64Array(n),
      endUs: new Float64Array(n),
      lane: new Uint32Array(n),
      phase: new Uint8Array(n),
      transferBytes: new Float64Array(n),
    };
    const phaseIndex = new Map<Phase, number>(PHASES.map((p, i) => [p, i]));
    trace.spans.forEach((span, i) => {
      columns.startUs[i] = span.startUs;
      columns.endUs[i] = Math.max(span.startUs, span.endUs);
      columns.lane[i] = span.lane;
      columns.phase[i] = phaseIndex.get(span.phase) ?? PHASE_COUNT - 1;
      // A transfer's bytes crossed its links; a collective span (a training step's or an imported op) carries its
      // message size. Local work, such as a reduce kernel, moved nothing over a link.
      columns.transferBytes[i] = span.links.length > 0 || span.phase === 'collective' ? span.bytes : 0;
    });
    return TimelineModel.fromColumns(trace.metadata, trace.lanes, columns, trace.spans);
  }

  /**
   * Groups the spans by row and sorts each row by start; input already in that order is used without a copy.
   * Lanes whose spans nest become one track per depth (tracks.ts), so a span inside another is drawn below it.
   */
  static fromColumns(
    metadata: TraceMetadata,
    lanes: readonly Lane[],
    columns: SpanColumns,
    spans?: readonly Span[],
  ): TimelineModel {
    const flat = TimelineModel.grouped(metadata, lanes, columns, spans);
    const nesting = nestingDepths(flat.start, flat.end, flat.phase, flat.rowOffsets);
    if (!nesting) return flat;
    const { tracks, trackOfSpan } = expandTracks(flat.rows, nesting.rowDepths, nesting.depth, flat.rowOffsets, (k) =>
      flat.originalIndex(k),
    );
    return TimelineModel.grouped(metadata, tracks, { ...columns, lane: trackOfSpan }, spans);
  }

  private static grouped(
    metadata: TraceMetadata,
    lanes: readonly Lane[],
    columns: SpanColumns,
    spans?: readonly Span[],
  ): TimelineModel {
    const rows = [...lanes].sort(
      (a, b) =>
        (a.node ?? Infinity) - (b.node ?? Infinity) ||
        KIND_ORDER[a.kind] - KIND_ORDER[b.kind] ||
        (a.rank ?? 0) - (b.rank ?? 0) ||
        a.id - b.id,
    );
    const maxLaneId = lanes.reduce((m, l) => Math.max(m, l.id), 0);
    const rowOfLane = new Int32Array(maxLaneId + 1).fill(-1);
    rows.forEach((lane, r) => {
      rowOfLane[lane.id] = r;
    });
    // Locals rather than property reads keep these million-iteration loops monomorphic and fast.
    const { startUs, endUs, lane, phase, transferBytes } = columns;
    const n = startUs.length;
    const counts = new Uint32Array(rows.length + 1);
    let inOrder = true;
    let previousRow = 0;
    let previousStart = -Infinity;
    let previousEnd = Infinity;
    for (let i = 0; i < n; i++) {
      const id = lane[i];
      const row = id <= maxLaneId ? rowOfLane[id] : -1;
      if (row < 0) throw new Error(`span ${i} is on unknown lane ${id}`);
      counts[row + 1]++;
      // Within a row: by start, and at equal starts the longer span first, so a parent precedes its children.
      if (
        row < previousRow ||
        (row === previousRow &&
          (startUs[i] < previousStart || (startUs[i] === previousStart && endUs[i] > previousEnd)))
      )
        inOrder = false;
      previousRow = row;
      previousStart = startUs[i];
      previousEnd = endUs[i];
    }
    const offsets = new Uint32Array(rows.length + 1);
    for (let r = 0; r < rows.length; r++) offsets[r + 1] = offsets[r] + counts[r + 1];
    if (inOrder) {
      return new TimelineModel(
        metadata,
        rows,
        offsets,
        startUs,
        endUs,
        phase,
        transferBytes && transferBytes.length === n ? transferBytes : null,
        null,
        spans,
      );
    }
    // Counting sort by row: a permutation first, then one gather loop per column. Separate monomorphic loops
    // read with a fixed stride the prefetcher follows; scattering every column at once thrashes the cache.
    const order = new Uint32Array(n);
    const cursor = offsets.slice(0, rows.length);
    for (let i = 0; i < n; i++) order[cursor[rowOfLane[lane[i]]]++] = i;
    const sortedStart = new Float64Array(n);
    const sortedEnd = new Float64Array(n);
    const sortedPhase = new Uint8Array(n);
    for (let k = 0; k < n; k++) sortedStart[k] = startUs[order[k]];
    for (let k = 0; k < n; k++) sortedEnd[k] = endUs[order[k]];
    for (let k = 0; k < n; k++) sortedPhase[k] = phase[order[k]];
    // Input order is kept within a row; a row whose spans were not emitted in start order is sorted now.
    for (let r = 0; r < rows.length; r++) {
      const from = offsets[r];
      const to = offsets[r + 1];
      let sorted = true;
      for (let k = from + 1; k < to && sorted; k++)
        sorted =
          sortedStart[k] > sortedStart[k - 1] ||
          (sortedStart[k] === sortedStart[k - 1] && sortedEnd[k] <= sortedEnd[k - 1]);
      if (sorted) continue;
      const permutation = Array.from({ length: to - from }, (_, k) => from + k).sort(
        (a, b) => sortedStart[a] - sortedStart[b] || sortedEnd[b] - sortedEnd[a] || a - b,
      );
      const reorder = <T extends Float64Array | Uint8Array | Uint32Array>(column: T): void => {
        const copy = column.slice(from, to);
        permutation.forEach((source, k) => {
          column[from + k] = copy[source - from];
        });
      };
      reorder(sortedStart);
      reorder(sortedEnd);
      reorder(sortedPhase);
      reorder(order);
    }
    // Bytes stay in input order (read through `order`): only range statistics need them, so no copy up front.
    return new TimelineModel(
      metadata,
      rows,
      offsets,
      sortedStart,
      sortedEnd,
      sortedPhase,
      transferBytes && transferBytes.length === n ? transferBytes : null,
      order,
      spans,
    );
  }

  /** Index in the original span list of the span at a sorted position. */
  originalIndex(sorted: number): number {
    return this.order ? this.order[sorted] : sorted;
  }

  /** The original span at a sorted position, when the trace came with span objects. */
  spanAt(sorted: number): Span | undefined {
    return this.spans?.[this.originalIndex(sorted)];
  }

  /** The first sorted position in `row` whose span may end at or after `timeUs`. */
  firstVisible(row: number, timeUs: number): number {
    let lo = this.rowOffsets[row];
    let hi = this.rowOffsets[row + 1];
    const from = timeUs - this.rowMaxDurationUs[row];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.start[mid] < from) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The span in `row` under `timeUs`, or the nearest one within `toleranceUs`; -1 when none. */
  hitTest(row: number, timeUs: number, toleranceUs: number): number {
    if (row < 0 || row >= this.rows.length) return -1;
    let best = -1;
    let bestDistance = Infinity;
    const last = this.rowOffsets[row + 1];
    for (let i = this.firstVisible(row, timeUs - toleranceUs); i < last && this.start[i] <= timeUs + toleranceUs; i++) {
      const distance =
        timeUs < this.start[i] ? this.start[i] - timeUs : timeUs > this.end[i] ? timeUs - this.end[i] : 0;
      // Among overlapping spans the shortest wins, so a short span drawn over a long one can be picked.
      if (
        distance < bestDistance ||
        (distance === 0 && best >= 0 && this.end[i] - this.start[i] < this.end[best] - this.start[best])
      ) {
        best = i;
        bestDistance = distance;
      }
    }
    return bestDistance <= toleranceUs ? best : -1;
  }

  /** Bytes of the span at a sorted position: moved over links, or a collective's message; 0 for local work. */
  bytesAt(sorted: number): number {
    return this.transferBytes ? this.transferBytes[this.originalIndex(sorted)] : 0;
  }

  /** Phase time, idle time and bandwidth of a time range over the rank rows (see range-stats.ts). */
  rangeStats(startUs: number, endUs: number): RangeStats {
    return computeRangeStats(this.rangeSource(), startUs, endUs);
  }

  /** rangeStats as a computation that yields whenever `clock` is due, for the panel to run in slices. */
  rangeStatsSteps(startUs: number, endUs: number, clock: SliceClock): Steps<RangeStats> {
    return computeRangeStatsSteps(this.rangeSource(), startUs, endUs, clock);
  }

  private rangeSource(): RangeSource {
    return {
      rows: this.rows,
      rowOffsets: this.rowOffsets,
      start: this.start,
      end: this.end,
      phase: this.phase,
      ranksInMetadata: this.metadata.ranks,
      bytesAt: (sorted) => this.bytesAt(sorted),
      firstVisible: (row, timeUs) => this.firstVisible(row, timeUs),
    };
  }

  /** Marks each sorted position whose span matches; used to dim everything else. */
  matchMask(matches: (sorted: number, row: number) => boolean): { mask: Uint8Array; count: number } {
    const mask = new Uint8Array(this.spanCount);
    let count = 0;
    for (let r = 0; r < this.rows.length; r++) {
      for (let i = this.rowOffsets[r]; i < this.rowOffsets[r + 1]; i++) {
        if (matches(i, r)) {
          mask[i] = 1;
          count++;
        }
      }
    }
    return { mask, count };
  }

  /** The row that holds a sorted position. */
  rowOf(sorted: number): number {
    let lo = 0;
    let hi = this.rows.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.rowOffsets[mid] <= sorted) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

/** The phase column with backward compute spans re-keyed "backward"; the phase column itself when there are none. */
function backwardColours(phase: Uint8Array, spans: readonly Span[], originalIndex: (k: number) => number): Uint8Array {
  let colour: Uint8Array | undefined;
  // Names repeat (one per layer and step), so each distinct name is tested once.
  const isBackward = new Map<string, boolean>();
  for (let k = 0; k < phase.length; k++) {
    if (phase[k] !== COMPUTE_PHASE) continue;
    const name = spans[originalIndex(k)]?.name;
    if (!name) continue;
    let backward = isBackward.get(name);
    if (backward === undefined) {
      backward = BACKWARD_NAME.test(name);
      isBackward.set(name, backward);
    }
    if (!backward) continue;
    colour ??= phase.slice();
    colour[k] = BACKWARD_COLOUR;
  }
  return colour ?? phase;
}

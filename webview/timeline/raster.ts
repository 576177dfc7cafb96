// Rasterises rows of spans into an RGBA pixel buffer. Each pixel column of a row gets the colour of the phase
// that occupies most of it, so any number of spans in one column costs one column write. Rows are painted by
// copying one prepared line per pixel row (TypedArray.set), the fastest way to fill pixels from script.
import { COLOUR_COUNT, type TimelineModel } from './model';

/** One slot per colour key (model.ts); slot COLOUR_COUNT holds spans that the filter dims. */
const SLOTS = COLOUR_COUNT + 1;
export const DIMMED_SLOT = COLOUR_COUNT;
export const EMPTY = 255;

export interface RasterTarget {
  readonly pixels: Uint32Array;
  /** Width of the pixel buffer (the plot), in pixels. */
  readonly width: number;
  readonly height: number;
}

/** Reusable per-frame buffers, sized to the plot width. */
export class ColumnScratch {
  coverage = new Float32Array(0);
  slot = new Uint8Array(0);
  line = new Uint32Array(0);
  /** Coverage a column needs to show: 0.5 of a pixel for spans scanned one by one, any for level-of-detail buckets. */
  threshold = 0.5;
  resize(width: number): void {
    if (this.slot.length === width) return;
    this.coverage = new Float32Array(width * SLOTS);
    this.slot = new Uint8Array(width);
    this.line = new Uint32Array(width);
  }
}

export interface RowWindow {
  readonly startUs: number;
  readonly endUs: number;
  readonly width: number;
}

/**
 * Fills scratch.slot with the slot shown in each pixel column of `row` (EMPTY where nothing runs).
 * Uses the row's level-of-detail buckets when a column spans at least one bucket and no filter is active.
 */
export function columnsForRow(
  model: TimelineModel,
  row: number,
  view: RowWindow,
  mask: Uint8Array | null,
  scratch: ColumnScratch,
): number {
  clearColumns(scratch, view.width);
  const visited = accumulateRow(model, row, view, mask, scratch);
  resolveColumns(scratch, view.width);
  return visited;
}

/**
 * Fills scratch.slot as columnsForRow does, for several rows merged into one line: a folded node's summary shows,
 * in each column, the colour that covers most of it across all of the node's tracks.
 */
export function columnsForRows(
  model: TimelineModel,
  rows: readonly number[],
  view: RowWindow,
  mask: Uint8Array | null,
  scratch: ColumnScratch,
): number {
  clearColumns(scratch, view.width);
  let visited = 0;
  for (const row of rows) visited += accumulateRow(model, row, view, mask, scratch);
  resolveColumns(scratch, view.width);
  return visited;
}

function clearColumns(scratch: ColumnScratch, width: number): void {
  scratch.coverage.fill(0, 0, width * SLOTS);
  scratch.threshold = 0.5;
}

/** Adds one row's spans in the window to the columns' coverage; returns how many spans or buckets it visited. */
function accumulateRow(
  model: TimelineModel,
  row: number,
  view: RowWindow,
  mask: Uint8Array | null,
  scratch: ColumnScratch,
): number {
  const { width } = view;
  const coverage = scratch.coverage;
  const usPerPx = (view.endUs - view.startUs) / width;
  const pxPerUs = 1 / usPerPx;
  const lod = mask ? null : model.lods[row];
  // The coarsest level whose buckets are still no wider than a pixel column.
  let level = undefined;
  for (const candidate of lod?.levels ?? []) if (candidate.bucketUs <= usPerPx) level = candidate;
  let visited = 0;
  if (lod && level) {
    // Zoomed out: any activity in a column marks it, like a span narrower than a pixel in the scan below.
    scratch.threshold = 1e-12;
    const first = Math.max(0, Math.floor((view.startUs - lod.originUs) / level.bucketUs));
    const last = Math.min(level.busyUs.length - 1, Math.ceil((view.endUs - lod.originUs) / level.bucketUs));
    for (let b = first; b <= last; b++) {
      const busy = level.busyUs[b];
      if (busy <= 0) continue;
      const column = Math.floor((lod.originUs + (b + 0.5) * level.bucketUs - view.startUs) * pxPerUs);
      if (column >= 0 && column < width) coverage[column * SLOTS + level.dominant[b]] += busy * pxPerUs;
      visited++;
    }
  } else {
    const start = model.start;
    const end = model.end;
    const phase = model.colour;
    const last = model.rowOffsets[row + 1];
    for (let i = model.firstVisible(row, view.startUs); i < last; i++) {
      const s = start[i];
      if (s > view.endUs) break;
      const e = end[i];
      if (e < view.startUs) continue;
      visited++;
      const slot = mask && mask[i] === 0 ? DIMMED_SLOT : phase[i];
      const x0 = Math.max(0, (s - view.startUs) * pxPerUs);
      const x1 = Math.min(width, (e - view.startUs) * pxPerUs);
      if (x1 - x0 < 1) {
        // A span narrower than a pixel still shows, as at least half a column's worth.
        const column = Math.min(width - 1, Math.floor(x0));
        coverage[column * SLOTS + slot] += Math.max(0.5, x1 - x0);
        continue;
      }
      const lastColumn = Math.min(width - 1, Math.ceil(x1) - 1);
      for (let c = Math.floor(x0); c <= lastColumn; c++)
        coverage[c * SLOTS + slot] += Math.min(x1, c + 1) - Math.max(x0, c);
    }
  }
  return visited;
}

/** Picks each column's slot: the colour covering most of it, or EMPTY below the threshold. */
function resolveColumns(scratch: ColumnScratch, width: number): void {
  const coverage = scratch.coverage;
  const threshold = scratch.threshold;
  const slots = scratch.slot;
  for (let c = 0; c < width; c++) {
    let best = EMPTY;
    let bestCoverage = 0;
    let total = 0;
    const base = c * SLOTS;
    for (let s = 0; s < SLOTS; s++) {
      const value = coverage[base + s];
      total += value;
      if (value > bestCoverage) {
        bestCoverage = value;
        best = s;
      }
    }
    slots[c] = total >= threshold ? best : EMPTY;
  }
}

/** Paints scratch.slot as pixel rows [top, bottom) of the target, using `palette` (one packed colour per slot). */
export function paintRow(
  target: RasterTarget,
  top: number,
  bottom: number,
  background: number,
  palette: Uint32Array,
  scratch: ColumnScratch,
): void {
  const { width } = target;
  const line = scratch.line;
  const slots = scratch.slot;
  for (let c = 0; c < width; c++) line[c] = slots[c] === EMPTY ? background : palette[slots[c]];
  const from = Math.max(0, top);
  const to = Math.min(target.height, bottom);
  for (let y = from; y < to; y++) target.pixels.set(line, y * width);
}

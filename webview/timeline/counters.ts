// Counter tracks, computed from the spans: the bytes in flight on each link and the bus bandwidth over time. A
// transfer of B bytes over [start, end] puts B / (end - start) bytes per µs on each of its links while it runs, so
// a counter is a step function whose integral over any window is the bytes that moved in it, and its average over
// a selected range is the range's busbw (range-stats.ts) to the last digit. A million spans take a second or more
// to count, so the panel runs traceCounterSteps in slices between frames (slices.ts) rather than in one task.
import { PHASES, type Lane } from '../../src/engine/index';
import { SLICE_CHUNK, finish, type Steps } from '../shared/slices';
import { t } from '../shared/strings';
import type { TimelineModel } from './model';
import { sortIndicesByTimeSteps } from './sort-by-time';

/** A piecewise-constant rate: valuePerUs[i] bytes per µs from timesUs[i] to timesUs[i + 1]; 0 after the last. */
export interface CounterSeries {
  readonly label: string;
  readonly timesUs: Float64Array;
  readonly valuePerUs: Float64Array;
  /** Integral of the rate up to timesUs[i], bytes: the window average of any range is two look-ups away. */
  readonly cumulativeBytes: Float64Array;
  /** Divides the rate before display: the number of ranks for busbw per rank, 1 for a link. */
  readonly divisor: number;
}

/** Links drawn as counters at most, the busiest first: past that the counters group is longer than the lanes. */
export const MAX_LINK_COUNTERS = 32;

/**
 * The step function of Σ bytes_i / (end_i - start_i) over the spans running at each instant. Spans with no length
 * or no bytes add nothing (a zero-length transfer has no rate to draw).
 */
export function rateSeries(
  label: string,
  startUs: ArrayLike<number>,
  endUs: ArrayLike<number>,
  bytes: ArrayLike<number>,
  divisor = 1,
): CounterSeries {
  return finish(rateSeriesSteps(label, startUs, endUs, bytes, divisor));
}

/** rateSeries as a computation that yields between chunks of its loops. */
export function* rateSeriesSteps(
  label: string,
  startUs: ArrayLike<number>,
  endUs: ArrayLike<number>,
  bytes: ArrayLike<number>,
  divisor = 1,
): Steps<CounterSeries> {
  const n = startUs.length;
  // Typed arrays sized for every span's two edges: a million spans make two million edges, and growing plain
  // arrays edge by edge cost as much as sorting them.
  const allTimes = new Float64Array(2 * n);
  const allDeltas = new Float64Array(2 * n);
  // Allocating tens of megabytes can start a garbage collection: the work goes on in the next slice.
  yield;
  let edges = 0;
  for (let from = 0; from < n; from += SLICE_CHUNK) {
    const to = Math.min(n, from + SLICE_CHUNK);
    for (let i = from; i < to; i++) {
      const durationUs = endUs[i] - startUs[i];
      if (!(durationUs > 0) || !(bytes[i] > 0)) continue;
      const rate = bytes[i] / durationUs;
      // A span too short for its bytes to have a finite rate (a picosecond-free clock's rounding) cannot be drawn,
      // and one whose rate underflows to zero moves nothing a counter can show (its edges would not say open/close).
      if (!Number.isFinite(rate) || !(rate > 0)) continue;
      allTimes[edges] = startUs[i];
      allDeltas[edges++] = rate;
      allTimes[edges] = endUs[i];
      allDeltas[edges++] = -rate;
    }
    yield;
  }
  const times = allTimes.subarray(0, edges);
  const deltas = allDeltas.subarray(0, edges);
  const order = yield* sortIndicesByTimeSteps(times);
  const stepTimes = new Float64Array(edges);
  const values = new Float64Array(edges);
  yield;
  let steps = 0;
  // The level is a compensated (Neumaier) sum: a small rate beside a large one that starts and ends around it
  // would otherwise lose its low digits when the large one is taken away.
  let sum = 0;
  let compensation = 0;
  let open = 0;
  for (let from = 0; from < order.length; from += SLICE_CHUNK) {
    const to = Math.min(order.length, from + SLICE_CHUNK);
    for (let k = from; k < to; k++) {
      const delta = deltas[order[k]];
      const next = sum + delta;
      compensation += Math.abs(sum) >= Math.abs(delta) ? sum - next + delta : delta - next + sum;
      sum = next;
      open += delta > 0 ? 1 : -1;
      const t = times[order[k]];
      // Edges at one instant merge into one step, so the series holds no zero-length pieces.
      if (k + 1 < order.length && times[order[k + 1]] === t) continue;
      // Adding and removing the same rates leaves rounding dust: where no span is open the level is exactly zero,
      // and a level that rounding pushed below zero is none. A tiny rate of a span that is open is kept.
      if (open === 0) sum = compensation = 0;
      const level = sum + compensation;
      stepTimes[steps] = t;
      values[steps++] = level > 0 ? level : 0;
    }
    yield;
  }
  // Views, not copies, and the edges' rates (all read by now) hold the integral: no more large arrays.
  const timesUs = stepTimes.subarray(0, steps);
  const valuePerUs = values.subarray(0, steps);
  const cumulativeBytes = allDeltas.subarray(0, steps);
  if (steps > 0) cumulativeBytes[0] = 0;
  for (let from = 0; from < steps; from += SLICE_CHUNK) {
    const to = Math.min(steps, from + SLICE_CHUNK);
    for (let i = from; i < to; i++) {
      if (i > 0) cumulativeBytes[i] = cumulativeBytes[i - 1] + valuePerUs[i - 1] * (timesUs[i] - timesUs[i - 1]);
    }
    yield;
  }
  return { label, timesUs, valuePerUs, cumulativeBytes, divisor };
}

/** Bytes the series moved from its start up to `timeUs`. */
export function bytesUpTo(series: CounterSeries, timeUs: number): number {
  const { timesUs, valuePerUs, cumulativeBytes } = series;
  if (timesUs.length === 0 || timeUs <= timesUs[0]) return 0;
  let lo = 0;
  let hi = timesUs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (timesUs[mid] <= timeUs) lo = mid;
    else hi = mid - 1;
  }
  return cumulativeBytes[lo] + valuePerUs[lo] * (timeUs - timesUs[lo]);
}

/** The series' average over [startUs, endUs] in GB/s, after its divisor (bytes per µs ÷ 1000 is GB/s). */
export function averageGBps(series: CounterSeries, startUs: number, endUs: number): number {
  if (!(endUs > startUs)) return 0;
  return (bytesUpTo(series, endUs) - bytesUpTo(series, startUs)) / (endUs - startUs) / 1e3 / series.divisor;
}

const speaksForRank = (lane: Lane): boolean => lane.kind === 'rank' || lane.kind === 'stream';

/**
 * The counters of a trace: busbw per rank over time, from the transfers on the ranks' rows (the same spans and
 * bytes as a range's busbw); algbw per rank, from the collective operations' spans (a training step's or an
 * imported profile's, which name a message size but no links: the same bytes as a range's algbw); then bytes in
 * flight on each link, from the ranks' transfers over it (link rows repeat those transfers and are not counted
 * again). Empty when no span moved bytes over a link and no collective named its bytes.
 */
export function traceCounters(model: TimelineModel): CounterSeries[] {
  return finish(traceCounterSteps(model));
}

/** traceCounters as a computation that yields between chunks of spans. */
export function* traceCounterSteps(model: TimelineModel): Steps<CounterSeries[]> {
  const starts: number[] = [];
  const ends: number[] = [];
  const bytes: number[] = [];
  const collectives: { starts: number[]; ends: number[]; bytes: number[] } = { starts: [], ends: [], bytes: [] };
  const perLink = new Map<string, { starts: number[]; ends: number[]; bytes: number[]; total: number }>();
  const ranks = new Set<number>();
  const collective = PHASES.indexOf('collective');
  for (let r = 0; r < model.rows.length; r++) {
    const lane = model.rows[r];
    if (!speaksForRank(lane)) continue;
    // Ranks are counted as range statistics count them: every rank that has a row, busy or not.
    if (lane.rank !== undefined) ranks.add(lane.rank);
    for (let k = model.rowOffsets[r]; k < model.rowOffsets[r + 1]; k++) {
      if ((k & (SLICE_CHUNK - 1)) === 0) yield;
      const b = model.bytesAt(k);
      if (!(b > 0)) continue;
      if (model.phase[k] === collective) {
        // A collective's message bytes, over the collective's span: what a range's algbw counts.
        collectives.starts.push(model.start[k]);
        collectives.ends.push(model.end[k]);
        collectives.bytes.push(b);
        continue;
      }
      const span = model.spanAt(k);
      // Without span objects (bare columns) every byte-carrying span on a rank row is a transfer.
      if (span && span.links.length === 0) continue;
      starts.push(model.start[k]);
      ends.push(model.end[k]);
      bytes.push(b);
      for (const link of span?.links ?? []) {
        let entry = perLink.get(link);
        if (!entry) perLink.set(link, (entry = { starts: [], ends: [], bytes: [], total: 0 }));
        entry.starts.push(model.start[k]);
        entry.ends.push(model.end[k]);
        entry.bytes.push(b);
        entry.total += b;
      }
    }
  }
  if (starts.length === 0 && collectives.starts.length === 0) return [];
  const rankCount = Math.max(1, ranks.size > 0 ? ranks.size : model.metadata.ranks);
  const counters: CounterSeries[] = [];
  if (starts.length > 0)
    counters.push(yield* rateSeriesSteps(t('busbw per rank ({0} ranks)', rankCount), starts, ends, bytes, rankCount));
  if (collectives.starts.length > 0) {
    const { starts: from, ends: to, bytes: moved } = collectives;
    counters.push(yield* rateSeriesSteps(t('algbw per rank ({0} ranks)', rankCount), from, to, moved, rankCount));
  }
  const links = [...perLink.entries()].sort((a, b) => b[1].total - a[1].total || a[0].localeCompare(b[0]));
  for (const [link, entry] of links.slice(0, MAX_LINK_COUNTERS))
    counters.push(yield* rateSeriesSteps(link, entry.starts, entry.ends, entry.bytes));
  return counters;
}

/**
 * The series' average in each of `columns` equal pieces of [startUs, endUs], GB/s: what a pixel column of a
 * counter line shows (an average keeps the bytes; a sample would miss a transfer shorter than a pixel).
 */
export function columnAverages(series: CounterSeries, startUs: number, endUs: number, columns: number): Float64Array {
  const out = new Float64Array(columns);
  const widthUs = (endUs - startUs) / columns;
  let before = bytesUpTo(series, startUs);
  for (let c = 0; c < columns; c++) {
    const after = bytesUpTo(series, startUs + (c + 1) * widthUs);
    out[c] = widthUs > 0 ? (after - before) / widthUs / 1e3 / series.divisor : 0;
    before = after;
  }
  return out;
}

export interface CounterCanvas {
  readonly ctx: CanvasRenderingContext2D;
  readonly dpr: number;
  readonly rowHeightPx: number;
}

/**
 * Draws a counter on the line whose top is at canvas y `topPx`: an area of its column averages over the visible
 * window, scaled to the highest of them, with that peak written at the line's left in GB/s.
 */
export function drawCounter(
  target: CounterCanvas,
  series: CounterSeries,
  topPx: number,
  window: { startUs: number; endUs: number; leftPx: number; widthPx: number },
  colours: { fill: string; text: string },
): void {
  const { ctx, dpr } = target;
  const columns = Math.max(1, Math.floor(window.widthPx));
  const values = columnAverages(series, window.startUs, window.endUs, columns);
  let peak = 0;
  for (const v of values) if (v > peak) peak = v;
  if (!(peak > 0)) return;
  const bottom = topPx + target.rowHeightPx - dpr;
  const height = target.rowHeightPx - 2 * dpr;
  ctx.fillStyle = colours.fill;
  ctx.beginPath();
  ctx.moveTo(window.leftPx, bottom);
  for (let c = 0; c < columns; c++) {
    const y = bottom - (values[c] / peak) * height;
    ctx.lineTo(window.leftPx + c, y);
    ctx.lineTo(window.leftPx + c + 1, y);
  }
  ctx.lineTo(window.leftPx + columns, bottom);
  ctx.closePath();
  ctx.fill();
  ctx.fillStyle = colours.text;
  ctx.fillText(t('peak {0} GB/s', peak.toFixed(1)), window.leftPx + 3 * dpr, topPx + target.rowHeightPx / 2);
}

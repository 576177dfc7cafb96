// Counter tracks, computed from the spans: the bytes in flight on each link and the bus bandwidth over time. A
// transfer of B bytes over [start, end] puts B / (end - start) bytes per µs on each of its links while it runs, so
// a counter is a step function whose integral over any window is the bytes that moved in it, and its average over
// a selected range is the range's busbw (range-stats.ts) to the last digit. A million spans take a second or more
// to count, so the panel runs traceCounterSteps in slices between frames (slices.ts) rather than in one task: every
// loop looks at the slice clock between groups of elements, and no step does work that grows with the trace.
import { UNSLICED, finish, type SliceClock, type Steps } from '../shared/slices';
import { t } from '../shared/strings';
import { counterInputSteps, type CounterSpans } from './counter-inputs';
import type { TimelineModel } from './model';
import { rateSeriesSteps, type CounterSeries } from './rate-series';

export { rateSeries, rateSeriesSteps, type CounterSeries } from './rate-series';

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

/** traceCounters as a computation that yields whenever `clock` is due. */
export function* traceCounterSteps(model: TimelineModel, clock: SliceClock = UNSLICED): Steps<CounterSeries[]> {
  const { rankCount, transfers, collectives, links } = yield* counterInputSteps(model, clock);
  if (transfers.bytes.length === 0 && collectives.bytes.length === 0) return [];
  const counters: CounterSeries[] = [];
  const add = function* (label: string, spans: CounterSpans, divisor: number): Steps<void> {
    counters.push(yield* rateSeriesSteps(label, spans.startUs, spans.endUs, spans.bytes, divisor, clock));
  };
  if (transfers.bytes.length > 0) yield* add(t('busbw per rank ({0} ranks)', rankCount), transfers, rankCount);
  if (collectives.bytes.length > 0) yield* add(t('algbw per rank ({0} ranks)', rankCount), collectives, rankCount);
  for (const { link, spans } of links) yield* add(link, spans, 1);
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
 * The first column from which `widthPx` columns in a row all keep their bars at or under `clearPx`: where a label
 * can sit beside the area without covering any of it. Undefined when the line has no such stretch.
 */
export function clearStretch(barsPx: ArrayLike<number>, widthPx: number, clearPx: number): number | undefined {
  const needed = Math.max(1, Math.ceil(widthPx));
  let run = 0;
  for (let c = 0; c < barsPx.length; c++) {
    run = barsPx[c] <= clearPx ? run + 1 : 0;
    if (run >= needed) return c - needed + 1;
  }
  return undefined;
}

/**
 * Draws a counter on the line whose top is at canvas y `topPx`: an area of its column averages over the visible
 * window, scaled to the highest of them, with that peak written in GB/s in the first stretch of the line whose bars
 * stay under the text. A line busy from end to end has no such stretch; its label then sits on a chip of the
 * background at the left, which hides the few columns under it rather than printing over them.
 */
export function drawCounter(
  target: CounterCanvas,
  series: CounterSeries,
  topPx: number,
  window: { startUs: number; endUs: number; leftPx: number; widthPx: number },
  colours: { fill: string; text: string; background: string },
): void {
  const { ctx, dpr } = target;
  const columns = Math.max(1, Math.floor(window.widthPx));
  const values = columnAverages(series, window.startUs, window.endUs, columns);
  let peak = 0;
  for (const v of values) if (v > peak) peak = v;
  if (!(peak > 0)) return;
  const bottom = topPx + target.rowHeightPx - dpr;
  const height = target.rowHeightPx - 2 * dpr;
  const barsPx = Array.from(values, (v) => (v / peak) * height);
  ctx.fillStyle = colours.fill;
  ctx.beginPath();
  ctx.moveTo(window.leftPx, bottom);
  for (let c = 0; c < columns; c++) {
    const y = bottom - barsPx[c];
    ctx.lineTo(window.leftPx + c, y);
    ctx.lineTo(window.leftPx + c + 1, y);
  }
  ctx.lineTo(window.leftPx + columns, bottom);
  ctx.closePath();
  ctx.fill();
  const label = t('peak {0} GB/s', peak.toFixed(1));
  const pad = 3 * dpr;
  const textWidth = ctx.measureText(label).width;
  // The text is centred on the line (overlays.ts sets a middle baseline); a bar is clear of it when its top stays
  // below the text's bottom.
  const fontPx = Number(/(\d+(?:\.\d+)?)px/.exec(ctx.font)?.[1] ?? 11 * dpr);
  const middle = topPx + target.rowHeightPx / 2;
  const clearPx = Math.max(0, bottom - (middle + fontPx / 2));
  const at = clearStretch(barsPx, textWidth + 2 * pad, clearPx);
  const x = window.leftPx + (at ?? 0) + pad;
  if (at === undefined) {
    ctx.fillStyle = colours.background;
    ctx.fillRect(x - pad, topPx, textWidth + 2 * pad, target.rowHeightPx);
  }
  ctx.fillStyle = colours.text;
  ctx.fillText(label, x, middle);
}

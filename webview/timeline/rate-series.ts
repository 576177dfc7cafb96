// A counter track's series: the step function of the bytes per µs of the spans running at each instant, and its
// integral. Computed as a generator that looks at the slice clock between groups of elements (slices.ts); the loops
// themselves are plain functions over a range of elements, called group by group, because V8 optimises a plain
// function's loop while it runs but a generator's only between resumptions, and an unoptimised loop boxes every
// number it computes (garbage whose collection stalls a loaded machine).
import { CLOCK_CHECK_ELEMENTS, UNSLICED, finish, type SliceClock, type Steps } from '../shared/slices';
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

interface Spans {
  readonly startUs: ArrayLike<number>;
  readonly endUs: ArrayLike<number>;
  readonly bytes: ArrayLike<number>;
}

/** Writes the rising and falling edge of spans [from, to) after the first `edges`; returns the edges written. */
function writeEdges(
  spans: Spans,
  times: Float64Array,
  deltas: Float64Array,
  edges: number,
  from: number,
  to: number,
): number {
  const { startUs, endUs, bytes } = spans;
  for (let i = from; i < to; i++) {
    const durationUs = endUs[i] - startUs[i];
    if (!(durationUs > 0) || !(bytes[i] > 0)) continue;
    const rate = bytes[i] / durationUs;
    // A span too short for its bytes to have a finite rate (a picosecond-free clock's rounding) cannot be drawn,
    // and one whose rate underflows to zero moves nothing a counter can show (its edges would not say open/close).
    if (!Number.isFinite(rate) || !(rate > 0)) continue;
    times[edges] = startUs[i];
    deltas[edges++] = rate;
    times[edges] = endUs[i];
    deltas[edges++] = -rate;
  }
  return edges;
}

/** The running level between groups of edges: a compensated sum, its compensation, and the spans open. */
interface Level {
  sum: number;
  compensation: number;
  open: number;
  /** Steps written so far. */
  steps: number;
}

/** Adds edges [from, to) in time order to the level, writing a step wherever the time moves on. */
function addEdges(
  edges: { readonly times: Float64Array; readonly deltas: Float64Array; readonly order: Uint32Array },
  level: Level,
  out: { readonly times: Float64Array; readonly values: Float64Array },
  from: number,
  to: number,
): void {
  const { times, deltas, order } = edges;
  let { sum, compensation, open, steps } = level;
  for (let k = from; k < to; k++) {
    const delta = deltas[order[k]];
    // The level is a compensated (Neumaier) sum: a small rate beside a large one that starts and ends around it
    // would otherwise lose its low digits when the large one is taken away.
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
    const value = sum + compensation;
    out.times[steps] = t;
    out.values[steps++] = value > 0 ? value : 0;
  }
  level.sum = sum;
  level.compensation = compensation;
  level.open = open;
  level.steps = steps;
}

/** Integrates steps [from, to) of a series into `cumulative` (cumulative[from - 1] is already written). */
function integrate(
  times: Float64Array,
  values: Float64Array,
  cumulative: Float64Array,
  from: number,
  to: number,
): void {
  for (let i = Math.max(1, from); i < to; i++)
    cumulative[i] = cumulative[i - 1] + values[i - 1] * (times[i] - times[i - 1]);
}

/** rateSeries as a computation that yields whenever `clock` is due. */
export function* rateSeriesSteps(
  label: string,
  startUs: ArrayLike<number>,
  endUs: ArrayLike<number>,
  bytes: ArrayLike<number>,
  divisor = 1,
  clock: SliceClock = UNSLICED,
): Steps<CounterSeries> {
  const n = startUs.length;
  const spans = { startUs, endUs, bytes };
  // Typed arrays sized for every span's two edges: a million spans make two million edges, and growing plain
  // arrays edge by edge cost as much as sorting them.
  const allTimes = new Float64Array(2 * n);
  const allDeltas = new Float64Array(2 * n);
  // Allocating tens of megabytes can start a garbage collection: the runner looks at the clock before going on.
  yield;
  let edges = 0;
  for (let from = 0; from < n; from += CLOCK_CHECK_ELEMENTS) {
    edges = writeEdges(spans, allTimes, allDeltas, edges, from, Math.min(n, from + CLOCK_CHECK_ELEMENTS));
    if (clock.due()) yield;
  }
  const times = allTimes.subarray(0, edges);
  const deltas = allDeltas.subarray(0, edges);
  const order = yield* sortIndicesByTimeSteps(times, clock);
  const out = { times: new Float64Array(edges), values: new Float64Array(edges) };
  yield;
  const level: Level = { sum: 0, compensation: 0, open: 0, steps: 0 };
  for (let from = 0; from < edges; from += CLOCK_CHECK_ELEMENTS) {
    addEdges({ times, deltas, order }, level, out, from, Math.min(edges, from + CLOCK_CHECK_ELEMENTS));
    if (clock.due()) yield;
  }
  // Views, not copies, and the edges' rates (all read by now) hold the integral: no more large arrays.
  const steps = level.steps;
  const timesUs = out.times.subarray(0, steps);
  const valuePerUs = out.values.subarray(0, steps);
  const cumulativeBytes = allDeltas.subarray(0, steps);
  if (steps > 0) cumulativeBytes[0] = 0;
  for (let from = 0; from < steps; from += CLOCK_CHECK_ELEMENTS) {
    integrate(timesUs, valuePerUs, cumulativeBytes, from, Math.min(steps, from + CLOCK_CHECK_ELEMENTS));
    if (clock.due()) yield;
  }
  return { label, timesUs, valuePerUs, cumulativeBytes, divisor };
}

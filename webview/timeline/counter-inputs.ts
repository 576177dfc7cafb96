// The spans each counter track is computed from, gathered from the rank rows of a timeline model. Two walks over
// the rows: the first counts the spans of each counter, the second copies them into typed arrays of exactly that
// size. Growing plain arrays span by span would copy the whole array each time it outgrew its capacity, one step
// whose cost grows with the trace (a few milliseconds at a million spans, more on a loaded machine); counting first
// leaves no such step, and only the links drawn as counters (the busiest MAX_LINK_COUNTERS) are copied at all.
import { PHASES, type Lane } from '../../src/engine/index';
import { CLOCK_CHECK_ELEMENTS, type SliceClock, type Steps } from '../shared/slices';
import type { TimelineModel } from './model';

/** Links drawn as counters at most, the busiest first: past that the counters group is longer than the lanes. */
export const MAX_LINK_COUNTERS = 32;

/** The spans of one counter, as columns in the order the rows hold them. */
export interface CounterSpans {
  readonly startUs: Float64Array;
  readonly endUs: Float64Array;
  readonly bytes: Float64Array;
}

export interface CounterInputs {
  /** Ranks with a row (busy or not), as range statistics count them; the metadata's count when no row names one. */
  readonly rankCount: number;
  /** Byte-carrying spans over links on the ranks' rows; every byte-carrying non-collective span for bare columns. */
  readonly transfers: CounterSpans;
  /** Collective operations' spans with their message bytes. */
  readonly collectives: CounterSpans;
  /** The busiest links (most bytes, then by name), at most MAX_LINK_COUNTERS, each with the transfers over it. */
  readonly links: readonly { readonly link: string; readonly spans: CounterSpans }[];
}

const speaksForRank = (lane: Lane): boolean => lane.kind === 'rank' || lane.kind === 'stream';
const COLLECTIVE = PHASES.indexOf('collective');

/**
 * Hands the rank rows' spans to `handle` in ranges of at most CLOCK_CHECK_ELEMENTS, looking at the clock after
 * each. The per-span loops are plain functions (countRange, fillRange): V8 optimises a plain function's loop while it
 * runs, a generator's only between resumptions.
 */
function* rankRowRanges(
  model: TimelineModel,
  clock: SliceClock,
  handle: (from: number, to: number) => void,
): Steps<void> {
  for (let r = 0; r < model.rows.length; r++) {
    if (!speaksForRank(model.rows[r])) continue;
    const last = model.rowOffsets[r + 1];
    for (let from = model.rowOffsets[r]; from < last; from += CLOCK_CHECK_ELEMENTS) {
      handle(from, Math.min(last, from + CLOCK_CHECK_ELEMENTS));
      if (clock.due()) yield;
    }
  }
}

/**
 * What a byte-carrying span of a rank row counts as: a collective's message (over the collective's span, what a
 * range's algbw counts), a transfer over the links it lists, or nothing when it names no link. Without span objects
 * (bare columns) every byte-carrying span that is not a collective is a transfer.
 */
function linksOf(model: TimelineModel, sorted: number): readonly string[] | undefined {
  const span = model.spanAt(sorted);
  if (!span) return NO_LINKS;
  return span.links.length > 0 ? span.links : undefined;
}
const NO_LINKS: readonly string[] = [];

interface Tally {
  transfers: number;
  collectives: number;
  readonly links: Map<string, { count: number; bytes: number }>;
}

function countRange(model: TimelineModel, tally: Tally, from: number, to: number): void {
  for (let k = from; k < to; k++) {
    const b = model.bytesAt(k);
    if (!(b > 0)) continue;
    if (model.phase[k] === COLLECTIVE) {
      tally.collectives++;
      continue;
    }
    const links = linksOf(model, k);
    if (!links) continue;
    tally.transfers++;
    for (const link of links) {
      const entry = tally.links.get(link);
      if (entry) {
        entry.count++;
        entry.bytes += b;
      } else tally.links.set(link, { count: 1, bytes: b });
    }
  }
}

interface Builders {
  readonly transfers: SpanColumnsBuilder;
  readonly collectives: SpanColumnsBuilder;
  readonly links: Map<string, SpanColumnsBuilder>;
}

function fillRange(model: TimelineModel, into: Builders, from: number, to: number): void {
  for (let k = from; k < to; k++) {
    const b = model.bytesAt(k);
    if (!(b > 0)) continue;
    if (model.phase[k] === COLLECTIVE) {
      into.collectives.add(model, k, b);
      continue;
    }
    const links = linksOf(model, k);
    if (!links) continue;
    into.transfers.add(model, k, b);
    for (const link of links) into.links.get(link)?.add(model, k, b);
  }
}

/** Columns for `count` spans and a cursor that fills them in order. */
class SpanColumnsBuilder {
  private filled = 0;
  readonly spans: CounterSpans;
  constructor(count: number) {
    this.spans = { startUs: new Float64Array(count), endUs: new Float64Array(count), bytes: new Float64Array(count) };
  }
  add(model: TimelineModel, sorted: number, bytes: number): void {
    this.spans.startUs[this.filled] = model.start[sorted];
    this.spans.endUs[this.filled] = model.end[sorted];
    this.spans.bytes[this.filled++] = bytes;
  }
}

/** The counters' spans of a model, as a computation that yields whenever `clock` is due. */
export function* counterInputSteps(model: TimelineModel, clock: SliceClock): Steps<CounterInputs> {
  const ranks = new Set<number>();
  for (const lane of model.rows) if (speaksForRank(lane) && lane.rank !== undefined) ranks.add(lane.rank);
  const rankCount = Math.max(1, ranks.size > 0 ? ranks.size : model.metadata.ranks);
  const tally: Tally = { transfers: 0, collectives: 0, links: new Map() };
  yield* rankRowRanges(model, clock, (from, to) => countRange(model, tally, from, to));
  const busiest = [...tally.links.entries()]
    .sort((a, b) => b[1].bytes - a[1].bytes || a[0].localeCompare(b[0]))
    .slice(0, MAX_LINK_COUNTERS);
  const builders: Builders = {
    transfers: new SpanColumnsBuilder(tally.transfers),
    collectives: new SpanColumnsBuilder(tally.collectives),
    links: new Map(busiest.map(([link, entry]) => [link, new SpanColumnsBuilder(entry.count)])),
  };
  // Allocating megabytes can start a garbage collection: the runner looks at the clock before the copy begins.
  yield;
  yield* rankRowRanges(model, clock, (from, to) => fillRange(model, builders, from, to));
  return {
    rankCount,
    transfers: builders.transfers.spans,
    collectives: builders.collectives.spans,
    links: busiest.map(([link]) => ({ link, spans: builders.links.get(link)!.spans })),
  };
}

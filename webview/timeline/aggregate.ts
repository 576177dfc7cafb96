// A flame-style aggregate of a selected range, as Perfetto's and Nsight's "slices in range" tables give it: per span
// name, the time its spans ran inside the range (total) and the part of it no span nested inside them covered
// (self), sorted by total. Self times of one lane add up to the time the lane was busy in the range, so the table
// says where the time went without counting a parent and its children twice.
import { PHASES, type Lane } from '../../src/engine/index';
import { CLOCK_CHECK_ELEMENTS, UNSLICED, finish, type SliceClock, type Steps } from '../shared/slices';
import type { TimelineModel } from './model';
import type { Track } from './tracks';

export interface NameAggregate {
  readonly name: string;
  /** Time the spans of this name ran inside the range, summed over them, µs. */
  readonly totalUs: number;
  /** The part of totalUs that no span nested one track deeper covered, µs. */
  readonly selfUs: number;
  /** Spans of this name that overlap the range. */
  readonly count: number;
}

/** The rows whose spans the aggregate counts: the ranks' rows (link rows repeat their transfers), or every row. */
export function countedRows(rows: readonly Lane[]): number[] {
  const ranks = rows.map((lane, r) => r).filter((r) => rows[r].kind === 'rank' || rows[r].kind === 'stream');
  return ranks.length > 0 ? ranks : rows.map((_, r) => r);
}

/** The nesting depth of row r: 0 for a lane's own row, n for its n-th track below. */
export function trackDepth(rows: readonly Lane[], r: number): number {
  return (rows[r] as Partial<Track>).depth ?? 0;
}

/** The row one track deeper in the same lane, or -1 (tracks of a lane are consecutive rows, depth by depth). */
function childRow(rows: readonly Lane[], r: number): number {
  const here = rows[r] as Partial<Track>;
  const next = rows[r + 1] as Partial<Track> | undefined;
  if (!next || here.laneId === undefined || next.laneId !== here.laneId) return -1;
  return (next.depth ?? 0) === (here.depth ?? 0) + 1 ? r + 1 : -1;
}

/**
 * The aggregate of [startUs, endUs] by span name (the span's name, or its phase when it has none), sorted by total
 * time, longest first.
 */
export function rangeAggregate(
  model: TimelineModel,
  startUs: number,
  endUs: number,
  nameOf: (sorted: number) => string = defaultName(model),
): NameAggregate[] {
  return finish(rangeAggregateSteps(model, startUs, endUs, UNSLICED, nameOf));
}

export const defaultName =
  (model: TimelineModel) =>
  (k: number): string =>
    model.spanAt(k)?.name ?? PHASES[model.phase[k]];

type ByName = Map<string, { totalUs: number; selfUs: number; count: number }>;

/** rangeAggregate as a computation that yields whenever `clock` is due, a group of spans at a time. */
export function* rangeAggregateSteps(
  model: TimelineModel,
  startUs: number,
  endUs: number,
  clock: SliceClock = UNSLICED,
  nameOf: (sorted: number) => string = defaultName(model),
): Steps<NameAggregate[]> {
  const byName: ByName = new Map();
  for (const r of countedRows(model.rows)) {
    const child = childRow(model.rows, r);
    const last = model.rowOffsets[r + 1];
    const range = { startUs, endUs, child, nameOf };
    for (let from = model.firstVisible(r, startUs); from < last; from += CLOCK_CHECK_ELEMENTS) {
      const more = addSpans(model, range, byName, from, Math.min(last, from + CLOCK_CHECK_ELEMENTS));
      if (clock.due()) yield;
      if (!more) break;
    }
  }
  return [...byName.entries()]
    .map(([name, e]) => ({ name, ...e }))
    .sort((a, b) => b.totalUs - a.totalUs || b.selfUs - a.selfUs || a.name.localeCompare(b.name));
}

/** Adds spans [from, to) of a row to the aggregate; false once a span starts at or after the range's end. */
function addSpans(
  model: TimelineModel,
  range: { startUs: number; endUs: number; child: number; nameOf: (sorted: number) => string },
  byName: ByName,
  from: number,
  to: number,
): boolean {
  const { startUs, endUs, child, nameOf } = range;
  for (let i = from; i < to; i++) {
    if (!(model.start[i] < endUs)) return false;
    const clipped = clippedTimes(model, child, i, startUs, endUs);
    if (!clipped) continue;
    const name = nameOf(i);
    let entry = byName.get(name);
    if (!entry) byName.set(name, (entry = { totalUs: 0, selfUs: 0, count: 0 }));
    entry.totalUs += clipped.totalUs;
    entry.selfUs += clipped.selfUs;
    entry.count++;
  }
  return true;
}

/**
 * The time span i (of row r) ran inside [startUs, endUs] and the part of it the track one deeper did not cover, or
 * undefined when the span is not in the range.
 */
export function clippedSpanUs(
  model: TimelineModel,
  r: number,
  i: number,
  startUs: number,
  endUs: number,
): { totalUs: number; selfUs: number } | undefined {
  return clippedTimes(model, childRow(model.rows, r), i, startUs, endUs);
}

function clippedTimes(
  model: TimelineModel,
  child: number,
  i: number,
  startUs: number,
  endUs: number,
): { totalUs: number; selfUs: number } | undefined {
  const { start, end } = model;
  const clippedFrom = Math.max(startUs, start[i]);
  const clippedTo = Math.min(endUs, end[i]);
  // A span that only touches the range is not in it; a zero-length one inside it is (with no time).
  if (!(start[i] < endUs) || end[i] < startUs || (clippedTo <= clippedFrom && start[i] !== end[i])) return undefined;
  const totalUs = Math.max(0, clippedTo - clippedFrom);
  const childrenUs = child >= 0 ? coveredUs(model, child, clippedFrom, clippedTo) : 0;
  return { totalUs, selfUs: Math.max(0, totalUs - childrenUs) };
}

/** Length of the union of row r's spans within [fromUs, toUs]. */
function coveredUs(model: TimelineModel, r: number, fromUs: number, toUs: number): number {
  const { start, end } = model;
  const last = model.rowOffsets[r + 1];
  let covered = 0;
  let reached = fromUs;
  for (let i = model.firstVisible(r, fromUs); i < last && start[i] < toUs; i++) {
    const a = Math.max(reached, start[i]);
    const b = Math.min(toUs, end[i]);
    if (b > a) {
      covered += b - a;
      reached = b;
    }
  }
  return covered;
}

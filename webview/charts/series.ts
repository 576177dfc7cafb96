// Pure transforms from the protocol's chart data to plotted points; no DOM, so they are unit-tested in Node.
import type { ChartConfiguration } from 'chart.js';
import { formatBytes, type SweepRow, asBytes } from '../../src/engine/index';
import type { ChartsData } from '../../src/protocol';
import { t } from '../shared/strings';

export interface SwitchPoint {
  /** The first size at which the new choice applies. */
  readonly bytes: number;
  /** e.g. "ring/LL128". */
  readonly label: string;
}

/** Sizes where the tuner's algorithm or protocol changes along a sweep (rows sorted by size). */
export function switchPoints(rows: readonly SweepRow[]): SwitchPoint[] {
  const sorted = [...rows].sort((a, b) => a.bytes - b.bytes);
  const points: SwitchPoint[] = [];
  for (let i = 1; i < sorted.length; i++) {
    const before = sorted[i - 1];
    const now = sorted[i];
    if (now.algorithm !== before.algorithm || now.protocol !== before.protocol)
      points.push({ bytes: now.bytes, label: `${now.algorithm}/${now.protocol}` });
  }
  return points;
}

/** Tick label for a byte axis: powers of two as sizes, everything else left blank to keep the axis readable. */
export function byteTick(value: number): string {
  return value > 0 && Number.isInteger(Math.log2(value)) ? formatBytes(asBytes(value)) : '';
}

/** The index of the bucket size with the lowest step time, or the one marked recommended. */
export function recommendedIndex(rows: readonly { stepTimeUs: number; recommended?: boolean }[]): number {
  const marked = rows.findIndex((r) => r.recommended);
  if (marked >= 0) return marked;
  let best = -1;
  rows.forEach((r, i) => {
    if (best < 0 || r.stepTimeUs < rows[best].stepTimeUs) best = i;
  });
  return best;
}

/** Keeps only finite, positive points, since a log axis cannot show zero and NaN would break the scale. */
export function plottable<T extends { x: number; y: number }>(points: readonly T[], logX = true): T[] {
  return points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y) && (!logX || p.x > 0));
}

/** Powers of two between min and max for a byte axis, thinned to at most `maxTicks` by stepping 2×, 4×, 16×... */
export function powerOfTwoTicks(min: number, max: number, maxTicks = 12): number[] {
  if (!(min > 0) || !(max >= min)) return [];
  const first = Math.ceil(Math.log2(min));
  const last = Math.floor(Math.log2(max));
  let stride = 1;
  while ((last - first) / stride + 1 > maxTicks) stride *= 2;
  const ticks: number[] = [];
  for (let e = first; e <= last; e += stride) ticks.push(2 ** e);
  return ticks;
}

/** The quantities plotted against message size: bus bandwidth, and time per call. */
export type SizeSeriesMetric = 'busbwGBps' | 'timeUs';

/** Measured series take their colours after the first three modelled ones, so a model and a run never share one. */
const MEASURED_COLOUR_OFFSET = 3;

/**
 * The datasets of a chart over message size: one line per modelled sweep, then one scatter of crosses per
 * measured run, each plotting `metric` against bytes. The busbw and time-per-call charts differ only in `metric`.
 */
export function sizeSeriesDatasets(
  data: Pick<ChartsData, 'sweeps' | 'measured'>,
  metric: SizeSeriesMetric,
  palette: readonly string[],
): ChartConfiguration<'line'>['data']['datasets'] {
  const colour = (i: number) => palette[i % palette.length];
  const modelled = (data.sweeps ?? []).map((series, i) => ({
    type: 'line' as const,
    label: series.label,
    borderColor: colour(i),
    backgroundColor: colour(i),
    pointRadius: 2,
    data: plottable(series.rows.map((r) => ({ x: r.bytes, y: r[metric] }))),
  }));
  const measured = (data.measured ?? []).map((series, i) => ({
    // A scatter inside a line chart: chart.js draws it with the line chart's axes when its type is cast so.
    type: 'scatter' as 'line',
    label: t('{0} (measured)', series.label),
    borderColor: colour(i + MEASURED_COLOUR_OFFSET),
    backgroundColor: colour(i + MEASURED_COLOUR_OFFSET),
    pointRadius: 5,
    borderWidth: 2,
    pointStyle: 'crossRot' as const,
    showLine: false,
    data: plottable(series.points.map((p) => ({ x: p.bytes, y: p[metric] }))),
  }));
  return [...modelled, ...measured];
}

// Pure transforms from the protocol's chart data to plotted points; no DOM, so they are unit-tested in Node.
import { formatBytes, type SweepRow, asBytes } from '../../src/engine/index';

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

// The one map between trace time (µs) and canvas pixels. Every drawing and hit test goes through it.

/** Below this width (1 ns) a view is clamped: doubles at trace timestamps cannot resolve finer steps reliably. */
export const MIN_VIEW_US = 1e-3;

export class TimeScale {
  constructor(
    /** Time at the left edge of the plot, µs. */
    readonly startUs: number,
    /** Time at the right edge of the plot, µs. */
    readonly endUs: number,
    /** Pixel x of the left edge. */
    readonly leftPx: number,
    /** Plot width in pixels. */
    readonly widthPx: number,
  ) {}

  get durationUs(): number {
    return this.endUs - this.startUs;
  }

  get pxPerUs(): number {
    return this.widthPx / this.durationUs;
  }

  /** Microseconds covered by one pixel column. */
  get usPerPx(): number {
    return this.durationUs / this.widthPx;
  }

  timeToPx(us: number): number {
    return this.leftPx + (us - this.startUs) * this.pxPerUs;
  }

  pxToTime(px: number): number {
    return this.startUs + (px - this.leftPx) * this.usPerPx;
  }

  /**
   * Tick positions at 1, 2 or 5 × 10^k µs after `originUs` (the trace's start, so labels read 0, 200 µs, 400 µs),
   * about every minSpacingPx pixels.
   */
  ticks(minSpacingPx = 90, originUs = 0): { stepUs: number; timesUs: number[] } {
    const raw = this.usPerPx * minSpacingPx;
    const power = 10 ** Math.floor(Math.log10(raw));
    const stepUs = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
    const timesUs: number[] = [];
    const first = Math.ceil((this.startUs - originUs) / stepUs);
    for (let k = first; originUs + k * stepUs <= this.endUs && timesUs.length < 1000; k++)
      timesUs.push(originUs + k * stepUs);
    return { stepUs, timesUs };
  }
}

/** A view window over a trace that pans and zooms within the trace's bounds. */
export interface ViewWindow {
  readonly startUs: number;
  readonly endUs: number;
}

/** Zooms a window by `factor` (< 1 zooms in) keeping `anchorUs` under the same pixel, clamped to the bounds. */
export function zoomWindow(view: ViewWindow, factor: number, anchorUs: number, bounds: ViewWindow): ViewWindow {
  const boundsUs = bounds.endUs - bounds.startUs;
  const duration = Math.min(boundsUs, Math.max(MIN_VIEW_US, (view.endUs - view.startUs) * factor));
  const ratio = (anchorUs - view.startUs) / (view.endUs - view.startUs || 1);
  return clampWindow({ startUs: anchorUs - ratio * duration, endUs: anchorUs - ratio * duration + duration }, bounds);
}

/** Moves a window by deltaUs, keeping its width and staying within the bounds. */
export function panWindow(view: ViewWindow, deltaUs: number, bounds: ViewWindow): ViewWindow {
  return clampWindow({ startUs: view.startUs + deltaUs, endUs: view.endUs + deltaUs }, bounds);
}

export function clampWindow(view: ViewWindow, bounds: ViewWindow): ViewWindow {
  const duration = Math.min(view.endUs - view.startUs, bounds.endUs - bounds.startUs);
  let startUs = Math.max(bounds.startUs, Math.min(view.startUs, bounds.endUs - duration));
  if (!Number.isFinite(startUs)) startUs = bounds.startUs;
  return { startUs, endUs: startUs + duration };
}

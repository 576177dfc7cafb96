// Corrupt events in imported traces are dropped and counted, never drawn: one event at an absurd time would
// otherwise become the trace's origin or end and squeeze every real span to nothing on the time axis.

/** About 11.6 days in µs: longer than any profiled run, so a time further than this from the rest is corrupt. */
export const MAX_PLAUSIBLE_SPREAD_US = 1e12;

export interface TimedEvent {
  readonly startUs: number;
  readonly durationUs: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/**
 * Keeps the events whose start lies within MAX_PLAUSIBLE_SPREAD_US of the median start and whose duration is
 * finite, not negative and at most that long. The median, not the minimum, anchors the window, so a minority of
 * corrupt events cannot move it.
 */
export function dropImplausible<T extends TimedEvent>(events: readonly T[]): { kept: T[]; dropped: number } {
  const finite = events.filter((e) => Number.isFinite(e.startUs) && Number.isFinite(e.durationUs));
  const center = median(finite.map((e) => e.startUs));
  const kept = finite.filter(
    (e) =>
      Math.abs(e.startUs - center) <= MAX_PLAUSIBLE_SPREAD_US &&
      e.durationUs >= 0 &&
      e.durationUs <= MAX_PLAUSIBLE_SPREAD_US,
  );
  return { kept, dropped: events.length - kept.length };
}

/** The warning an importer adds when it dropped events. */
export function droppedWarning(dropped: number, what: string): string {
  return `${dropped} ${what} dropped as corrupt (a time or duration that is not a finite number, negative, or more than ${(MAX_PLAUSIBLE_SPREAD_US / 86_400e6).toFixed(1)} days from the rest); the other spans keep their scale`;
}

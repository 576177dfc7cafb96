// What the timeline's search box finds: the spans a query matches, and the next match after a time.
import { PHASES } from '../../src/engine/index';
import type { TimelineModel } from './model';

/** Marks the spans whose lane, phase, name or source file contains `query` (already lower case), with their count. */
export function searchMask(model: TimelineModel, query: string): { mask: Uint8Array; count: number } {
  const rowMatches = model.rows.map((lane) => lane.label.toLowerCase().includes(query));
  const phaseMatches = PHASES.map((p) => p.includes(query));
  return model.matchMask((sorted, row) => {
    if (rowMatches[row] || phaseMatches[model.phase[sorted]]) return true;
    const span = model.spanAt(sorted);
    return (
      span !== undefined &&
      ((span.name?.toLowerCase().includes(query) ?? false) ||
        (span.source?.file.toLowerCase().includes(query) ?? false))
    );
  });
}

/** The sorted position of the earliest marked span that starts after `afterUs`; -1 when there is none. */
export function nextMatchAfter(model: TimelineModel, mask: Uint8Array, afterUs: number): number {
  let best = -1;
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] && model.start[i] > afterUs && (best < 0 || model.start[i] < model.start[best])) best = i;
  }
  return best;
}

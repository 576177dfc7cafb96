// The details of a selected range: its statistics (range-stats.ts), its aggregate by span name (aggregate.ts) and
// its flame graph (flame.ts, drawn by flame-view.ts).
// A range over a million spans takes a second or more to count, so it is counted in slices between frames
// (slices.ts), the pane saying so meanwhile: input is never held up behind it, and a newer range or trace drops
// the count of an older one at its next slice.
import { el } from '../shared/dom';
import { runInSlices, type SliceClock, type SliceReport, type Steps } from '../shared/slices';
import { t } from '../shared/strings';
import { log } from '../shared/vscode-api';
import { rangeAggregateSteps, type NameAggregate } from './aggregate';
import { renderAggregate, renderRangeStats } from './details';
import { rangeFlameSteps, type FlameNode } from './flame';
import { renderFlame, type FlameColours } from './flame-view';
import type { RangeStats, TimelineModel } from './model';

/** A selected range's statistics and aggregate, as the details pane shows them. */
export interface RangeDetails {
  readonly model: TimelineModel;
  readonly startUs: number;
  readonly endUs: number;
  readonly stats: RangeStats;
  readonly aggregate: NameAggregate[];
  readonly flame: FlameNode;
}

export function* rangeDetailSteps(
  model: TimelineModel,
  startUs: number,
  endUs: number,
  clock: SliceClock,
): Steps<RangeDetails> {
  const stats = yield* model.rangeStatsSteps(startUs, endUs, clock);
  const aggregate = yield* rangeAggregateSteps(model, startUs, endUs, clock);
  const flame = yield* rangeFlameSteps(model, startUs, endUs, clock);
  return { model, startUs, endUs, stats, aggregate, flame };
}

export class RangeCounter {
  /** How the last range count ran, once its details are shown; tests and the benchmark read it. */
  report: SliceReport | undefined;
  /** The last range counted: a click on a span redraws the details without counting the range again. */
  private counted: RangeDetails | undefined;
  /** Bumped for each count started or dropped: a count whose number is no longer current stops. */
  private job = 0;

  constructor(
    private readonly colours: () => FlameColours,
    /** Highlights the spans of a flame graph node clicked in the timeline (undefined: the root, clearing it). */
    private readonly highlight: (node: FlameNode | undefined) => void,
  ) {}

  /**
   * The sections of the range's details: at once when this range was counted last, else a line saying it is being
   * counted, which the details replace when the count ends (at once for a small range, whose count ends in its
   * first slice, before the page is drawn).
   */
  sections(model: TimelineModel, startUs: number, endUs: number): HTMLElement[] {
    const known = this.counted;
    if (known && known.model === model && known.startUs === startUs && known.endUs === endUs) return this.render(known);
    const job = ++this.job;
    this.report = undefined;
    const pending = el('section', { class: 'range-pending muted' }, t('Counting the selected range…'));
    void runInSlices((clock) => rangeDetailSteps(model, startUs, endUs, clock), {
      cancelled: () => job !== this.job,
      startNow: true,
    }).then(
      (done) => {
        if (!done || job !== this.job) return;
        this.counted = done.value;
        this.report = done.report;
        pending.replaceWith(...this.render(done.value));
      },
      (error: unknown) => log('error', `range statistics: ${error instanceof Error ? error.message : String(error)}`),
    );
    return [pending];
  }

  /** Stops a count in progress (the range was cleared). */
  drop(): void {
    this.job++;
  }

  private render(shown: RangeDetails): HTMLElement[] {
    const colours = this.colours();
    return [
      renderRangeStats(shown.stats, colours.phaseCss),
      renderFlame(shown.flame, colours, this.highlight),
      renderAggregate(shown.aggregate),
    ];
  }
}

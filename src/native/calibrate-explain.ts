// Judging a finished fit. Why a bounded fit misses a run: when the best fit inside the hardware's box is still beyond
// the model's own uncertainty, each bounded parameter is released in turn past its bound, and the parts whose release
// lowers the error most are named in one sentence for the user. Whether a fit that explains the run stands: it must
// be better where it was fitted and no worse elsewhere. calibrate.ts runs the search and hands its state here.
import type { ParamBound } from './calibrate-bounds';
import type { Search } from './calibrate-batch';
import {
  median,
  percent,
  partClause,
  relativeErrors,
  MODEL_UNCERTAINTY_LARGE,
  MODEL_UNCERTAINTY_SMALL,
  type Param,
  type Unexplained,
} from './calibrate-parts';
import { type CompareRow, medianRelativeError } from './compare';

const MiB = 1 << 20;
/** The written file keeps four significant digits, so a fit may look this much worse on unfitted sizes and still stand. */
const SMALL_SIZE_TOLERANCE = 1e-3;

/** The search's state the explanation reads: its parameters, their boxes in log scale and the loss it minimised. */
export interface FitState {
  readonly names: readonly Param[];
  readonly bounds: Readonly<Partial<Record<Param, ParamBound>>>;
  /** Parameters the measurement cannot pin down, which no explanation may blame. */
  readonly frozen: readonly boolean[];
  readonly lo: readonly number[];
  readonly hi: readonly number[];
  readonly base: Readonly<Partial<Record<Param, number>>>;
  /** The fitted log scales. */
  readonly x: number[];
  /** The mean absolute log error (plus the prior) of a point: the caller sets it to the mean, not the median. */
  readonly loss: (logScales: number[]) => Search<number>;
}

/** Undefined when the bounded fit is within the model's uncertainty on the fitted sizes; else how it misses and why. */
export function* explainMiss(judged: readonly CompareRow[], fit: FitState): Search<Unexplained | undefined> {
  const { names, bounds, frozen, lo, hi, base, x, loss } = fit;
  const fitErrorLarge = median(relativeErrors(judged.filter((r) => r.bytes >= MiB)));
  const fitErrorSmall = median(relativeErrors(judged.filter((r) => r.bytes < MiB)));
  if (!(fitErrorLarge > MODEL_UNCERTAINTY_LARGE) && !(fitErrorSmall > MODEL_UNCERTAINTY_SMALL)) return undefined;
  const slower = median(judged.map((r) => Math.log(r.measuredTimeUs / r.expectedTimeUs))) > 0;
  const reference = yield* loss(x);
  // Which bound holds the fit back: release one at a time, try it at values past its bound, and see how far the
  // error falls. A slower run is held by a bandwidth's floor; a faster one by a ceiling or a latency's floor. The
  // whole range is scanned, not walked, because NCCL's channel search makes times flat between its speed steps.
  const parts: Unexplained['parts'][number][] = [];
  for (const [i, name] of names.entries()) {
    const b = bounds[name];
    if (!b || frozen[i]) continue;
    const bandwidth = b.lineRateGBps !== undefined;
    const direction = slower ? (bandwidth ? -1 : 0) : bandwidth ? 1 : -1;
    if (direction === 0) continue;
    let at = x[i];
    let value = reference;
    for (let moves = 1; moves <= 16; moves++) {
      const trial = [...x];
      trial[i] = (direction < 0 ? lo[i] : hi[i]) + direction * moves * Math.log(1.2);
      const v = yield* loss(trial);
      if (v < value - 1e-12) {
        value = v;
        at = trial[i];
      }
    }
    if (at !== x[i])
      parts.push({
        name,
        part: b.part,
        wanted: base[name]! * Math.exp(at),
        bound: direction < 0 ? b.min : b.max,
        ...(bandwidth ? { lineRateGBps: b.lineRateGBps } : {}),
        gain: reference - value,
      });
  }
  parts.sort((a, b) => b.gain - a.gain);
  const misses = [
    Number.isNaN(fitErrorLarge) ? '' : `${percent(fitErrorLarge)} from 1 MiB`,
    Number.isNaN(fitErrorSmall) ? '' : `${percent(fitErrorSmall)} below`,
  ]
    .filter(Boolean)
    .join(', ');
  const which = slower ? 'slower than any healthy system of this kind' : 'faster than any system of this kind can be';
  const why =
    parts.length === 0
      ? 'no single part at its bound explains it, so the model itself may be what is wrong here'
      : `${partClause(parts[0])}${
          parts.length > 1
            ? `; or else ${parts
                .slice(1)
                .map((p) => `the ${p.part}`)
                .join(', ')}`
            : ''
        }`;
  const sentence = `The measured run is ${which} at these sizes (best bounded fit: median |time error| ${misses}, beyond the model's ${percent(MODEL_UNCERTAINTY_LARGE)} from 1 MiB and ${percent(MODEL_UNCERTAINTY_SMALL)} below): ${why}.`;
  return { sentence, slower, fitErrorLarge, fitErrorSmall, parts };
}

/** The rows and errors a fit is judged by, before and after. */
export interface FitJudgement {
  readonly fittedRows: readonly CompareRow[];
  readonly unfittedRows: readonly CompareRow[];
  readonly fitMinBytes: number;
  /** Median |time error| over every size, unfitted and fitted. */
  readonly before: number;
  readonly after: number;
  readonly unexplained: Unexplained | undefined;
}

/** Why the fit is thrown away (undefined when it stands), and the error below 1 MiB before and after when the run has such sizes. */
export function judgeFit(judged: FitJudgement): {
  rejected?: string;
  smallSizeError?: { before: number; after: number };
} {
  const { fittedRows, unfittedRows, fitMinBytes, before, after, unexplained } = judged;
  const smallError = (list: readonly CompareRow[]): number => medianRelativeError(list.filter((r) => r.bytes < MiB));
  const smallSizeError = unfittedRows.some((r) => r.bytes < MiB)
    ? { before: smallError(unfittedRows), after: smallError(fittedRows) }
    : undefined;
  // A run nothing explains keeps its best bounded fit, for --force to write; the acceptance rules below are for
  // fits that explain the run.
  if (unexplained) return { smallSizeError };
  // The search sees at most 24 rows; when what it found is no better on all the sizes it fits, the unfitted system
  // stands, and so it does when the whole sweep gets worse.
  const fitSized = (list: readonly CompareRow[]): CompareRow[] => list.filter((r) => r.bytes >= fitMinBytes);
  const fitBefore = medianRelativeError(fitSized(unfittedRows));
  if (medianRelativeError(fitSized(fittedRows)) >= fitBefore)
    return {
      smallSizeError,
      rejected: `no fit inside the hardware's bounds lowers the median error on the ${fitSized(unfittedRows).length} sizes fitted (${percent(fitBefore)})`,
    };
  if (after > before + SMALL_SIZE_TOLERANCE)
    return {
      smallSizeError,
      rejected: `the fit raises the median error over all sizes from ${percent(before)} to ${percent(after)}`,
    };
  // A fit of the large sizes must not buy its error there with the small ones.
  if (smallSizeError && smallSizeError.after > smallSizeError.before + SMALL_SIZE_TOLERANCE)
    return {
      smallSizeError,
      rejected: `the fit raises the median error below 1 MiB from ${percent(smallSizeError.before)} to ${percent(smallSizeError.after)}`,
    };
  return { smallSizeError };
}

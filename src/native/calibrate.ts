// Fits a system's bandwidths and latencies to a measurement: coordinate descent on the log of each override's
// scale, minimising the mean absolute log error of predicted vs measured times (robust to the odd noisy size).
// Each size's algorithm and protocol are held while fitting (one schedule per size, not NCCL's whole search) and
// re-picked between rounds; the fitted system is judged with normal selection, as `sweep` will run it.
// Every fitted value stays inside the hardware's box (calibrate-bounds.ts): a run no value in it explains is
// reported as such, naming the part that would have to be slower, instead of being fitted with invented hardware.
// The search yields its simulations in batches (calibrate-batch.ts), so the CLI can run each batch's independent
// rows on worker threads; calibrateSystem runs them here.
import {
  type Algorithm,
  type Protocol,
  type System,
  type SystemOverrides,
  type SystemSpec,
  asBytes,
} from '../engine/index';
import { boundFor, type ParamBound } from './calibrate-bounds';
import { runSearchHere, type Search } from './calibrate-batch';
import { explainMiss, judgeFit } from './calibrate-explain';
import { fittableParameters, spread, type CalibrationResult, type Param } from './calibrate-parts';
import { compareMeasurement, medianRelativeError } from './compare';
import {
  CompareError,
  achieved,
  asResolved,
  collectiveKindOf,
  dtypeOf,
  forcedAlgorithm,
  usableRows,
  withMeasuredNccl,
} from './compare-inputs';
import type { Measurement } from './import/model';

export {
  partClause,
  MODEL_UNCERTAINTY_LARGE,
  MODEL_UNCERTAINTY_SMALL,
  type CalibrationResult,
  type Unexplained,
} from './calibrate-parts';

/** Error (a fraction) one unit of log scale must buy before a parameter moves: 1 % of error for a factor of 2.7. */
const PRIOR_WEIGHT = 0.01;

/** Below this change of any row's time when a parameter is divided or multiplied by 4, the measurement cannot pin it down. */
const IDENTIFIABLE_CHANGE = 0.05;

export interface CalibrateOptions {
  maxRows?: number;
  minBytes?: number;
  /** Called as each round of the search starts (`done` of `total` rounds), for a progress line. */
  onProgress?: (done: number, total: number, label: string) => void;
}

export function calibrateSystem(
  measurement: Measurement,
  given: SystemSpec,
  options: CalibrateOptions = {},
): CalibrationResult {
  return runSearchHere(calibrationSearch(measurement, given, options));
}

/**
 * The fit as a generator: it yields each batch of independent simulations it needs (the rows of one evaluation,
 * or NCCL's choice for every row) and resumes with their outcomes. Whoever answers, the result is the same.
 */
export function* calibrationSearch(
  measurement: Measurement,
  given: SystemSpec,
  options: CalibrateOptions = {},
): Search<CalibrationResult> {
  const kind = collectiveKindOf(measurement);
  // The fit, and the file it writes, keep the NCCL release the measurement ran, as compare judges it.
  const start = withMeasuredNccl(asResolved(given), measurement);
  const spec = start.spec;
  const before = medianRelativeError(compareMeasurement(measurement, start).rows);
  const forced = forcedAlgorithm(measurement);
  const fitMinBytes = options.minBytes ?? 0;
  const rows = spread(
    usableRows(measurement).filter((r) => r.bytes >= fitMinBytes),
    options.maxRows ?? 24,
  );
  if (rows.length === 0) throw new CompareError(`the measurement has no size of at least ${fitMinBytes} bytes to fit`);
  /** NCCL's choice for every fitted row on a system; a spec that resolves to none throws, as resolving it here would. */
  const choose = function* (spec: SystemSpec, system?: System): Search<{ algorithm: Algorithm; protocol: Protocol }[]> {
    const requests = rows.map((row) => ({
      kind,
      bytes: asBytes(row.bytes),
      dtype: dtypeOf(row),
      ...(forced ? { algorithm: forced } : {}),
    }));
    const outcomes = yield { spec, ...(system ? { system } : {}), requests };
    // Undefined only when the spec resolves to no system: resolving it here throws the error that says why.
    if (!outcomes) {
      asResolved(spec);
      throw new Error('a system that resolved on one thread did not on another');
    }
    return outcomes.map((r) => ({ algorithm: r.algorithm, protocol: r.protocol }));
  };
  let choices = yield* choose(start.spec, start);
  const base = fittableParameters(start);
  const names = Object.keys(base) as Param[];
  const bounds: Partial<Record<Param, ParamBound>> = {};
  for (const name of names) {
    const b = boundFor(start, name);
    if (b) bounds[name] = b;
  }
  // The search box in log scale: the hardware's bounds where there are some, a factor of 200 either way always.
  const box = Math.log(200);
  const lo = names.map((name) => Math.max(-box, bounds[name] ? Math.log(bounds[name]!.min / base[name]!) : -box));
  const hi = names.map((name) => Math.min(box, bounds[name] ? Math.log(bounds[name]!.max / base[name]!) : box));
  const clamp = (i: number, v: number): number => Math.max(lo[i], Math.min(hi[i], v));
  let evaluations = 0;
  // Only moved parameters become overrides, so the starting point is exactly the unfitted system even where a
  // value read back from the topology (a link latency) is not quite the knob that produced it.
  const specFor = (logScales: number[]): SystemSpec => {
    const overrides: Record<string, number> = { ...(spec.overrides ?? {}) };
    names.forEach((name, i) => {
      if (logScales[i] !== 0 || spec.overrides?.[name] !== undefined)
        overrides[name] = base[name]! * Math.exp(logScales[i]);
    });
    return Object.keys(overrides).length > 0 ? { ...spec, overrides: overrides as SystemOverrides } : { ...spec };
  };
  /** Log errors of every fitted row, or undefined when the overrides make an impossible system. */
  const logErrors = function* (logScales: number[]): Search<number[] | undefined> {
    evaluations++;
    const requests = rows.map((row, i) => ({ kind, bytes: asBytes(row.bytes), dtype: dtypeOf(row), ...choices[i] }));
    const outcomes = yield { spec: specFor(logScales), requests };
    return outcomes?.map((outcome, i) => Math.log(outcome.timeUs / achieved(rows[i]).timeUs));
  };
  // The mean absolute log error steers the search; the last rounds polish the median itself, the figure of merit.
  let polish = false;
  // A small cost for every move away from the system as described keeps parameters the fitted sizes hardly feel
  // where the hardware put them: three 1 GiB rows otherwise drift NVLink to its ceiling and PCIe to its floor for a
  // 0.1 % gain, and the smaller sizes, which do feel them, pay for it.
  const prior = (logScales: number[]): number => PRIOR_WEIGHT * logScales.reduce((sum, v) => sum + Math.abs(v), 0);
  const loss = function* (logScales: number[]): Search<number> {
    const errors = yield* logErrors(logScales);
    if (!errors) return Infinity;
    if (!polish) return errors.reduce((sum, e) => sum + Math.abs(e), 0) / errors.length + prior(logScales);
    const sorted = errors.map((e) => Math.abs(Math.exp(e) - 1)).sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return (sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2) + prior(logScales);
  };
  // A system file may start outside the box (an override above line rate): the fit starts at the nearest bound.
  const x = names.map((_, i) => clamp(i, 0));
  let pickedAt = x.join();
  let best = yield* loss(x);
  // A parameter the measured sizes barely depend on would only soak up what others explain (1 GiB rows "fitted"
  // with a millisecond launch cost), so it keeps its value.
  const startErrors = (yield* logErrors(x)) ?? [];
  const frozen: boolean[] = [];
  for (let i = 0; i < names.length; i++) {
    let still = true;
    // Both directions, stopping at the first that moves a row, as `every` does.
    for (const d of [Math.log(4), -Math.log(4)]) {
      const moved = yield* logErrors(x.map((v, j) => (j === i ? d : v)));
      still =
        moved !== undefined && moved.every((e, r) => Math.abs(Math.exp(e - startErrors[r]) - 1) < IDENTIFIABLE_CHANGE);
      if (!still) break;
    }
    frozen.push(still);
  }
  const steps = [
    Math.log(2),
    Math.log(1.3),
    Math.log(1.1),
    Math.log(1.03),
    Math.log(1.01),
    Math.log(1.03),
    Math.log(1.01),
  ];
  const descend = function* (step: number): Search<void> {
    for (let pass = 0; pass < 2; pass++) {
      let improved = false;
      for (let i = 0; i < names.length; i++) {
        if (frozen[i]) continue;
        for (const direction of [1, -1]) {
          // Keep walking while it helps, so a parameter far from its value gets there in one pass.
          for (let moves = 0; moves < 6; moves++) {
            const trial = [...x];
            trial[i] = clamp(i, x[i] + direction * step);
            if (trial[i] === x[i]) break;
            const value = yield* loss(trial);
            if (!(value < best - 1e-12)) break;
            best = value;
            x[i] = trial[i];
            improved = true;
          }
        }
      }
      if (!improved) break;
    }
  };
  /** NCCL re-picks algorithms as the hardware changes, so the fit does too; true when a choice changed. */
  const repick = function* (): Search<boolean> {
    // Re-picking is NCCL's whole search per size, the slow part on multi-node systems: only when x moved.
    if (x.join() === pickedAt) return false;
    const again = yield* choose(specFor(x));
    pickedAt = x.join();
    const changed = again.some((c, i) => c.algorithm !== choices[i].algorithm || c.protocol !== choices[i].protocol);
    choices = again;
    return changed;
  };
  /**
   * The coarse start moves one parameter at a time, always the one whose best move helps most. Several parameters
   * can explain the same slow rows (a slow NIC or slow NVLink both cap NVLSTree); walking them in a fixed order
   * would hand the explanation to whichever comes first, where this hands it to the one that fits best.
   */
  const steepestFirst = function* (step: number): Search<void> {
    for (let moved = 0; moved < 3 * names.length; moved++) {
      let chosen: { i: number; to: number; value: number } | undefined;
      for (let i = 0; i < names.length; i++) {
        if (frozen[i]) continue;
        for (const direction of [1, -1]) {
          let at = x[i];
          let value = best;
          for (let moves = 0; moves < 6; moves++) {
            const trial = [...x];
            trial[i] = clamp(i, at + direction * step);
            if (trial[i] === at) break;
            const v = yield* loss(trial);
            if (!(v < value - 1e-12)) break;
            value = v;
            at = trial[i];
          }
          if (at !== x[i] && (!chosen || value < chosen.value)) chosen = { i, to: at, value };
        }
      }
      if (!chosen) break;
      x[chosen.i] = chosen.to;
      best = chosen.value;
    }
  };
  // The rounds, the settling and the judging after them: settling and judging count as one last step.
  const rounds = steps.length + 1;
  for (const [round, step] of steps.entries()) {
    options.onProgress?.(round, rounds, `step ×${Math.exp(step).toFixed(2)}`);
    if (round > 0) {
      yield* repick();
      polish = round >= 5;
      best = yield* loss(x);
    }
    if (round === 0) yield* steepestFirst(step);
    yield* descend(step);
  }
  // The last rounds may move the system across one of NCCL's switch points: polish again under the new choices
  // until they hold, so the fitted file is judged by the algorithms it will really run.
  options.onProgress?.(steps.length, rounds, 'settling and judging');
  for (let settle = 0; settle < 3 && (yield* repick()); settle++) {
    best = yield* loss(x);
    yield* descend(Math.log(1.03));
    yield* descend(Math.log(1.01));
  }
  let fitted = specFor(x);
  const fittedRows = compareMeasurement(measurement, fitted).rows;
  let after = medianRelativeError(fittedRows);
  // The mean log error weighs every fitted size, where the median would credit a part with half of them.
  polish = false;
  const unexplained = yield* explainMiss(
    fittedRows.filter((r) => r.bytes >= fitMinBytes),
    {
      names,
      bounds,
      frozen,
      lo,
      hi,
      base,
      x,
      loss,
    },
  );
  const unfittedRows = compareMeasurement(measurement, start).rows;
  const { rejected, smallSizeError } = judgeFit({ fittedRows, unfittedRows, fitMinBytes, before, after, unexplained });
  if (rejected) {
    x.fill(0);
    fitted = specFor(x);
    after = before;
  }
  const parameters: Partial<Record<Param, { from: number; to: number }>> = {};
  names.forEach((name, i) => {
    if (x[i] !== 0) parameters[name] = { from: base[name]!, to: base[name]! * Math.exp(x[i]) };
  });
  const rounded = Object.fromEntries(
    Object.entries(fitted.overrides ?? {}).map(([k, v]) => [k, Number((v as number).toPrecision(4))]),
  );
  return {
    system: {
      ...fitted,
      name: `${spec.name ?? start.label} (calibrated)`,
      ...(Object.keys(rounded).length > 0 ? { overrides: rounded as SystemOverrides } : {}),
    },
    medianErrorBefore: before,
    medianErrorAfter: after,
    parameters,
    unidentified: names.filter((_, i) => frozen[i]),
    evaluations,
    bounds,
    fitMinBytes,
    ...(smallSizeError
      ? { smallSizeError: rejected ? { before: smallSizeError.before, after: smallSizeError.before } : smallSizeError }
      : {}),
    ...(rejected ? { rejected } : {}),
    ...(unexplained ? { unexplained } : {}),
  };
}

// The gradient-scaling check as `profile` runs it: the engine's small data-parallel SGD with the config's reduce
// op, gradient dtype and learning-rate rule, summarised for the table and the JSON.
import { runScalingCheck, worldSizeOf, type ScalingCheckResult, type TrainingRun } from '../engine/index';

/** Simulated ranks are capped here: the check's cost grows with the rank count, and its verdict does not. */
export const SCALING_CHECK_MAX_RANKS = 64;

export interface ProfileScalingCheck {
  readonly result: ScalingCheckResult;
  readonly worldSize: number;
  /**
   * The multiplier at the real world size when the check ran on fewer ranks: a correct mean keeps the intended
   * multiplier, a bare sum scales it by the world size. Undefined when the measured excess fits neither.
   */
  readonly lrMultiplierAtWorldSize?: number;
}

function intended(rule: TrainingRun['training']['lrRule'], ranks: number): number {
  return rule === 'linear' ? ranks : rule === 'sqrt' ? Math.sqrt(ranks) : 1;
}

export function profileScalingCheck(run: TrainingRun): ProfileScalingCheck {
  const worldSize = worldSizeOf(run.system);
  const ranks = Math.max(1, Math.min(worldSize, SCALING_CHECK_MAX_RANKS));
  const t = run.training;
  const result = runScalingCheck({
    ranks,
    reduceOp: t.reduceOp,
    lrRule: t.lrRule,
    dtype: t.gradDtype,
    baseLr: t.baseLr,
  });
  let lrMultiplierAtWorldSize: number | undefined = result.lrMultiplier;
  if (ranks < worldSize) {
    const excess = result.excessMultiplier;
    if (Math.abs(excess - 1) <= 0.02) lrMultiplierAtWorldSize = intended(t.lrRule, worldSize);
    else if (Math.abs(excess - ranks) / ranks <= 0.02)
      lrMultiplierAtWorldSize = worldSize * intended(t.lrRule, worldSize);
    else lrMultiplierAtWorldSize = undefined;
  }
  return { result, worldSize, lrMultiplierAtWorldSize };
}

const round = (x: number, digits = 3): number => (Number.isFinite(x) ? Number(x.toPrecision(digits + 2)) : x);

export function scalingCheckJson(check: ProfileScalingCheck): Record<string, unknown> {
  const r = check.result;
  return {
    lrMultiplier: round(r.lrMultiplier),
    intendedMultiplier: round(r.intendedMultiplier),
    excessMultiplier: round(r.excessMultiplier),
    lrMultiplierAtWorldSize: check.lrMultiplierAtWorldSize !== undefined ? round(check.lrMultiplierAtWorldSize) : null,
    simulatedRanks: r.ranks,
    worldSize: check.worldSize,
    reduceOp: r.reduceOp,
    lrRule: r.lrRule,
    dtype: r.dtype,
    baseLr: r.baseLr,
    matchesReference: r.matchesReference,
    diverged: r.diverged,
    referenceDiverged: r.referenceDiverged,
    maxLossGap: Number.isFinite(r.maxLossGap) ? round(r.maxLossGap) : null,
    // JSON has no Infinity: a loss past the largest double is written as null.
    lossCurve: {
      dataParallel: r.lossCurve.dataParallel.map((l) => (Number.isFinite(l) ? l : null)),
      reference: r.lossCurve.reference.map((l) => (Number.isFinite(l) ? l : null)),
    },
    fp16Overflow: r.fp16Overflow,
    overflowedDuringTraining: r.overflowedDuringTraining,
  };
}

export function scalingCheckText(check: ProfileScalingCheck): string {
  const r = check.result;
  const fmt = (x: number): string => (Number.isFinite(x) ? (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2)) : '∞');
  const verdict = r.matchesReference
    ? 'matches the large-batch reference'
    : Math.abs(r.excessMultiplier - 1) > 0.01
      ? `the learning rate is effectively ${fmt(r.excessMultiplier)}× what the rule intends`
      : 'departs from the reference by more than rounding explains';
  const ranksWords =
    r.ranks < check.worldSize ? `${r.ranks} simulated ranks (of ${check.worldSize})` : `${r.ranks} simulated ranks`;
  const lines = [
    '',
    `gradient-scaling check (${ranksWords}, ${r.reduceOp} in ${r.dtype}, ${r.lrRule} learning rate, linear least squares):`,
    `  effective LR multiplier ${fmt(r.lrMultiplier)}× (the rule intends ${fmt(r.intendedMultiplier)}×): ${verdict}`,
  ];
  if (r.ranks < check.worldSize) {
    lines.push(
      `  at ${check.worldSize} ranks: ${check.lrMultiplierAtWorldSize !== undefined ? `${fmt(check.lrMultiplierAtWorldSize)}× (extrapolated)` : 'cannot be extrapolated'}`,
    );
  }
  const dp = r.lossCurve.dataParallel;
  const ref = r.lossCurve.reference;
  lines.push(
    `  loss over ${r.steps} steps: data-parallel ${fmt(dp[0])} → ${fmt(dp[dp.length - 1])}${r.diverged ? ' (diverges)' : ''}, reference ${fmt(ref[0])} → ${fmt(ref[ref.length - 1])}${r.referenceDiverged ? ' (diverges: the LR is too large even for the reference)' : ''}`,
  );
  const o = r.fp16Overflow;
  lines.push(
    `  fp16: a sum before division reaches ${fmt(o.maxSummedMagnitude)} (fp16 max 65504): ${o.wouldOverflow ? 'overflows' : 'no overflow'}${o.configuredOpOverflows ? '; the configured op overflows too' : ''}`,
  );
  return lines.join('\n');
}

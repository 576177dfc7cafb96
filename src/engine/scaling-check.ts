// The gradient-scaling check: N simulated ranks train a small linear least-squares model with data-parallel SGD,
// reducing their gradients with the configured op in the configured dtype (through the numeric AllReduce), and the
// run is compared with the single-process large-batch run it is meant to reproduce. The effective learning-rate
// multiplier is measured from the updates actually applied, never assumed from the op's name.
import type { Algorithm, Dtype, ReduceOp } from './collective-types';
import { FORMATS, roundToDtype } from './numeric/formats';
import { NumericOptionError } from './numeric/plan';
import { reduceNumerically } from './numeric/reduce';
import { gradient, loss, makeProblem, rankGradient, type LeastSquaresProblem } from './scaling/problem';

/**
 * How the ranks combine gradients. `sum`: a bare all_reduce SUM. `avg`: NCCL's ncclAvg (ReduceOp.AVG).
 * `sum-then-divide`: SUM, then grad /= divisor (the world size unless `divisor` says otherwise). `premul-sum`:
 * each rank divides by N before a SUM (pre-divide). `avg-then-divide`: averaged twice (AVG, or DDP, then /= N).
 */
export type ScalingReduceOp = 'sum' | 'avg' | 'sum-then-divide' | 'premul-sum' | 'avg-then-divide';
export const SCALING_REDUCE_OPS: readonly ScalingReduceOp[] = [
  'sum',
  'avg',
  'sum-then-divide',
  'premul-sum',
  'avg-then-divide',
];

/**
 * `fixed`: the configured LR as is. `linear-scaled`: LR × N, the linear scaling rule for an N× larger batch.
 * `sqrt-scaled`: LR × √N. The training model's names (constant, linear, sqrt) are accepted as aliases.
 */
export type ScalingLrRule = 'fixed' | 'linear-scaled' | 'sqrt-scaled' | 'constant' | 'linear' | 'sqrt';

const LR_RULE_ALIASES: Readonly<Record<ScalingLrRule, 'fixed' | 'linear-scaled' | 'sqrt-scaled'>> = {
  fixed: 'fixed',
  constant: 'fixed',
  'linear-scaled': 'linear-scaled',
  linear: 'linear-scaled',
  'sqrt-scaled': 'sqrt-scaled',
  sqrt: 'sqrt-scaled',
};

/** The engine's collective op names are accepted too: premulsum is the pre-divided sum. */
const REDUCE_OP_ALIASES: Readonly<Record<string, ScalingReduceOp>> = { premulsum: 'premul-sum' };

export interface ScalingCheckOptions {
  readonly ranks: number;
  readonly reduceOp: ScalingReduceOp | 'premulsum';
  readonly lrRule: ScalingLrRule;
  readonly baseLr?: number;
  readonly steps?: number;
  /** The dtype gradients are reduced in. */
  readonly dtype?: Dtype;
  /** Largest per-element gradient on one rank in the user's model (after any loss scaling), for the fp16 check. */
  readonly gradientMagnitude?: number;
  readonly seed?: number;
  /** Divisor of `sum-then-divide` (default: ranks); a wrong one models dividing by the local GPU count. */
  readonly divisor?: number;
  readonly algorithm?: Algorithm;
}

export interface ScalingCheckResult {
  readonly ranks: number;
  readonly reduceOp: ScalingReduceOp;
  readonly lrRule: 'fixed' | 'linear-scaled' | 'sqrt-scaled';
  readonly dtype: Dtype;
  readonly baseLr: number;
  readonly steps: number;
  /** Applied update ÷ (base LR × large-batch gradient), median over steps: N for a bare sum, 1 for a mean. */
  readonly lrMultiplier: number;
  /** What the LR rule intends: 1 for `fixed`, N for `linear-scaled`, √N for `sqrt-scaled`. */
  readonly intendedMultiplier: number;
  /** lrMultiplier ÷ intendedMultiplier: 1 when the reduction is a correct mean. */
  readonly excessMultiplier: number;
  /** Loss per step on the global batch (steps + 1 values; Infinity once the weights are no longer finite). */
  readonly lossCurve: { readonly dataParallel: number[]; readonly reference: number[] };
  /** Largest |L_dp − L_ref| / L_ref over the steps. */
  readonly maxLossGap: number;
  /** The data-parallel loss ends above where it started, or the weights stopped being finite. */
  readonly diverged: boolean;
  /** The large-batch reference diverges too: the LR the rule intends is itself too large for this problem. */
  readonly referenceDiverged: boolean;
  readonly matchesReference: boolean;
  readonly fp16Overflow: {
    /** Would an fp16 all_reduce SUM (before any division) overflow at this world size and gradient magnitude? */
    readonly wouldOverflow: boolean;
    readonly maxSummedMagnitude: number;
    readonly gradientMagnitude: number;
    /** Does the configured op itself overflow in fp16? (ncclAvg pre-multiplies, so it does not.) */
    readonly configuredOpOverflows: boolean;
  };
  /** Whether the reduction overflowed the dtype during the simulated training itself. */
  readonly overflowedDuringTraining: boolean;
}

const FEATURES = 8;
const SAMPLES_PER_RANK = 32;

/** How far the loss curves may drift apart from rounding alone, per reduction dtype (weights stay fp32). */
const LOSS_TOLERANCE: Readonly<Record<Dtype, number>> = {
  fp32: 1e-3,
  fp16: 2e-2,
  bf16: 5e-2,
  fp8e4m3: 0.5,
  fp8e5m2: 0.5,
};

interface Reduction {
  readonly values: Float64Array;
  readonly overflowed: boolean;
}

/** Reduces the per-rank gradients the way `reduceOp` does, in `dtype`, through the numeric AllReduce. */
function reduceGradients(
  grads: Float64Array[],
  options: Required<Pick<ScalingCheckOptions, 'reduceOp' | 'dtype' | 'algorithm'>> & { divisor: number },
): Reduction {
  const ranks = grads.length;
  const ncclOp: ReduceOp =
    options.reduceOp === 'sum' || options.reduceOp === 'sum-then-divide'
      ? 'sum'
      : options.reduceOp === 'premul-sum'
        ? 'premulsum'
        : 'avg';
  const result = reduceNumerically({
    algorithm: options.algorithm,
    ranks,
    dtype: options.dtype,
    op: ncclOp,
    data: grads,
    scalar: 1 / ranks,
  });
  const values = Float64Array.from(result.outputs[0]);
  const postDivisor =
    options.reduceOp === 'sum-then-divide' ? options.divisor : options.reduceOp === 'avg-then-divide' ? ranks : 1;
  if (postDivisor !== 1)
    for (let j = 0; j < values.length; j++) values[j] = roundToDtype(values[j] / postDivisor, options.dtype);
  return { values, overflowed: result.overflow !== null };
}

function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function validate(options: ScalingCheckOptions): void {
  const { ranks, steps, baseLr, divisor, gradientMagnitude } = options;
  if (!Number.isInteger(ranks) || ranks < 1)
    throw new NumericOptionError(`ranks must be a positive integer, got ${ranks}`);
  if (steps !== undefined && (!Number.isInteger(steps) || steps < 1 || steps > 10_000))
    throw new NumericOptionError(`steps must be an integer in 1..10000, got ${steps}`);
  if (baseLr !== undefined && !(baseLr > 0 && Number.isFinite(baseLr)))
    throw new NumericOptionError(`baseLr must be a positive number, got ${baseLr}`);
  if (divisor !== undefined && !(divisor > 0 && Number.isFinite(divisor)))
    throw new NumericOptionError(`divisor must be a positive number, got ${divisor}`);
  if (gradientMagnitude !== undefined && !(gradientMagnitude >= 0 && Number.isFinite(gradientMagnitude)))
    throw new NumericOptionError(`gradientMagnitude must be a number ≥ 0, got ${gradientMagnitude}`);
  if (!SCALING_REDUCE_OPS.includes(REDUCE_OP_ALIASES[options.reduceOp] ?? options.reduceOp))
    throw new NumericOptionError(
      `unknown reduceOp '${String(options.reduceOp)}' (expected ${SCALING_REDUCE_OPS.join(', ')})`,
    );
  if (!(options.lrRule in LR_RULE_ALIASES))
    throw new NumericOptionError(
      `unknown lrRule '${String(options.lrRule)}' (expected ${Object.keys(LR_RULE_ALIASES).join(', ')})`,
    );
}

/** Scales the step-0 per-rank gradients to the user's magnitude and sums them in fp16, before any division. */
function fp16Check(
  problem: LeastSquaresProblem,
  reduceOp: ScalingReduceOp,
  gradientMagnitude: number | undefined,
  divisor: number,
): ScalingCheckResult['fp16Overflow'] {
  const start = new Float64Array(problem.features);
  const grads = Array.from({ length: problem.ranks }, (_, r) => rankGradient(problem, start, r));
  const largest = Math.max(...grads.map((g) => Math.max(...g.map(Math.abs))));
  const magnitude = gradientMagnitude ?? largest;
  const scale = largest > 0 ? magnitude / largest : 0;
  const scaled = grads.map((g) => g.map((x) => x * scale));
  const summed = reduceNumerically({ algorithm: 'ring', ranks: problem.ranks, dtype: 'fp16', op: 'sum', data: scaled });
  const configured = reduceGradients(scaled, { reduceOp, dtype: 'fp16', algorithm: 'ring', divisor });
  return {
    wouldOverflow: summed.overflow !== null,
    maxSummedMagnitude: summed.maxSummedMagnitude,
    gradientMagnitude: magnitude,
    configuredOpOverflows: configured.overflowed,
  };
}

export function runScalingCheck(options: ScalingCheckOptions): ScalingCheckResult {
  validate(options);
  const { ranks } = options;
  const reduceOp = REDUCE_OP_ALIASES[options.reduceOp] ?? (options.reduceOp as ScalingReduceOp);
  const lrRule = LR_RULE_ALIASES[options.lrRule];
  const baseLr = options.baseLr ?? 0.1;
  const steps = options.steps ?? 20;
  const dtype = options.dtype ?? 'fp32';
  const divisor = options.divisor ?? ranks;
  const algorithm = options.algorithm ?? 'ring';
  const problem = makeProblem(ranks, SAMPLES_PER_RANK, FEATURES, options.seed ?? 1);
  const intendedMultiplier = lrRule === 'linear-scaled' ? ranks : lrRule === 'sqrt-scaled' ? Math.sqrt(ranks) : 1;
  const lr = Math.fround(baseLr * intendedMultiplier);

  // The reference: one process, the whole global batch, float64, at the LR the rule intends for that batch.
  let reference = new Float64Array(FEATURES);
  const referenceCurve = [loss(problem, reference)];
  for (let t = 0; t < steps; t++) {
    const g = gradient(problem, reference);
    reference = reference.map((w, j) => w - lr * g[j]);
    referenceCurve.push(loss(problem, reference));
  }

  // Data-parallel: each rank's local-mean gradient in the dtype, reduced, applied to fp32 master weights.
  let weights = new Float64Array(FEATURES);
  const dpCurve = [loss(problem, weights)];
  const ratios: number[] = [];
  let overflowedDuringTraining = false;
  for (let t = 0; t < steps; t++) {
    if (!weights.every(Number.isFinite)) {
      dpCurve.push(Infinity);
      continue;
    }
    // The numeric AllReduce rounds each rank's gradient to the dtype and reports it if that already overflows.
    const grads = Array.from({ length: ranks }, (_, r) => rankGradient(problem, weights, r));
    const reduced = reduceGradients(grads, { reduceOp, dtype, algorithm, divisor });
    overflowedDuringTraining ||= reduced.overflowed;
    const next = weights.map((w, j) => Math.fround(w - lr * reduced.values[j]));
    // The update the base LR would apply with the exact large-batch gradient at the same weights.
    const baseUpdate = gradient(problem, weights).map((x) => -baseLr * x);
    const norm = baseUpdate.reduce((s, x) => s + x * x, 0);
    const projection = next.reduce((s, w, j) => s + (w - weights[j]) * baseUpdate[j], 0);
    if (norm > 0 && Number.isFinite(projection)) ratios.push(projection / norm);
    weights = next;
    dpCurve.push(weights.every(Number.isFinite) ? loss(problem, weights) : Infinity);
  }

  const gaps = dpCurve.map((l, t) => Math.abs(l - referenceCurve[t]) / referenceCurve[t]);
  const maxLossGap = gaps.some((g) => !Number.isFinite(g)) ? Infinity : Math.max(...gaps);
  const lrMultiplier = median(ratios);
  const excessMultiplier = lrMultiplier / intendedMultiplier;
  const finalLoss = dpCurve[dpCurve.length - 1];
  const finalReferenceLoss = referenceCurve[referenceCurve.length - 1];
  return {
    ranks,
    reduceOp,
    lrRule,
    dtype,
    baseLr,
    steps,
    lrMultiplier,
    intendedMultiplier,
    excessMultiplier,
    lossCurve: { dataParallel: dpCurve, reference: referenceCurve },
    maxLossGap,
    diverged: !Number.isFinite(finalLoss) || finalLoss > dpCurve[0],
    referenceDiverged: !Number.isFinite(finalReferenceLoss) || finalReferenceLoss > referenceCurve[0],
    matchesReference: maxLossGap <= LOSS_TOLERANCE[dtype] && Math.abs(excessMultiplier - 1) <= 0.01,
    fp16Overflow: fp16Check(problem, reduceOp, options.gradientMagnitude, divisor),
    overflowedDuringTraining,
  };
}

/** The largest finite fp16 value, which a sum before division must stay under. */
export const FP16_MAX = FORMATS.fp16.maxFinite;

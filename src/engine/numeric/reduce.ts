// The numeric AllReduce: run the algorithm on real buffers in the dtype, then check every rank's result against a
// float64 reference the way nccl-tests' #wrong column does.
import type { Algorithm, Dtype, ReduceOp } from '../collective-types';
import { FORMATS } from './formats';
import { planReduction, type NumericReductionOptions, type ReductionPlan } from './plan';
import { simulateReduction } from './simulate';

export interface OverflowReport {
  /** Elements whose reduction (or whose input conversion) overflowed the dtype on some rank. */
  readonly count: number;
  readonly firstIndex: number;
  /** Of those, elements whose input already did not fit the dtype. */
  readonly inInputs: number;
}

export interface NumericReductionResult {
  readonly algorithm: Algorithm;
  readonly dtype: Dtype;
  readonly op: ReduceOp;
  readonly ranks: number;
  readonly gpusPerNode: number;
  readonly channels: number;
  readonly elements: number;
  /** The premul scalar as the kernel holds it (rounded to the dtype); 1 for sum. */
  readonly scalar: number;
  /** Largest |output − reference| over elements that did not overflow, across all ranks. */
  readonly maxAbsError: number;
  /** Largest |output − reference| / |reference| over the same elements (reference ≠ 0). */
  readonly maxRelError: number;
  /** Elements outside the error bound on some rank (see `errorBound`); overflowed elements always count. */
  readonly wrong: number;
  readonly overflow: OverflowReport | null;
  readonly allRanksIdentical: boolean;
  /** Largest |sum of the inputs| before any scaling: what a sum-before-divide must hold. */
  readonly maxSummedMagnitude: number;
  readonly outputs: readonly Float64Array[];
  /** The exact result in float64 (scale × Σ inputs, compensated summation). */
  readonly reference: Float64Array;
}

/**
 * The rigorous bound on the error of summing N terms in any order with unit roundoff u (Higham, "Accuracy and
 * Stability of Numerical Algorithms", §4.2): γ_k · Σ|terms| with γ_k = k·u / (1 − k·u), where k = N − 1 additions
 * plus the premultiplication, the scalar's double rounding and the switch's final rounding (k = N + 3), plus half
 * an ulp of the smallest subnormal per rounding for underflow. A correct reduction never exceeds it, so #wrong > 0
 * means overflow, NaN or a broken reduction, not ordinary rounding. When k·u ≥ 1 (fp8 over many ranks) the bound
 * says nothing and only non-finite or overflowed elements count.
 */
export function errorBound(dtype: Dtype, ranks: number, scaledAbsSum: number): number {
  const fmt = FORMATS[dtype];
  const k = ranks + 3;
  const ku = k * fmt.unitRoundoff;
  if (ku >= 1) return Infinity;
  const smallestSubnormal = 2 ** (fmt.minExponent - fmt.mantissaBits);
  return (ku / (1 - ku)) * scaledAbsSum + 2 * ranks * smallestSubnormal;
}

/** Neumaier's compensated sum: accurate to about one float64 rounding, far below any format checked here. */
function compensatedSum(values: readonly Float64Array[], e: number): { sum: number; absSum: number } {
  let sum = 0;
  let compensation = 0;
  let absSum = 0;
  for (const buffer of values) {
    const x = buffer[e];
    const t = sum + x;
    compensation += Math.abs(sum) >= Math.abs(x) ? sum - t + x : x - t + sum;
    sum = t;
    absSum += Math.abs(x);
  }
  return { sum: sum + compensation, absSum };
}

function sameBits(a: number, b: number): boolean {
  return Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));
}

/** Reduces one buffer per rank with the algorithm's order of operations in the dtype, and checks the result. */
export function reduceNumerically(options: NumericReductionOptions): NumericReductionResult {
  const plan: ReductionPlan = planReduction(options);
  const { outputs, overflowAt } = simulateReduction(plan);
  const reference = new Float64Array(plan.elements);
  let maxAbsError = 0;
  let maxRelError = 0;
  let maxSummedMagnitude = 0;
  let wrong = 0;
  let overflowCount = 0;
  let firstOverflow = -1;
  let inInputs = 0;
  let allRanksIdentical = true;
  for (let e = 0; e < plan.elements; e++) {
    const { sum, absSum } = compensatedSum(plan.inputs, e);
    if (Number.isFinite(sum)) maxSummedMagnitude = Math.max(maxSummedMagnitude, Math.abs(sum));
    const expected = plan.exactScale * sum;
    reference[e] = expected;
    const overflowed = overflowAt[e] === 1 || plan.inputOverflowAt[e] === 1;
    if (overflowed) {
      overflowCount += 1;
      if (firstOverflow < 0) firstOverflow = e;
      if (plan.inputOverflowAt[e] === 1) inInputs += 1;
    }
    const bound = errorBound(plan.dtype, plan.ranks, Math.abs(plan.exactScale) * absSum);
    let elementWrong = overflowed;
    for (let r = 0; r < plan.ranks; r++) {
      const got = outputs[r][e];
      if (r > 0 && !sameBits(got, outputs[0][e])) allRanksIdentical = false;
      if (!Number.isFinite(got) || !Number.isFinite(expected)) {
        if (!sameBits(got, expected)) elementWrong = true;
        continue;
      }
      const absError = Math.abs(got - expected);
      if (absError > bound) elementWrong = true;
      if (overflowed) continue;
      maxAbsError = Math.max(maxAbsError, absError);
      if (expected !== 0) maxRelError = Math.max(maxRelError, absError / Math.abs(expected));
    }
    if (elementWrong) wrong += 1;
  }
  return {
    algorithm: plan.algorithm,
    dtype: plan.dtype,
    op: plan.op,
    ranks: plan.ranks,
    gpusPerNode: plan.gpusPerNode,
    channels: plan.channels,
    elements: plan.elements,
    scalar: plan.scalar,
    maxAbsError,
    maxRelError,
    wrong,
    allRanksIdentical,
    maxSummedMagnitude,
    outputs,
    reference,
    overflow: overflowCount > 0 ? { count: overflowCount, firstIndex: firstOverflow, inInputs } : null,
  };
}

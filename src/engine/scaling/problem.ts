// A synthetic linear least-squares problem split across data-parallel ranks: the smallest real training job whose
// gradient is exactly the mean of the per-rank gradients, so any reduction that is not a mean shows up as a
// learning-rate multiplier.
import { seededGaussian } from '../numeric/synthetic';

export interface LeastSquaresProblem {
  readonly features: number;
  readonly samplesPerRank: number;
  readonly ranks: number;
  /** Row-major samples × features, all ranks' samples in rank order (rank r owns rows r·b … r·b + b − 1). */
  readonly inputs: Float64Array;
  readonly targets: Float64Array;
}

/** y = X·w* + 0.1·noise with standard normal X and w*, deterministic for the seed. */
export function makeProblem(
  ranks: number,
  samplesPerRank: number,
  features: number,
  seed: number,
): LeastSquaresProblem {
  const gaussian = seededGaussian(seed);
  const truth = Float64Array.from({ length: features }, () => gaussian());
  const samples = ranks * samplesPerRank;
  const inputs = new Float64Array(samples * features);
  const targets = new Float64Array(samples);
  for (let i = 0; i < samples; i++) {
    let y = 0;
    for (let j = 0; j < features; j++) {
      const x = gaussian();
      inputs[i * features + j] = x;
      y += x * truth[j];
    }
    targets[i] = y + 0.1 * gaussian();
  }
  return { features, samplesPerRank, ranks, inputs, targets };
}

/** Mean over rows [first, first + count) of ½(x·w − y)², the loss PyTorch's MSE-with-mean computes up to a factor. */
export function loss(
  problem: LeastSquaresProblem,
  weights: ArrayLike<number>,
  first = 0,
  count = problem.ranks * problem.samplesPerRank,
): number {
  let total = 0;
  for (let i = first; i < first + count; i++) {
    let residual = -problem.targets[i];
    for (let j = 0; j < problem.features; j++) residual += problem.inputs[i * problem.features + j] * weights[j];
    total += 0.5 * residual * residual;
  }
  return total / count;
}

/** Gradient of `loss` over the same rows: (1/count)·Xᵀ(Xw − y), in float64. */
export function gradient(
  problem: LeastSquaresProblem,
  weights: ArrayLike<number>,
  first = 0,
  count = problem.ranks * problem.samplesPerRank,
): Float64Array {
  const out = new Float64Array(problem.features);
  for (let i = first; i < first + count; i++) {
    let residual = -problem.targets[i];
    for (let j = 0; j < problem.features; j++) residual += problem.inputs[i * problem.features + j] * weights[j];
    for (let j = 0; j < problem.features; j++) out[j] += problem.inputs[i * problem.features + j] * residual;
  }
  for (let j = 0; j < problem.features; j++) out[j] /= count;
  return out;
}

/** One rank's gradient on its own slice of the global batch (the local mean, as a per-rank loss.mean() gives). */
export function rankGradient(problem: LeastSquaresProblem, weights: ArrayLike<number>, rank: number): Float64Array {
  return gradient(problem, weights, rank * problem.samplesPerRank, problem.samplesPerRank);
}

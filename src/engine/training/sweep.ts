// Sweeps one knob (bucket size or node count) through the step model, finds the best value, and for buckets
// says what to set. A recommendation at the edge of the range is only made when the curve is still falling
// there, and then it says so: the true best may lie outside the range.
import type { Micros } from '../units';
import { formatBytes, formatMicros } from '../units';
import { flattenModel } from './buckets';
import { CollectiveCoster, type CollectivePricer } from './collective-cost';
import { resolveSystem } from '../topology/resolve';
import { simulateTrainingStep, type StepOptions } from './step';
import type { TrainingRun } from './types';
import { applyWhatIf, type SweepRange } from './what-if';

export interface SweepPoint {
  readonly value: number;
  readonly stepTimeUs: Micros;
  readonly exposedCommUs: Micros;
  readonly collectives: number;
  readonly scalingEfficiency: number;
}

export interface TrainingSweep {
  readonly key: SweepRange['key'];
  readonly points: readonly SweepPoint[];
  /**
   * Buckets: the value with the lowest step time; among values within `TIE_TOLERANCE` of it, the one nearest the
   * middle. Nodes: the most nodes that keep scaling efficiency at or above EFFICIENT_SCALING.
   */
  readonly best: number;
  /** "edge" when the best value sits at an end of the range and the curve still falls towards it. */
  readonly bestAt: 'interior' | 'edge';
  readonly recommendation: string;
}

/** Step times within 0.5 % are treated as equal: the model is not that precise. */
export const TIE_TOLERANCE = 0.005;

/** The index of the best point: lowest step time, ties broken towards the middle of the range. */
export function bestIndex(times: readonly number[]): number {
  const min = Math.min(...times);
  const middle = (times.length - 1) / 2;
  let best = -1;
  times.forEach((time, i) => {
    if (time <= min * (1 + TIE_TOLERANCE) && (best < 0 || Math.abs(i - middle) < Math.abs(best - middle))) best = i;
  });
  return best;
}

/** Scaling efficiency worth having: a node count below it wastes a tenth or more of every GPU on waiting. */
export const EFFICIENT_SCALING = 0.9;

/**
 * For node sweeps every step gets slower as the world (and the global batch) grows, so "fastest" always means
 * "fewest nodes". The useful answer is the most nodes that still keep scaling efficiency above 90 %.
 */
function widestEfficient(points: readonly SweepPoint[]): number {
  let best = 0;
  points.forEach((p, i) => {
    if (p.scalingEfficiency >= EFFICIENT_SCALING) best = i;
  });
  return best;
}

/** One point of a sweep: the step with the knob at `value`. The options share a flattened model and a coster. */
export function trainingSweepPoint(
  run: TrainingRun,
  key: SweepRange['key'],
  value: number,
  options: StepOptions = {},
): SweepPoint {
  const step = simulateTrainingStep(applyWhatIf(run, key, String(value)), options);
  return {
    value,
    stepTimeUs: step.stepTimeUs,
    exposedCommUs: step.exposedCommUs,
    collectives: step.collectives.length,
    scalingEfficiency: step.scalingEfficiency,
  };
}

export function sweepTraining(run: TrainingRun, range: SweepRange, price?: CollectivePricer): TrainingSweep {
  const flat = flattenModel(run.model, run.training.sequenceLength);
  // Bucket sizes do not change the system, so one coster (and its cache of priced sizes) serves every point.
  const coster =
    range.key === 'bucket_cap_mb'
      ? new CollectiveCoster(
          resolveSystem(run.system),
          { algorithm: run.training.algorithm, protocol: run.training.protocol, op: run.training.reduceOp },
          price,
        )
      : undefined;
  const points = range.values.map((value) => trainingSweepPoint(run, range.key, value, { flat, price, coster }));
  return summariseTrainingSweep(run, range.key, points);
}

/**
 * The best point of a sweep and what to set, from its points in the range's order (computed here or elsewhere:
 * the CLI prices a node sweep's points on worker threads).
 */
export function summariseTrainingSweep(
  run: TrainingRun,
  key: SweepRange['key'],
  points: readonly SweepPoint[],
): TrainingSweep {
  const index = key === 'nodes' ? widestEfficient(points) : bestIndex(points.map((p) => p.stepTimeUs));
  const best = points[index];
  const atEdge = points.length > 1 && (index === 0 || index === points.length - 1);
  return {
    key,
    points,
    best: best.value,
    bestAt: atEdge ? 'edge' : 'interior',
    recommendation: recommend(run, key, points, index, atEdge),
  };
}

function recommend(
  run: TrainingRun,
  key: SweepRange['key'],
  points: readonly SweepPoint[],
  index: number,
  atEdge: boolean,
): string {
  const best = points[index];
  if (key === 'nodes') {
    const last = points[points.length - 1];
    const keeps =
      best.scalingEfficiency >= EFFICIENT_SCALING
        ? `${best.value} node(s) is the most that keep ${EFFICIENT_SCALING * 100}% efficiency`
        : `no node count keeps ${EFFICIENT_SCALING * 100}% efficiency`;
    return (
      `scaling efficiency falls from ${(points[0].scalingEfficiency * 100).toFixed(1)}% at ${points[0].value} node(s) to ${(last.scalingEfficiency * 100).toFixed(1)}% at ${last.value}; ` +
      `${keeps} (step ${formatMicros(best.stepTimeUs)}; the per-GPU batch stays fixed, so the global batch grows with the nodes)`
    );
  }
  const currentMb = run.training.bucketBytes / (1024 * 1024);
  const current = points.find((p) => Math.abs(p.value - currentMb) < 1e-9);
  const gain = current
    ? ` (${(((current.stepTimeUs - best.stepTimeUs) / current.stepTimeUs) * 100).toFixed(1)}% faster than the current ${formatBytes(run.training.bucketBytes)})`
    : '';
  const flat = Math.max(...points.map((p) => p.stepTimeUs)) <= best.stepTimeUs * (1 + TIE_TOLERANCE);
  if (flat)
    return `bucket size barely matters here (every value within ${TIE_TOLERANCE * 100}%); keep bucket_cap_mb=${currentMb}`;
  const edge = atEdge ? `; the curve still falls at the ${index === 0 ? 'low' : 'high'} end, so try a wider range` : '';
  return `set bucket_cap_mb=${best.value}: step ${formatMicros(best.stepTimeUs)}, exposed communication ${formatMicros(best.exposedCommUs)}${gain}${edge}`;
}

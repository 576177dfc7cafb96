// The one bucket-size recommendation the editor makes: the bucket_cap_mb with the lowest simulated step time
// (the step model includes the overlap of communication with the backward pass), always shown with that step
// time and the current one. The chart marks the same point and the command's message says the same words, so
// no surface can say "try 512 MB" while another says "keep 25".
import { TIE_TOLERANCE, asBytes, formatMicros, type TrainingSweep } from '../../engine/index';
import type { BucketSweepRow } from '../../protocol';

const MiB = 1024 * 1024;

/** Powers of two from 1 to 1024 MB, as Sweep Bucket Size has always swept. */
const SWEPT_MB: readonly number[] = Array.from({ length: 11 }, (_, i) => 2 ** i);

export interface BucketAdvice {
  /** The bucket_cap_mb to use: the argmin of the step time, or the current one when nothing is clearly faster. */
  readonly recommendedMb: number;
  readonly recommendedStepUs: number;
  readonly currentMb: number;
  readonly currentStepUs: number;
  /** True when the recommendation changes the current value. */
  readonly change: boolean;
  readonly text: string;
}

/** bucket_cap_mb as people write it: 25, 1.5, 953.7 (not 953.67431640625). */
export function formatBucketMb(mb: number): string {
  return String(Number(mb.toFixed(mb < 10 ? 2 : 1)));
}

/** The sweep's range: the usual powers of two plus the current value, so the current step time is simulated too. */
export function bucketSweepRange(currentBytes: number): string {
  const currentMb = currentBytes / MiB;
  const values = [...new Set([...SWEPT_MB, currentMb])].sort((a, b) => a - b);
  return `bucket_cap_mb=${values.join(',')}`;
}

/**
 * The recommendation from a sweep that contains the current value. A size is recommended over the current one
 * only when its step is more than TIE_TOLERANCE faster: the model is not more precise than that, and a change
 * that buys nothing is not advice.
 */
export function bucketAdvice(sweep: TrainingSweep, currentBytes: number): BucketAdvice {
  const currentMb = currentBytes / MiB;
  const points = sweep.points;
  if (points.length === 0) throw new Error('the bucket sweep has no points');
  let best = points[0];
  for (const p of points) if (p.stepTimeUs < best.stepTimeUs) best = p;
  const current = points.reduce((a, b) => (Math.abs(b.value - currentMb) < Math.abs(a.value - currentMb) ? b : a));
  const change = current.stepTimeUs > best.stepTimeUs * (1 + TIE_TOLERANCE);
  const chosen = change ? best : current;
  const edge =
    change && (best === points[points.length - 1] || best === points[0])
      ? `; it is at the ${best === points[0] ? 'low' : 'high'} end of the sweep, so the best may lie beyond it`
      : '';
  const text = change
    ? `set bucket_cap_mb=${formatBucketMb(best.value)}: step ${formatMicros(best.stepTimeUs)} against ${formatMicros(current.stepTimeUs)} at the current ${formatBucketMb(current.value)} ` +
      `(${(((current.stepTimeUs - best.stepTimeUs) / current.stepTimeUs) * 100).toFixed(1)}% faster, exposed communication ${formatMicros(best.exposedCommUs)})${edge}`
    : best === current
      ? `keep bucket_cap_mb=${formatBucketMb(current.value)}: step ${formatMicros(current.stepTimeUs)}, the fastest of the sweep`
      : `keep bucket_cap_mb=${formatBucketMb(current.value)}: step ${formatMicros(current.stepTimeUs)}; no swept size is more than ${TIE_TOLERANCE * 100}% faster ` +
        `(the fastest, bucket_cap_mb=${formatBucketMb(best.value)}, takes ${formatMicros(best.stepTimeUs)})`;
  return {
    recommendedMb: chosen.value,
    recommendedStepUs: chosen.stepTimeUs,
    currentMb: current.value,
    currentStepUs: current.stepTimeUs,
    change,
    text,
  };
}

/** The sweep's points as chart rows, bucket_cap_mb in bytes as DDP counts them (MiB), the advised one marked. */
export function bucketSweepRows(sweep: TrainingSweep, advice: BucketAdvice): BucketSweepRow[] {
  return sweep.points.map((p) => ({
    bucketBytes: asBytes(Math.round(p.value * MiB)),
    stepTimeUs: p.stepTimeUs,
    exposedCommUs: p.exposedCommUs,
    recommended: p.value === advice.recommendedMb,
  }));
}

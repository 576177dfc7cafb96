// The one bucket-size recommendation the editor makes: the bucket_cap_mb with the lowest simulated step time
// (the step model includes the overlap of communication with the backward pass), always shown with that step
// time and the current one. The chart marks the same point and the command's message says the same words, so
// no surface can say "try 512 MB" while another says "keep 25".
import { TIE_TOLERANCE, asBytes, formatMicros, type TrainingSweep } from '../../engine/index';
import type { BucketSweepRow } from '../../protocol';
import { l10n } from './l10n';

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
  if (points.length === 0) throw new Error(l10n.t('the bucket sweep has no points'));
  let best = points[0];
  for (const p of points) if (p.stepTimeUs < best.stepTimeUs) best = p;
  const current = points.reduce((a, b) => (Math.abs(b.value - currentMb) < Math.abs(a.value - currentMb) ? b : a));
  const change = current.stepTimeUs > best.stepTimeUs * (1 + TIE_TOLERANCE);
  const chosen = change ? best : current;
  const edge =
    change && (best === points[points.length - 1] || best === points[0])
      ? best === points[0]
        ? l10n.t('; it is at the low end of the sweep, so the best may lie beyond it')
        : l10n.t('; it is at the high end of the sweep, so the best may lie beyond it')
      : '';
  const text = change
    ? l10n.t(
        'set bucket_cap_mb={0}: step {1} against {2} at the current {3} ({4}% faster, exposed communication {5}){6}',
        formatBucketMb(best.value),
        formatMicros(best.stepTimeUs),
        formatMicros(current.stepTimeUs),
        formatBucketMb(current.value),
        (((current.stepTimeUs - best.stepTimeUs) / current.stepTimeUs) * 100).toFixed(1),
        formatMicros(best.exposedCommUs),
        edge,
      )
    : best === current
      ? l10n.t(
          'keep bucket_cap_mb={0}: step {1}, the fastest of the sweep',
          formatBucketMb(current.value),
          formatMicros(current.stepTimeUs),
        )
      : l10n.t(
          'keep bucket_cap_mb={0}: step {1}; no swept size is more than {2}% faster (the fastest, bucket_cap_mb={3}, takes {4})',
          formatBucketMb(current.value),
          formatMicros(current.stepTimeUs),
          TIE_TOLERANCE * 100,
          formatBucketMb(best.value),
          formatMicros(best.stepTimeUs),
        );
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

// The words on a code lens: the predicted cost of a site's collectives on the selected system, and the bucket
// sweep's recommendation. Pure formatting and arithmetic over engine results, so the tests pin the wording.
import type { CallSize } from './call-size';
import {
  formatBytes,
  formatMicros,
  type Algorithm,
  type CollectiveKind,
  type CollectiveResult,
  type Protocol,
  type SweepRow,
  asBytes,
  asMicros,
  asGBps,
} from '../../engine/index';
import { l10n } from './l10n';

const ALGORITHM_NAMES: Readonly<Record<Algorithm, string>> = {
  ring: 'Ring',
  tree: 'Tree',
  collnetdirect: 'CollNetDirect',
  collnetchain: 'CollNetChain',
  nvls: 'NVLS',
  nvlstree: 'NVLSTree',
  pat: 'PAT',
  hierarchical: 'Hierarchical',
  direct: 'Direct',
};

const KIND_NAMES: Readonly<Record<CollectiveKind, string>> = {
  allreduce: 'all-reduce',
  reducescatter: 'reduce-scatter',
  allgather: 'all-gather',
};

/**
 * "25 MiB", "1.5 MiB", "512 KiB": a bucket's size in the project's one size format, so the lens, the timeline's title
 * and the charts name one size the same way (DDP's bucket_cap_mb counts 2^20 bytes, which is a MiB).
 */
export function formatBucket(bytes: number): string {
  return formatBytes(asBytes(bytes));
}

export function algoProto(algorithm: Algorithm, protocol: Protocol): string {
  return `${ALGORITHM_NAMES[algorithm] ?? algorithm}/${protocol}`;
}

/** "440 GB/s" with three significant digits at most. */
export function formatGBps(value: number): string {
  return `${value >= 100 ? Math.round(value) : value >= 10 ? value.toFixed(1).replace(/\.0$/, '') : value.toFixed(2).replace(/0$/, '')} GB/s`;
}

/**
 * A call is latency-bound when at least half its time is the fixed cost of any call, i.e. it takes less than
 * twice what an 8-byte call takes. There bandwidth says nothing (0.0 GB/s against 0.0 GB/s); time does.
 */
export const LATENCY_PROBE_BYTES = 8;
export function isLatencyBound(timeUs: number, latencyFloorUs: number | undefined): boolean {
  return latencyFloorUs !== undefined && latencyFloorUs > 0 && timeUs < 2 * latencyFloorUs;
}

/**
 * One site's lens title. A single collective reads "≈ 1.9 ms · 440 GB/s busbw · NVLS/Simple for 25 MiB buckets";
 * FSDP's pair reads "≈ 3.1 ms (reduce-scatter 1.6 ms + all-gather 1.5 ms) · … for 25 MiB units"; a call that is
 * latency-bound (see isLatencyBound, given the 8-byte time) reads "≈ 25.5 µs · latency-bound · Tree/LL for a 4 B tensor".
 */
export function predictionTitle(
  results: readonly CollectiveResult[],
  bucketBytes: number,
  unit: 'buckets' | 'tensor' | 'units',
  latencyFloorUs?: number,
): string {
  if (results.length === 0) return l10n.t('no prediction');
  const total = asMicros(results.reduce((s, r) => s + r.timeUs, 0));
  const first = results[0];
  const what =
    unit === 'tensor'
      ? l10n.t('a {0} tensor', formatBucket(bucketBytes))
      : unit === 'buckets'
        ? l10n.t('{0} buckets', formatBucket(bucketBytes))
        : l10n.t('{0} units', formatBucket(bucketBytes));
  const split =
    results.length > 1 ? ` (${results.map((r) => `${KIND_NAMES[r.kind]} ${formatMicros(r.timeUs)}`).join(' + ')})` : '';
  const rate = isLatencyBound(first.timeUs, latencyFloorUs)
    ? l10n.t('latency-bound')
    : l10n.t('{0} busbw', formatGBps(first.busbwGBps));
  return l10n.t(
    '≈ {0}{1} · {2} · {3} for {4}',
    formatMicros(total),
    split,
    rate,
    algoProto(first.algorithm, first.protocol),
    what,
  );
}

/** A config's Profile lens once its step is simulated: "$(pulse) Profile · step ≈ 412 ms · 38 ms communication exposed". */
/**
 * A step's time as the Profile lens, the profile's charts title and its log line all write it, so the three show
 * one figure for one config.
 */
export function stepTimeText(step: { stepTimeUs: number }): string {
  return formatMicros(asMicros(step.stepTimeUs));
}

export function profileTitle(step: { stepTimeUs: number; exposedCommUs: number }): string {
  return l10n.t(
    '$(pulse) Profile · step ≈ {0} · {1} communication exposed',
    stepTimeText(step),
    formatMicros(asMicros(step.exposedCommUs)),
  );
}

export function profileTooltip(step: {
  stepTimeUs: number;
  computeUs: number;
  exposedCommUs: number;
  overlapPct: number;
  collectives: number;
  systemLabel: string;
}): string {
  return [
    l10n.t('One training step on {0}, simulated: {1}.', step.systemLabel, formatMicros(asMicros(step.stepTimeUs))),
    l10n.t(
      'Compute {0}; {1} collectives, {2}% of their time hidden behind backward; {3} exposed.',
      formatMicros(asMicros(step.computeUs)),
      step.collectives,
      step.overlapPct.toFixed(0),
      formatMicros(asMicros(step.exposedCommUs)),
    ),
    l10n.t('Click for the timeline, phase breakdown and busbw charts.'),
  ].join('\n');
}

/** The hover text of a prediction lens: what was assumed, so nobody mistakes a default for a measurement. */
export function predictionTooltip(systemLabel: string, size: CallSize, results: readonly CollectiveResult[]): string {
  const phases = results.map((r) =>
    l10n.t(
      '{0}: exchange {1}, reduce {2}, broadcast {3}, {4} channels',
      KIND_NAMES[r.kind],
      formatMicros(r.phases.exchange),
      formatMicros(r.phases.reduce),
      formatMicros(r.phases.broadcast),
      r.channels,
    ),
  );
  return [
    l10n.t(
      'Predicted by the simulated engine on {0}, {1} ranks; size {2}: {3}.',
      systemLabel,
      results[0]?.ranks ?? '?',
      formatBucket(size.bytes),
      size.why,
    ),
    ...phases,
    l10n.t('Click to profile and open the timeline.'),
  ].join('\n');
}

/** What a bucket size achieves in AllReduce bandwidth, against the best size of the sweep. */
export interface BucketBandwidth {
  readonly currentBytes: number;
  readonly currentFraction: number;
  readonly peakBusbwGBps: number;
}

/** The current bucket's share of the peak AllReduce busbw of a sweep (rows sorted by size). */
export function bucketBandwidth(rows: readonly SweepRow[], currentBytes: number): BucketBandwidth | undefined {
  if (rows.length === 0) return undefined;
  const peak = Math.max(...rows.map((r) => r.busbwGBps));
  if (!(peak > 0)) return undefined;
  // The current size's busbw, interpolated in log(size) between the swept points around it.
  let current = rows[0].busbwGBps;
  for (let i = 0; i < rows.length; i++) {
    if (rows[i].bytes >= currentBytes) {
      const prev = rows[i - 1];
      if (!prev) {
        current = rows[i].busbwGBps;
        break;
      }
      const t = (Math.log(currentBytes) - Math.log(prev.bytes)) / (Math.log(rows[i].bytes) - Math.log(prev.bytes));
      current = asGBps(prev.busbwGBps + t * (rows[i].busbwGBps - prev.busbwGBps));
      break;
    }
    current = rows[i].busbwGBps;
  }
  return { currentBytes, currentFraction: current / peak, peakBusbwGBps: peak };
}

/**
 * A Python bucket_cap_mb's lens states what the size achieves in bandwidth and offers the step-time sweep. It
 * recommends nothing: without the model and its backward pass the best bucket is not knowable here, and the one
 * recommendation (the argmin of the simulated step time) comes from the sweep, which shows the step time with it.
 */
export function bucketTitle(rec: BucketBandwidth): string {
  return l10n.t(
    'bucket_cap_mb: {0} reaches {1}% of peak AllReduce busbw ({2}) · sweep step time',
    formatBucket(rec.currentBytes),
    Math.round(rec.currentFraction * 100),
    formatGBps(rec.peakBusbwGBps),
  );
}

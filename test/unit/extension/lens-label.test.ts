import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  bucketBandwidth,
  bucketTitle,
  formatBucket,
  formatGBps,
  isLatencyBound,
  predictionTitle,
  predictionTooltip,
} from '../../../src/extension/glue/lens-label';
import { type CollectiveResult, type SweepRow, asBytes, asMicros, asGBps } from '../../../src/engine/index';

const MiB = 1024 * 1024;
const result = (over: Partial<CollectiveResult>): CollectiveResult => ({
  kind: 'allreduce',
  bytes: asBytes(25 * MiB),
  ranks: 8,
  timeUs: asMicros(1900),
  algbwGBps: asGBps(13.8),
  busbwGBps: asGBps(440),
  algorithm: 'nvls',
  protocol: 'Simple',
  channels: 16,
  phases: { exchange: asMicros(1000), reduce: asMicros(300), broadcast: asMicros(600) },
  spanCount: 0,
  ...over,
});

test('a prediction lens reads like the issue asks: time, busbw, algorithm/protocol, bucket size', () => {
  assert.equal(
    predictionTitle([result({})], 25 * MiB, 'buckets'),
    '≈ 1.90 ms · 440 GB/s busbw · NVLS/Simple for 25 MiB buckets',
  );
  assert.equal(
    predictionTitle(
      [result({ timeUs: asMicros(85.3), busbwGBps: asGBps(12.34), algorithm: 'ring', protocol: 'LL128' })],
      256 * 1024,
      'tensor',
    ),
    '≈ 85.3 µs · 12.3 GB/s busbw · Ring/LL128 for a 256 KiB tensor',
  );
});

test('FSDP sums its reduce-scatter and all-gather and names both', () => {
  const title = predictionTitle(
    [result({ kind: 'reducescatter', timeUs: asMicros(1000) }), result({ kind: 'allgather', timeUs: asMicros(900) })],
    25 * MiB,
    'units',
  );
  assert.equal(
    title,
    '≈ 1.90 ms (reduce-scatter 1.00 ms + all-gather 900 µs) · 440 GB/s busbw · NVLS/Simple for 25 MiB units',
  );
});

test('the tooltip says how the size was found, or that it was assumed', () => {
  const assumed = {
    bytes: 25 * MiB,
    source: 'default' as const,
    why: "the tensor's size is not in the code, so collectiveProfiler.defaultBucketMB is assumed",
  };
  assert.match(
    predictionTooltip('8× H100 NVSwitch', assumed, [result({})]),
    /size 25 MiB: .*defaultBucketMB is assumed/,
  );
  const fromCode = { bytes: 50 * MiB, source: 'bucket' as const, why: 'bucket_cap_mb=50 from the code' };
  assert.match(
    predictionTooltip('8× H100 NVSwitch', fromCode, [result({})]),
    /size 50 MiB: bucket_cap_mb=50 from the code/,
  );
  assert.match(predictionTooltip('8× H100 NVSwitch', fromCode, [result({})]), /8× H100 NVSwitch, 8 ranks/);
});

test('a latency-bound call is judged by its time, not by a busbw near zero', () => {
  // 25 µs for 4 bytes where 8 bytes take 24 µs: nearly all of it is the fixed cost of a call.
  const scalar = result({
    bytes: asBytes(4),
    timeUs: asMicros(25),
    busbwGBps: asGBps(0.0003),
    algorithm: 'tree',
    protocol: 'LL',
  });
  assert.equal(predictionTitle([scalar], 4, 'tensor', 24), '≈ 25.0 µs · latency-bound · Tree/LL for a 4 B tensor');
  assert.equal(isLatencyBound(1900, 24), false);
  assert.equal(isLatencyBound(47, 24), true);
  assert.match(predictionTitle([result({})], 25 * MiB, 'buckets', 24), /440 GB\/s busbw/);
});

test('sizes and bandwidths are formatted as people write them', () => {
  assert.deepEqual(
    [formatBucket(25 * MiB), formatBucket(1.5 * MiB), formatBucket(512 * 1024), formatBucket(100)],
    ['25 MiB', '1.5 MiB', '512 KiB', '100 B'],
  );
  assert.deepEqual([formatGBps(440.4), formatGBps(12.0), formatGBps(0.5)], ['440 GB/s', '12 GB/s', '0.5 GB/s']);
});

const row = (mb: number, busbw: number): SweepRow => ({
  bytes: asBytes(mb * MiB),
  count: (mb * MiB) / 4,
  dtype: 'fp32',
  timeUs: asMicros(1),
  algbwGBps: asGBps(1),
  busbwGBps: asGBps(busbw),
  algorithm: 'ring',
  protocol: 'Simple',
});
const SWEEP = [
  row(1, 100),
  row(2, 180),
  row(4, 260),
  row(8, 330),
  row(16, 380),
  row(32, 410),
  row(64, 430),
  row(128, 440),
];

test('a Python bucket lens states the bandwidth its size reaches and recommends nothing', () => {
  const share = bucketBandwidth(SWEEP, 25 * MiB)!;
  assert.equal(share.peakBusbwGBps, 440);
  // 25 MB lies between 16 MB (380) and 32 MB (410): log-interpolated, about 399 GB/s, 91% of peak.
  assert.ok(share.currentFraction > 0.88 && share.currentFraction < 0.92, String(share.currentFraction));
  assert.equal(
    bucketTitle(bucketBandwidth(SWEEP, 4 * MiB)!),
    'bucket_cap_mb: 4 MiB reaches 59% of peak AllReduce busbw (440 GB/s) · sweep step time',
  );
  assert.doesNotMatch(bucketTitle(share), /try|best|good/, "the only recommendation is the step-time sweep's");
  assert.equal(bucketBandwidth([], 1), undefined);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatBucket, formatGBps, predictionTitle, predictionTooltip, recommendBucket, bucketTitle } from '../../../src/extension/glue/lens-label';
import type { CollectiveResult, SweepRow } from '../../../src/engine/index';

const MiB = 1024 * 1024;
const result = (over: Partial<CollectiveResult>): CollectiveResult => ({
  kind: 'allreduce', bytes: 25 * MiB, ranks: 8, timeUs: 1900, algbwGBps: 13.8, busbwGBps: 440, algorithm: 'nvls', protocol: 'Simple', channels: 16,
  phases: { exchange: 1000, reduce: 300, broadcast: 600 }, spanCount: 0, ...over,
});

test('a prediction lens reads like the issue asks: time, busbw, algorithm/protocol, bucket size', () => {
  assert.equal(predictionTitle([result({})], 25 * MiB, 'buckets'), '≈ 1.90 ms · 440 GB/s busbw · NVLS/Simple for 25 MB buckets');
  assert.equal(predictionTitle([result({ timeUs: 85.3, busbwGBps: 12.34, algorithm: 'ring', protocol: 'LL128' })], 256 * 1024, 'tensor'), '≈ 85.3 µs · 12.3 GB/s busbw · Ring/LL128 for a 256 KB tensor');
});

test('FSDP sums its reduce-scatter and all-gather and names both', () => {
  const title = predictionTitle([result({ kind: 'reducescatter', timeUs: 1000 }), result({ kind: 'allgather', timeUs: 900 })], 25 * MiB, 'units');
  assert.equal(title, '≈ 1.90 ms (reduce-scatter 1.00 ms + all-gather 900 µs) · 440 GB/s busbw · NVLS/Simple for 25 MB units');
});

test('the tooltip says whether the size came from the code or was assumed', () => {
  assert.match(predictionTooltip('8× H100 NVSwitch', 25 * MiB, false, [result({})]), /25 MB assumed \(collectiveProfiler\.defaultBucketMB\)/);
  assert.match(predictionTooltip('8× H100 NVSwitch', 50 * MiB, true, [result({})]), /50 MB from the code/);
  assert.match(predictionTooltip('8× H100 NVSwitch', 50 * MiB, true, [result({})]), /8× H100 NVSwitch, 8 ranks/);
});

test('sizes and bandwidths are formatted as people write them', () => {
  assert.deepEqual([formatBucket(25 * MiB), formatBucket(1.5 * MiB), formatBucket(512 * 1024), formatBucket(100)], ['25 MB', '1.5 MB', '512 KB', '100 B']);
  assert.deepEqual([formatGBps(440.4), formatGBps(12.0), formatGBps(0.5)], ['440 GB/s', '12 GB/s', '0.5 GB/s']);
});

const row = (mb: number, busbw: number): SweepRow => ({ bytes: mb * MiB, count: (mb * MiB) / 4, dtype: 'fp32', timeUs: 1, algbwGBps: 1, busbwGBps: busbw, algorithm: 'ring', protocol: 'Simple' });
const SWEEP = [row(1, 100), row(2, 180), row(4, 260), row(8, 330), row(16, 380), row(32, 410), row(64, 430), row(128, 440)];

test('the bucket recommendation is the knee: the smallest size at 90% of peak busbw', () => {
  const rec = recommendBucket(SWEEP, 25 * MiB)!;
  assert.equal(rec.recommendedBytes, 32 * MiB);
  assert.equal(rec.peakBusbwGBps, 440);
  // 25 MB lies between 16 MB (380) and 32 MB (410): log-interpolated, about 399 GB/s, 91% of peak.
  assert.ok(rec.currentFraction > 0.88 && rec.currentFraction < 0.92, String(rec.currentFraction));
  assert.match(bucketTitle(recommendBucket(SWEEP, 4 * MiB)!), /^Bucket sweep: try 32 MB \(93% of peak busbw; 4 MB reaches 59%\)$/);
  assert.match(bucketTitle(recommendBucket(SWEEP, 64 * MiB)!), /64 MB reaches 98% of peak busbw \(440 GB\/s\) · good/);
  assert.equal(recommendBucket([], 1), undefined);
});

// DDP's bucket assignment: reverse order, the small first bucket, the cap, and the monotonic bucket count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { assignBuckets, chunkSizes, flattenModel, DDP_FIRST_BUCKET_BYTES } from '../../../src/engine/training/buckets';
import type { ModelSpec } from '../../../src/engine/training/types';
import { toyModel } from './helpers';
import { asBytes } from '../../../src/engine/index';

const MiB = asBytes(1024 * 1024);

function modelOf(paramCounts: readonly number[]): ModelSpec {
  return {
    name: 'list',
    family: 'generic',
    layers: [
      {
        name: 'all',
        tensors: paramCounts.map((params, i) => ({ name: `t${i}`, params, forwardFlopsPerToken: 2 * params })),
      },
    ],
  };
}

test('buckets are formed from the last parameter backwards, the first one closing at 1 MiB', () => {
  // Eight fp32 tensors of 0.5 MiB each (131072 params × 4 bytes).
  const flat = flattenModel(modelOf(Array(8).fill(131072)), 1);
  const buckets = assignBuckets(flat, 4, asBytes(2 * MiB), DDP_FIRST_BUCKET_BYTES);
  assert.deepEqual(
    buckets.map((b) => b.bytes / MiB),
    [1, 2, 1],
  );
  assert.deepEqual(
    buckets.map((b) => b.lastTensor),
    [6, 2, 0],
  );
  assert.deepEqual(
    buckets.map((b) => b.tensorCount),
    [2, 4, 2],
  );
});

test('a tensor larger than the cap gets a bucket of its own; bytes and parameters are conserved', () => {
  const flat = flattenModel(modelOf([1000, 50 * MiB, 600_000, 1000]), 1);
  const buckets = assignBuckets(flat, 2, asBytes(25 * MiB), DDP_FIRST_BUCKET_BYTES);
  assert.ok(buckets.some((b) => b.tensorCount === 1 && b.bytes === 100 * MiB));
  assert.equal(
    buckets.reduce((s, b) => s + b.params, 0),
    flat.totalParams,
  );
  assert.equal(
    buckets.reduce((s, b) => s + b.bytes, 0),
    flat.totalParams * 2,
  );
});

test('without the first-bucket rule every bucket fills to the cap', () => {
  const flat = flattenModel(modelOf(Array(10).fill(MiB / 4)), 1);
  const buckets = assignBuckets(flat, 4, asBytes(4 * MiB), asBytes(0));
  assert.deepEqual(
    buckets.map((b) => b.bytes / MiB),
    [4, 4, 2],
  );
});

test('parameter-free ops (attention scores) never enter a bucket', () => {
  const flat = flattenModel(toyModel(2, 256), 128);
  const buckets = assignBuckets(flat, 2, MiB, DDP_FIRST_BUCKET_BYTES);
  const total = buckets.reduce((s, b) => s + b.tensorCount, 0);
  assert.equal(total, Array.from(flat.params).filter((p) => p > 0).length);
});

test('property: a larger bucket cap never increases the number of buckets', () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 1, max: 40_000_000 }), { minLength: 1, maxLength: 120 }),
      fc.double({ min: 0.25, max: 512, noNaN: true }),
      fc.double({ min: 1, max: 8, noNaN: true }),
      fc.constantFrom(asBytes(0), DDP_FIRST_BUCKET_BYTES),
      (params, capMb, growth, first) => {
        const flat = flattenModel(modelOf(params), 1);
        const small = assignBuckets(flat, 2, asBytes(capMb * MiB), first).length;
        const large = assignBuckets(flat, 2, asBytes(capMb * growth * MiB), first).length;
        return large <= small;
      },
    ),
    { numRuns: 300 },
  );
});

test('chunkSizes splits a total into pieces of at most the chunk size', () => {
  assert.deepEqual(chunkSizes(asBytes(10), asBytes(4)), [4, 4, 2]);
  assert.deepEqual(chunkSizes(asBytes(8), asBytes(4)), [4, 4]);
  assert.throws(() => chunkSizes(asBytes(8), asBytes(0)), /positive/);
});

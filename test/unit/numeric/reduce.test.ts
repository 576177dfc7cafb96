import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reduceNumerically } from '../../../src/engine/numeric/reduce';
import { sequentialReference } from '../../../src/engine/numeric/reference';
import { NumericOptionError } from '../../../src/engine/numeric/plan';
import { btree, dtree } from '../../../src/engine/numeric/schedule';
import type { Algorithm, ReduceOp } from '../../../src/engine/collective-types';

function assertBitEqual(actual: Float64Array, expected: Float64Array, label: string): void {
  assert.equal(actual.length, expected.length);
  for (let e = 0; e < expected.length; e++)
    assert.ok(Object.is(actual[e], expected[e]), `${label}: element ${e}: ${actual[e]} vs ${expected[e]}`);
}

const SHAPES: { ranks: number; gpusPerNode: number }[] = [
  { ranks: 2, gpusPerNode: 2 },
  { ranks: 3, gpusPerNode: 3 },
  { ranks: 8, gpusPerNode: 8 },
  { ranks: 16, gpusPerNode: 4 },
  { ranks: 24, gpusPerNode: 8 },
  { ranks: 64, gpusPerNode: 8 },
];

for (const algorithm of [
  'ring',
  'tree',
  'collnetdirect',
  'collnetchain',
  'nvls',
  'nvlstree',
  'hierarchical',
  'direct',
] as Algorithm[]) {
  test(`fp32 sum and avg with ${algorithm} equal the sequential reference in its order, bit for bit`, () => {
    for (const shape of SHAPES) {
      for (const op of ['sum', 'avg'] as ReduceOp[]) {
        const options = { ...shape, dtype: 'fp32' as const, op, elements: 517, seed: shape.ranks };
        const result = reduceNumerically({ ...options, algorithm });
        for (const rank of new Set([0, 1, shape.ranks - 1])) {
          assertBitEqual(
            result.outputs[rank],
            sequentialReference(algorithm, options, rank),
            `${algorithm} ${op} N=${shape.ranks} rank ${rank}`,
          );
        }
        assert.equal(result.wrong, 0);
        assert.equal(result.overflow, null);
        assert.equal(result.allRanksIdentical, algorithm !== 'direct' || shape.ranks <= 2);
      }
    }
  });
}

test('the order of operations matters in fp32, so the bit-for-bit test can fail', () => {
  const options = { ranks: 8, dtype: 'fp32' as const, op: 'sum' as const, elements: 256, seed: 3 };
  const ring = reduceNumerically({ ...options, algorithm: 'ring' }).outputs[0];
  const rankOrder = sequentialReference('nvls', options); // rank order, float32 accumulation
  const tree = sequentialReference('tree', options);
  const differing = (a: Float64Array, b: Float64Array) => a.filter((x, e) => x !== b[e]).length;
  assert.ok(differing(ring, rankOrder) > 10, 'ring order differs from rank order');
  assert.ok(differing(tree, rankOrder) > 10, 'tree order differs from rank order');
});

test('fp16 sum over 512 ranks overflows; the pre-divided sum and NCCL avg do not', () => {
  const base = {
    algorithm: 'ring' as const,
    ranks: 512,
    dtype: 'fp16' as const,
    elements: 2048,
    seed: 1,
    magnitude: 100,
  };
  const sum = reduceNumerically({ ...base, op: 'sum' });
  assert.ok(sum.overflow !== null && sum.overflow.count > 0, 'sum overflows');
  assert.equal(sum.overflow.inInputs, 0);
  assert.ok(sum.wrong >= sum.overflow.count, 'every overflowed element is wrong');
  assert.ok(sum.maxSummedMagnitude > 65504);
  const predivided = reduceNumerically({ ...base, op: 'premulsum', scalar: 1 / 512 });
  assert.equal(predivided.overflow, null);
  assert.equal(predivided.wrong, 0);
  const avg = reduceNumerically({ ...base, op: 'avg' });
  assert.equal(avg.overflow, null); // ncclAvg pre-multiplies every input by 1/N for floating types
  assert.equal(avg.wrong, 0);
  assert.ok(avg.maxAbsError < 2, `avg error ${avg.maxAbsError}`);
});

test('bf16 does not overflow where fp16 does', () => {
  for (const algorithm of ['ring', 'tree'] as Algorithm[]) {
    const base = { algorithm, ranks: 512, elements: 1024, seed: 5, op: 'sum' as const };
    assert.ok(reduceNumerically({ ...base, dtype: 'fp16' }).overflow !== null);
    const bf16 = reduceNumerically({ ...base, dtype: 'bf16' });
    assert.equal(bf16.overflow, null);
    assert.equal(bf16.wrong, 0);
  }
});

test('small gradients do not trip the overflow check', () => {
  const result = reduceNumerically({
    algorithm: 'ring',
    ranks: 512,
    dtype: 'fp16',
    op: 'sum',
    elements: 1024,
    seed: 2,
    magnitude: 1e-2,
  });
  assert.equal(result.overflow, null);
  assert.equal(result.wrong, 0);
});

test('an intermediate ring sum overflows fp16 even though the exact result fits; the switch accumulates in fp32', () => {
  // One element, three ranks: it falls in chunk 2, which the ring accumulates as rank 0, then 1, then 2.
  const data = [[60000], [60000], [-60000]];
  const ring = reduceNumerically({ algorithm: 'ring', ranks: 3, dtype: 'fp16', op: 'sum', data });
  assert.deepEqual(ring.overflow, { count: 1, firstIndex: 0, inInputs: 0 });
  assert.equal(ring.outputs[0][0], Infinity);
  assert.equal(ring.wrong, 1);
  const nvls = reduceNumerically({ algorithm: 'nvls', ranks: 3, dtype: 'fp16', op: 'sum', data });
  assert.equal(nvls.overflow, null);
  assert.equal(nvls.outputs[2][0], 60000);
});

test('fp8 e4m3 reductions saturate at 448 and the overflow is still reported', () => {
  const result = reduceNumerically({
    algorithm: 'ring',
    ranks: 2,
    dtype: 'fp8e4m3',
    op: 'sum',
    data: [
      [300, 1],
      [300, 2],
    ],
  });
  assert.equal(result.outputs[0][0], 448);
  assert.equal(result.outputs[1][1], 3);
  assert.deepEqual(result.overflow, { count: 1, firstIndex: 0, inInputs: 0 });
  assert.equal(result.wrong, 1);
});

test('inputs that do not fit the dtype are reported as input overflow', () => {
  const result = reduceNumerically({
    algorithm: 'tree',
    ranks: 2,
    dtype: 'fp16',
    op: 'sum',
    data: [
      [1, 1e6],
      [1, 1],
    ],
  });
  assert.deepEqual(result.overflow, { count: 1, firstIndex: 1, inInputs: 1 });
});

test('gradients beyond float32 itself are input overflow in every dtype, never "overflow none"', () => {
  // The synthetic gradients are float32 values: past 3.4e38 they are infinite before any dtype sees them.
  for (const dtype of ['fp32', 'bf16', 'fp16', 'fp8e5m2'] as const) {
    for (const magnitude of [1e300, Number.MAX_VALUE]) {
      const result = reduceNumerically({ algorithm: 'ring', ranks: 4, dtype, op: 'sum', elements: 64, magnitude });
      assert.deepEqual(result.overflow, { count: 64, firstIndex: 0, inInputs: 64 }, `${dtype} at ${magnitude}`);
      assert.equal(result.wrong, 64);
    }
    // Just past float32, most elements are infinite on some rank; the rest may fit, but overflow is reported.
    const edge = reduceNumerically({ algorithm: 'ring', ranks: 4, dtype, op: 'sum', elements: 64, magnitude: 1e39 });
    assert.ok(edge.overflow && edge.overflow.inInputs > 32, `${dtype} at 1e39: ${JSON.stringify(edge.overflow)}`);
  }
  const data = [
    [Number.NaN, Infinity],
    [1, 1],
  ];
  assert.deepEqual(reduceNumerically({ algorithm: 'ring', ranks: 2, dtype: 'fp32', op: 'sum', data }).overflow, {
    count: 1,
    firstIndex: 1,
    inInputs: 1,
  });
});

test('NCCL double binary tree: ncclGetBtree links and a mirrored second tree', () => {
  assert.deepEqual(btree(8, 0), { up: -1, down: [4] });
  assert.deepEqual(btree(8, 4), { up: 0, down: [2, 6] });
  assert.deepEqual(btree(8, 6), { up: 4, down: [5, 7] });
  assert.deepEqual(btree(8, 7), { up: 6, down: [] });
  assert.deepEqual(dtree(8, 7, 1), { up: -1, down: [3] });
  for (const n of [1, 2, 5, 8, 13, 64]) {
    for (const tree of [0, 1] as const) {
      let roots = 0;
      for (let r = 0; r < n; r++) {
        const links = dtree(n, r, tree);
        if (links.up === -1) roots += 1;
        for (const child of links.down) assert.equal(dtree(n, child, tree).up, r);
      }
      assert.equal(roots, 1);
    }
  }
});

test('bad options get a clear error', () => {
  assert.throws(
    () => reduceNumerically({ algorithm: 'ring', ranks: 0, dtype: 'fp16', op: 'sum', elements: 4 }),
    NumericOptionError,
  );
  assert.throws(
    () => reduceNumerically({ algorithm: 'tree', ranks: 12, gpusPerNode: 8, dtype: 'fp16', op: 'sum', elements: 4 }),
    /multiple of gpusPerNode/,
  );
  assert.throws(
    () => reduceNumerically({ algorithm: 'ring', ranks: 2, dtype: 'fp16', op: 'sum', data: [[1, 2], [1]] }),
    /rank 1 has 1 elements/,
  );
  assert.throws(
    () => reduceNumerically({ algorithm: 'ring', ranks: 2, dtype: 'fp16', op: 'sum' }),
    /elements is required/,
  );
  assert.throws(
    () => reduceNumerically({ algorithm: 'ring', ranks: 2, dtype: 'fp64' as never, op: 'sum', elements: 2 }),
    /unknown dtype/,
  );
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runScalingCheck } from '../../../src/engine/scaling-check';
import { confirmFinding, CONFIRMABLE_CODES } from '../../../src/engine/scaling/confirm';
import { NumericOptionError } from '../../../src/engine/numeric/plan';

function assertClose(actual: number, expected: number, relative: number, label: string): void {
  assert.ok(
    Math.abs(actual - expected) <= relative * expected,
    `${label}: ${actual} is not within ${relative * 100}% of ${expected}`,
  );
}

/** "Diverges or departs": the loss curve leaves the reference by far more than rounding could explain. */
function departs(result: ReturnType<typeof runScalingCheck>): boolean {
  return result.diverged || result.maxLossGap > 0.5;
}

for (const ranks of [2, 8, 64]) {
  test(`scaling check on ${ranks} ranks: sum is ${ranks}×, avg is 1×, linear-scaled LR with sum is ${ranks * ranks}×`, () => {
    const sum = runScalingCheck({ ranks, reduceOp: 'sum', lrRule: 'fixed', seed: 3 });
    assertClose(sum.lrMultiplier, ranks, 0.01, 'sum');
    assert.ok(departs(sum), `sum departs (gap ${sum.maxLossGap})`);
    assert.equal(sum.matchesReference, false);

    const avg = runScalingCheck({ ranks, reduceOp: 'avg', lrRule: 'fixed', seed: 3 });
    assertClose(avg.lrMultiplier, 1, 0.01, 'avg');
    assert.equal(avg.matchesReference, true);
    assert.equal(avg.diverged, false);
    assert.ok(avg.maxLossGap < 1e-3);
    assert.equal(avg.lossCurve.dataParallel.length, avg.steps + 1);
    assert.equal(avg.lossCurve.reference.length, avg.steps + 1);
    assert.ok(avg.lossCurve.reference[avg.steps] < avg.lossCurve.reference[0] / 10, 'the reference trains');

    const linear = runScalingCheck({ ranks, reduceOp: 'sum', lrRule: 'linear-scaled', seed: 3 });
    assertClose(linear.lrMultiplier, ranks * ranks, 0.01, 'linear-scaled sum');
    assertClose(linear.excessMultiplier, ranks, 0.01, 'linear-scaled sum over its intent');
    assert.ok(departs(linear));

    const twice = runScalingCheck({ ranks, reduceOp: 'avg-then-divide', lrRule: 'fixed', seed: 3 });
    assertClose(twice.lrMultiplier, 1 / ranks, 0.01, 'averaged twice');
    assert.ok(departs(twice));

    for (const reduceOp of ['sum-then-divide', 'premul-sum'] as const) {
      const correct = runScalingCheck({ ranks, reduceOp, lrRule: 'fixed', seed: 3 });
      assertClose(correct.lrMultiplier, 1, 0.01, reduceOp);
      assert.equal(correct.matchesReference, true, reduceOp);
    }
  });
}

test('the multiplier holds when gradients are reduced in fp16 and bf16', () => {
  for (const dtype of ['fp16', 'bf16'] as const) {
    for (const ranks of [2, 8, 64]) {
      assertClose(
        runScalingCheck({ ranks, reduceOp: 'sum', lrRule: 'fixed', dtype }).lrMultiplier,
        ranks,
        0.01,
        `${dtype} sum N=${ranks}`,
      );
      const avg = runScalingCheck({ ranks, reduceOp: 'avg', lrRule: 'fixed', dtype });
      assertClose(avg.lrMultiplier, 1, 0.01, `${dtype} avg N=${ranks}`);
      assert.equal(avg.matchesReference, true, `${dtype} avg N=${ranks} matches`);
    }
  }
});

test('a wrong divisor gives N/divisor, and sqrt scaling is measured as √N', () => {
  assertClose(
    runScalingCheck({ ranks: 64, reduceOp: 'sum-then-divide', divisor: 8, lrRule: 'fixed' }).lrMultiplier,
    8,
    0.01,
    'divided by 8 on 64 ranks',
  );
  const sqrt = runScalingCheck({ ranks: 16, reduceOp: 'avg', lrRule: 'sqrt' });
  assertClose(sqrt.lrMultiplier, 4, 0.01, 'sqrt-scaled avg');
  assert.equal(sqrt.matchesReference, true);
});

test('fp16 overflow of the sum before division depends on world size and gradient magnitude', () => {
  const small = runScalingCheck({ ranks: 8, reduceOp: 'sum-then-divide', lrRule: 'fixed', gradientMagnitude: 2000 });
  assert.equal(small.fp16Overflow.wouldOverflow, false);
  assert.ok(small.fp16Overflow.maxSummedMagnitude < 65504);
  const large = runScalingCheck({ ranks: 64, reduceOp: 'sum-then-divide', lrRule: 'fixed', gradientMagnitude: 2000 });
  assert.equal(large.fp16Overflow.wouldOverflow, true);
  assert.ok(large.fp16Overflow.maxSummedMagnitude > 65504);
  assert.equal(large.fp16Overflow.configuredOpOverflows, true); // it sums before it divides
  const averaged = runScalingCheck({ ranks: 64, reduceOp: 'avg', lrRule: 'fixed', gradientMagnitude: 2000 });
  assert.equal(averaged.fp16Overflow.wouldOverflow, true);
  assert.equal(averaged.fp16Overflow.configuredOpOverflows, false); // ncclAvg pre-multiplies by 1/N
});

test('a bare fp16 sum that blows up during training is reported as an overflow', () => {
  const result = runScalingCheck({ ranks: 64, reduceOp: 'sum', lrRule: 'fixed', dtype: 'fp16' });
  assert.equal(result.diverged, true);
  assert.equal(result.overflowedDuringTraining, true);
  assert.equal(
    runScalingCheck({ ranks: 64, reduceOp: 'avg', lrRule: 'fixed', dtype: 'fp16' }).overflowedDuringTraining,
    false,
  );
});

for (const ranks of [2, 8, 64]) {
  test(`confirmFinding on ${ranks} ranks measures N, 1/N and N²`, () => {
    assertClose(confirmFinding('CP001', ranks)!.multiplier, ranks, 0.01, 'CP001');
    assertClose(confirmFinding('CP002', ranks)!.multiplier, 1 / ranks, 0.01, 'CP002');
    assertClose(confirmFinding('CP005', ranks)!.multiplier, ranks * ranks, 0.01, 'CP005');
    assertClose(confirmFinding('CP004', ranks)!.multiplier, ranks, 0.01, 'CP004');
  });
}

test('confirmFinding explains itself and skips rules that are not a multiplier', () => {
  const finding = confirmFinding('cp001', 8)!;
  assert.equal(finding.code, 'CP001');
  assert.match(finding.summary, /8× the configured one/);
  assert.match(confirmFinding('CP002', 8)!.summary, /1\/8× the configured one/);
  assertClose(confirmFinding('CP003', 64, { divisor: 8 })!.multiplier, 8, 0.01, 'CP003');
  assert.equal(confirmFinding('CP006', 8), undefined);
  assert.equal(confirmFinding('CP007', 8), undefined);
  assert.deepEqual([...CONFIRMABLE_CODES].sort(), ['CP001', 'CP002', 'CP003', 'CP004', 'CP005']);
});

test('bad scaling-check options get a clear error', () => {
  assert.throws(() => runScalingCheck({ ranks: 0, reduceOp: 'sum', lrRule: 'fixed' }), NumericOptionError);
  assert.throws(
    () => runScalingCheck({ ranks: 4, reduceOp: 'mean' as never, lrRule: 'fixed' }),
    /unknown reduceOp 'mean'/,
  );
  assert.throws(() => runScalingCheck({ ranks: 4, reduceOp: 'sum', lrRule: 'fixed', baseLr: -1 }), /baseLr/);
});

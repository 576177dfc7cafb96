import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeDtype, encodeDtype, FORMATS, roundToDtype, roundToFormat } from '../../../src/engine/numeric/formats';
import { DtypeArithmetic, premulScalar, roundThroughFloat32 } from '../../../src/engine/numeric/arithmetic';
import { seededRandom } from '../../../src/engine/numeric/synthetic';
import type { Dtype } from '../../../src/engine/collective-types';

test('fp16 known bit patterns', () => {
  assert.equal(encodeDtype(65504, 'fp16'), 0x7bff);
  assert.equal(roundToDtype(65519.99, 'fp16'), 65504);
  assert.equal(roundToDtype(65520, 'fp16'), Infinity); // the midpoint to 2^16 ties to the even pattern, infinity
  assert.equal(encodeDtype(65520, 'fp16'), 0x7c00);
  assert.equal(roundToDtype(65520, 'fp16', 'saturate'), 65504);
  assert.equal(encodeDtype(-2, 'fp16'), 0xc000);
  assert.equal(encodeDtype(1, 'fp16'), 0x3c00);
  assert.equal(encodeDtype(1 + 2 ** -11, 'fp16'), 0x3c00); // tie, mantissa 0 is even
  assert.equal(encodeDtype(1 + 3 * 2 ** -11, 'fp16'), 0x3c02); // tie, rounds up to the even mantissa 2
  assert.equal(encodeDtype(2 ** -24, 'fp16'), 0x0001); // smallest subnormal
  assert.equal(roundToDtype(2 ** -25, 'fp16'), 0); // half of it ties to zero
  assert.equal(roundToDtype(2 ** -25 * 1.0001, 'fp16'), 2 ** -24);
  assert.equal(encodeDtype(NaN, 'fp16'), 0x7e00);
  assert.ok(Object.is(roundToDtype(-1e-10, 'fp16'), -0));
  assert.equal(decodeDtype(0x3555, 'fp16'), 0.333251953125);
});

test('bf16 known bit patterns', () => {
  assert.equal(encodeDtype(1 + 2 ** -8, 'bf16'), 0x3f80); // tie to even: 1
  assert.equal(encodeDtype(1 + 3 * 2 ** -8, 'bf16'), 0x3f82);
  assert.equal(encodeDtype(1 / 3, 'bf16'), 0x3eab);
  assert.equal(decodeDtype(0x7f7f, 'bf16'), FORMATS.bf16.maxFinite);
  assert.equal(roundToDtype(65520, 'bf16'), 65536); // fine in bf16, where fp16 overflows
  assert.equal(roundToDtype(3.4e38, 'bf16'), Infinity);
});

test('fp8 e4m3 and e5m2 known bit patterns and overflow modes', () => {
  assert.equal(encodeDtype(448, 'fp8e4m3'), 0x7e);
  assert.equal(roundToDtype(464, 'fp8e4m3'), 448); // tie between 448 and the NaN code: even wins
  assert.ok(Number.isNaN(roundToDtype(465, 'fp8e4m3'))); // OCP e4m3 has no infinity: overflow is NaN
  assert.equal(roundToDtype(465, 'fp8e4m3', 'saturate'), 448);
  assert.equal(encodeDtype(-448, 'fp8e4m3'), 0xfe);
  assert.equal(encodeDtype(2 ** -9, 'fp8e4m3'), 0x01);
  assert.ok(Number.isNaN(decodeDtype(0x7f, 'fp8e4m3')));
  assert.equal(decodeDtype(0x78, 'fp8e4m3'), 256); // exponent field 15 is a normal binade in e4m3
  assert.equal(encodeDtype(57344, 'fp8e5m2'), 0x7b);
  assert.equal(roundToDtype(61439, 'fp8e5m2'), 57344);
  assert.equal(roundToDtype(61440, 'fp8e5m2'), Infinity);
  assert.equal(decodeDtype(0x7c, 'fp8e5m2'), Infinity);
});

for (const dtype of ['fp16', 'bf16', 'fp8e4m3', 'fp8e5m2'] as Dtype[]) {
  test(`${dtype}: every pattern round-trips and every midpoint ties to even`, () => {
    const fmt = FORMATS[dtype];
    const patterns = 2 ** (1 + fmt.exponentBits + fmt.mantissaBits);
    const half = patterns / 2;
    for (let bits = 0; bits < patterns; bits++) {
      const value = decodeDtype(bits, dtype);
      if (Number.isNaN(value)) continue;
      assert.equal(encodeDtype(value, dtype), bits, `pattern ${bits.toString(16)}`);
      assert.ok(Object.is(roundToDtype(value, dtype), value));
    }
    // Consecutive positive finite values: the midpoint goes to the one with the even mantissa, just off it to the nearer.
    for (let bits = 0; bits + 1 < half; bits++) {
      const low = decodeDtype(bits, dtype);
      const high = decodeDtype(bits + 1, dtype);
      if (!Number.isFinite(high) || Number.isNaN(high)) break;
      const mid = (low + high) / 2;
      assert.equal(roundToDtype(mid, dtype), bits % 2 === 0 ? low : high, `midpoint after ${bits.toString(16)}`);
      assert.equal(
        roundToFormat(mid, fmt),
        bits % 2 === 0 ? low : high,
        `generic path, midpoint after ${bits.toString(16)}`,
      );
      assert.equal(roundToFormat(mid + (high - low) / 1024, fmt), high);
      assert.equal(roundToDtype(mid + (high - low) / 1024, dtype), high);
      assert.equal(roundToDtype(mid - (high - low) / 1024, dtype), low);
    }
  });
}

test('the generic rounding agrees with Math.fround on float32, subnormals and overflow included', () => {
  const random = seededRandom(42);
  for (let i = 0; i < 100_000; i++) {
    const x = (random() - 0.5) * 10 ** (random() * 90 - 47);
    assert.ok(Object.is(roundToFormat(x, FORMATS.fp32), Math.fround(x)), `x = ${x}`);
  }
});

test('the fast float32-bit rounding equals the generic single rounding for sums and products of format values', () => {
  for (const dtype of ['fp8e4m3', 'fp8e5m2'] as Dtype[]) {
    for (let a = 0; a < 256; a++) {
      for (let b = 0; b < 256; b++) {
        const x = decodeDtype(a, dtype);
        const y = decodeDtype(b, dtype);
        for (const exact of [x + y, x * y]) {
          const fast = roundThroughFloat32(exact, FORMATS[dtype]);
          const slow = roundToFormat(exact, FORMATS[dtype]);
          assert.ok(Object.is(fast, slow) || (Number.isNaN(fast) && Number.isNaN(slow)), `${dtype} ${x} ${y}`);
        }
      }
    }
  }
  const random = seededRandom(7);
  for (const dtype of ['fp16', 'bf16'] as Dtype[]) {
    for (let i = 0; i < 200_000; i++) {
      const x = decodeDtype(Math.floor(random() * 65536), dtype);
      const y = decodeDtype(Math.floor(random() * 65536), dtype);
      for (const exact of [x + y, x * y]) {
        const fast = roundThroughFloat32(exact, FORMATS[dtype]);
        const slow = roundToFormat(exact, FORMATS[dtype]);
        assert.ok(Object.is(fast, slow) || (Number.isNaN(fast) && Number.isNaN(slow)), `${dtype} ${x} ${y}`);
      }
    }
  }
});

test('dtype arithmetic flags overflow instead of returning inf silently', () => {
  const fp16 = new DtypeArithmetic('fp16');
  assert.equal(fp16.add(65504, 8), 65504); // below the midpoint: rounds back, no overflow
  assert.equal(fp16.overflowed, false);
  assert.equal(fp16.add(65504, 16), Infinity);
  assert.equal(fp16.overflowed, true);
  const e4m3 = new DtypeArithmetic('fp8e4m3');
  assert.equal(e4m3.add(448, 32), 448); // CUDA's __NV_SATFINITE conversion saturates...
  assert.equal(e4m3.overflowed, true); // ...and the emulation still reports it
  const bf16 = new DtypeArithmetic('bf16');
  assert.equal(bf16.add(65504, 16), 65536);
  assert.equal(bf16.overflowed, false);
});

test('ncclAvg scalars are 1/N rounded through float, as NCCL computes them', () => {
  assert.equal(premulScalar('avg', 'fp16', 512), 2 ** -9);
  assert.equal(premulScalar('avg', 'fp16', 3), 0.333251953125); // __float2half(float(1.0/3))
  assert.equal(premulScalar('avg', 'fp32', 3), Math.fround(1 / 3));
  assert.equal(premulScalar('avg', 'bf16', 3), decodeDtype(0x3eab, 'bf16'));
  assert.equal(premulScalar('sum', 'fp16', 3), 1);
  assert.equal(premulScalar('premulsum', 'fp16', 8, 0.1), roundToDtype(0.1, 'fp16'));
});

// Floating-point formats that collectives reduce in, and correctly rounded conversion into them.
//
// Rounding is done once, from the float64 value, with round-to-nearest-even. Rounding through float32 first
// (Math.fround, then to fp16) would round twice and get some ties wrong for arbitrary float64 inputs, so the
// value path scales by a power of two, rounds the integer significand, and scales back; every step is exact.
// The bit-pattern path (encode/decode) repacks the float32 bits of an already rounded value through a
// Float32Array/Uint32Array view of one element, which is independent of the platform's byte order.
import type { Dtype } from '../collective-types';

/** What a conversion does with a finite value beyond the format's largest finite value. */
export type OverflowMode = 'ieee' | 'saturate';

export interface FloatFormat {
  readonly dtype: Dtype;
  readonly exponentBits: number;
  /** Stored mantissa bits (the significand has one more, implicit, bit). */
  readonly mantissaBits: number;
  readonly bias: number;
  /** Exponent of the smallest normal number; subnormals share its ulp. */
  readonly minExponent: number;
  readonly maxFinite: number;
  /** Unit roundoff u = 2^-(mantissaBits + 1): the largest relative error of one rounding. */
  readonly unitRoundoff: number;
  /**
   * What an overflow becomes under `ieee` rounding: infinity for the IEEE-like formats, NaN for fp8 e4m3,
   * which has no infinity (OCP 8-bit floating point spec, "E4M3": S.1111.111 is NaN).
   */
  readonly overflowValue: number;
}

function format(
  dtype: Dtype,
  exponentBits: number,
  mantissaBits: number,
  maxFinite: number,
  overflowValue: number,
): FloatFormat {
  const bias = 2 ** (exponentBits - 1) - 1;
  return {
    dtype,
    exponentBits,
    mantissaBits,
    bias,
    minExponent: 1 - bias,
    maxFinite,
    unitRoundoff: 2 ** -(mantissaBits + 1),
    overflowValue,
  };
}

export const FORMATS: Readonly<Record<Dtype, FloatFormat>> = {
  fp32: format('fp32', 8, 23, (2 - 2 ** -23) * 2 ** 127, Infinity),
  fp16: format('fp16', 5, 10, 65504, Infinity),
  bf16: format('bf16', 8, 7, (2 - 2 ** -7) * 2 ** 127, Infinity),
  // e4m3 keeps the top exponent for normal numbers; only mantissa 111 there is NaN, so the largest is 1.75 × 2^8.
  fp8e4m3: format('fp8e4m3', 4, 3, 448, NaN),
  fp8e5m2: format('fp8e5m2', 5, 2, 57344, Infinity),
};

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** Exact powers of two 2^-200 … 2^200, indexed by exponent + 200, so the hot path avoids Math.pow. */
const POWERS_OF_TWO = Float64Array.from({ length: 401 }, (_, i) => 2 ** (i - 200));
function pow2(exponent: number): number {
  return exponent >= -200 && exponent <= 200 ? POWERS_OF_TWO[exponent + 200] : 2 ** exponent;
}

/** The exponent e with 2^e ≤ |x| < 2^(e+1), for finite non-zero x. */
function binaryExponent(magnitude: number): number {
  // Float32's exponent field is right unless rounding to float32 carried into the next power of two.
  f32[0] = magnitude;
  const biased = (u32[0] >>> 23) & 0xff;
  let e = biased === 0 || biased === 0xff ? Math.floor(Math.log2(magnitude)) : biased - 127;
  // log2 can be off by one next to powers of two, and the float32 carry by one; correct either with exact powers.
  if (pow2(e) > magnitude) e -= 1;
  else if (pow2(e + 1) <= magnitude) e += 1;
  return e;
}

/**
 * Fast rounding of the result of one operation on values of `fmt` (or of float32 values) into `fmt`, through the
 * float32 bits. The float32 step is itself a rounding, but an innocuous one: float32 has 24 ≥ 2p + 2 significand
 * bits for every p here, so an operation's result rounded to float32 and then to `fmt` equals the result rounded
 * once. (For arbitrary float64 inputs that is not true; `roundToDtype` handles those.) The normal range rounds the
 * low 23 − m mantissa bits to nearest even with the usual add-and-mask trick; a carry moves into the exponent as it
 * should. The subnormal range uses exact arithmetic on the value.
 */
export function roundThroughFloat32(exact: number, fmt: FloatFormat): number {
  f32[0] = exact;
  const bits = u32[0];
  const magnitudeBits = bits & 0x7fffffff;
  if (magnitudeBits >= 0x7f800000) return f32[0]; // inf or NaN, from inputs that already were
  const negative = bits >>> 31 === 1;
  let magnitude: number;
  if (magnitudeBits < (fmt.minExponent + 127) << 23) {
    const ulp = 2 ** (fmt.minExponent - fmt.mantissaBits);
    const scaled = Math.abs(f32[0]) / ulp;
    let integer = Math.floor(scaled);
    const fraction = scaled - integer;
    if (fraction > 0.5 || (fraction === 0.5 && integer % 2 === 1)) integer += 1;
    magnitude = integer * ulp;
  } else {
    const shift = 23 - fmt.mantissaBits;
    const half = (1 << (shift - 1)) - 1;
    u32[0] = ((magnitudeBits + half + ((magnitudeBits >>> shift) & 1)) >>> shift) << shift;
    magnitude = f32[0];
  }
  if (magnitude > fmt.maxFinite) return negative ? -fmt.overflowValue : fmt.overflowValue;
  return negative ? -magnitude : magnitude;
}

/** Rounds a non-negative finite value to the format's grid, ignoring the overflow limit. */
function roundMagnitude(magnitude: number, fmt: FloatFormat): number {
  if (magnitude === 0) return 0;
  const exponent = Math.max(binaryExponent(magnitude), fmt.minExponent);
  const ulp = pow2(exponent - fmt.mantissaBits);
  const scaled = magnitude / ulp; // exact: a power-of-two scaling of a double well inside its range
  let integer = Math.floor(scaled);
  const fraction = scaled - integer; // exact: both operands share the exponent range below 2^(mantissaBits+1)
  if (fraction > 0.5 || (fraction === 0.5 && integer % 2 === 1)) integer += 1;
  return integer * ulp;
}

/**
 * Rounds x to the nearest value of `dtype` (ties to even). A finite x that rounds beyond the largest finite value
 * becomes the format's overflow value (`ieee`: ±inf, or NaN for e4m3) or the largest finite value (`saturate`,
 * as CUDA's __NV_SATFINITE conversions do). Infinities and NaN pass through.
 */
export function roundToDtype(x: number, dtype: Dtype, mode: OverflowMode = 'ieee'): number {
  if (dtype === 'fp32') {
    const rounded = Math.fround(x);
    if (mode === 'saturate' && !Number.isFinite(rounded) && Number.isFinite(x))
      return Math.sign(x) * FORMATS.fp32.maxFinite;
    return rounded;
  }
  const fmt = FORMATS[dtype];
  if (Math.fround(x) === x) {
    // A float32 value needs no first rounding, so the fast bit-level path is exact.
    const rounded = roundThroughFloat32(x, fmt);
    if (mode === 'saturate' && Number.isFinite(x) && !Number.isFinite(rounded))
      return x < 0 ? -fmt.maxFinite : fmt.maxFinite;
    return rounded;
  }
  return roundToFormat(x, fmt, mode);
}

/** Rounds x into any binary format; float32 goes through Math.fround in `roundToDtype`, this is the generic path. */
export function roundToFormat(x: number, fmt: FloatFormat, mode: OverflowMode = 'ieee'): number {
  if (!Number.isFinite(x)) return x;
  const magnitude = roundMagnitude(Math.abs(x), fmt);
  const sign = x < 0 || Object.is(x, -0) ? -1 : 1;
  if (magnitude > fmt.maxFinite) return mode === 'saturate' ? sign * fmt.maxFinite : sign * fmt.overflowValue;
  return sign * magnitude;
}

/** True when a finite x lies beyond what `dtype` can hold after rounding (so the conversion overflows). */
export function overflowsDtype(x: number, dtype: Dtype): boolean {
  if (!Number.isFinite(x)) return false;
  return roundMagnitude(Math.abs(x), FORMATS[dtype]) > FORMATS[dtype].maxFinite;
}

/** The raw bits of `dtype`'s representation of x (rounded first), as an unsigned integer. */
export function encodeDtype(x: number, dtype: Dtype, mode: OverflowMode = 'ieee'): number {
  const fmt = FORMATS[dtype];
  const value = roundToDtype(x, dtype, mode);
  const totalBits = 1 + fmt.exponentBits + fmt.mantissaBits;
  const topExponent = 2 ** fmt.exponentBits - 1;
  const signBit = value < 0 || Object.is(value, -0) ? 2 ** (totalBits - 1) : 0;
  if (Number.isNaN(value)) {
    // The canonical quiet NaN; for e4m3 the only NaN payload is all ones.
    return dtype === 'fp8e4m3' ? 0x7f : topExponent * 2 ** fmt.mantissaBits + 2 ** (fmt.mantissaBits - 1);
  }
  if (!Number.isFinite(value)) return signBit + topExponent * 2 ** fmt.mantissaBits;
  f32[0] = value; // exact: every format here is a subset of float32
  const bits = u32[0];
  if (dtype === 'fp32') return bits;
  const exponent32 = (bits >>> 23) & 0xff;
  const significand32 = bits & 0x7fffff;
  // Zero, or a float32 subnormal, which only bf16 (float32's exponent range) can hold: same low bits, shifted.
  if (exponent32 === 0) return signBit + (significand32 >>> (23 - fmt.mantissaBits));
  const exponent = exponent32 - 127;
  if (exponent < fmt.minExponent) {
    // A subnormal of the target: the full significand shifted right, exact because the value is on the grid.
    const shift = 23 - fmt.mantissaBits + (fmt.minExponent - exponent);
    return signBit + ((significand32 | 0x800000) >>> shift);
  }
  return signBit + (exponent + fmt.bias) * 2 ** fmt.mantissaBits + (significand32 >>> (23 - fmt.mantissaBits));
}

/** The value that `dtype`'s bit pattern `bits` stands for. */
export function decodeDtype(bits: number, dtype: Dtype): number {
  const fmt = FORMATS[dtype];
  const totalBits = 1 + fmt.exponentBits + fmt.mantissaBits;
  if (dtype === 'fp32') {
    u32[0] = bits >>> 0;
    return f32[0];
  }
  const sign = bits >= 2 ** (totalBits - 1) ? -1 : 1;
  const exponentField = Math.floor(bits / 2 ** fmt.mantissaBits) % 2 ** fmt.exponentBits;
  const mantissa = bits % 2 ** fmt.mantissaBits;
  const topExponent = 2 ** fmt.exponentBits - 1;
  if (dtype === 'fp8e4m3') {
    if (exponentField === topExponent && mantissa === 2 ** fmt.mantissaBits - 1) return NaN;
  } else if (exponentField === topExponent) {
    return mantissa === 0 ? sign * Infinity : NaN;
  }
  if (exponentField === 0) return sign * mantissa * 2 ** (fmt.minExponent - fmt.mantissaBits);
  return sign * (1 + mantissa / 2 ** fmt.mantissaBits) * 2 ** (exponentField - fmt.bias);
}

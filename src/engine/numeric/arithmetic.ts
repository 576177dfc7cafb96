// Arithmetic "in a dtype": each operation is computed exactly enough in float64 and rounded once to the dtype.
//
// A float64 sum or product of two values of a format with p significand bits, rounded once to that format, equals
// the format's correctly rounded operation whenever 53 ≥ 2p + 2 (the double-rounding theorem), which holds for every
// format here including float32. This is what GPUs compute: NCCL reduces fp16/bf16 in the native dtype (__hadd,
// one rounding per addition), float32 in float32, and fp8 by converting to half, adding and converting back (the
// half step is also an innocuous double rounding, so the result is the correctly rounded fp8 sum).
import type { Dtype, ReduceOp } from '../collective-types';
import { FORMATS, roundThroughFloat32, roundToDtype, type FloatFormat } from './formats';

export { roundThroughFloat32 };

/**
 * What happens when a reduction result overflows. fp16, bf16 and fp32 additions return ±inf, as IEEE hardware
 * does. NCCL's fp8 reductions convert back with CUDA's __nv_fp8_e4m3/__nv_fp8_e5m2 constructors, which use
 * __NV_SATFINITE, so they saturate silently to ±448 / ±57344; the emulation saturates too and still reports it.
 */
export const REDUCTION_OVERFLOW: Readonly<Record<Dtype, 'ieee' | 'saturate'>> = {
  fp32: 'ieee',
  fp16: 'ieee',
  bf16: 'ieee',
  fp8e4m3: 'saturate',
  fp8e5m2: 'saturate',
};

/** Rounding with an overflow flag, so overflow is reported rather than silently returned as inf. */
export class DtypeArithmetic {
  /** Set when a finite exact result did not fit the dtype; the caller reads and clears it. */
  overflowed = false;
  private readonly mode: 'ieee' | 'saturate';
  private readonly maxFinite: number;
  private readonly fmt: FloatFormat;

  constructor(readonly dtype: Dtype) {
    this.mode = REDUCTION_OVERFLOW[dtype];
    this.fmt = FORMATS[dtype];
    this.maxFinite = this.fmt.maxFinite;
  }

  round(exact: number): number {
    const rounded = this.dtype === 'fp32' ? Math.fround(exact) : roundThroughFloat32(exact, this.fmt);
    if (Number.isFinite(rounded) || !Number.isFinite(exact)) return rounded;
    this.overflowed = true;
    return this.mode === 'saturate' ? Math.sign(exact) * this.maxFinite : rounded;
  }

  add(a: number, b: number): number {
    return this.round(a + b);
  }

  mul(a: number, b: number): number {
    return this.round(a * b);
  }
}

/**
 * The scalar each input is multiplied by before the sum, as NCCL's device op sees it, or 1 when none is applied.
 *
 * NCCL implements ncclAvg for floating types as ncclDevPreMulSum (src/enqueue.cc, hostToDevRedOp): every rank
 * multiplies its own input by 1/nRanks as it loads it, then the products are summed; only integer types use
 * SumPostDiv (sum, then divide). The scalar is computed as float(1.0/nRanks) and, for half and bfloat16, converted
 * again with __float2half / __float2bfloat16, so it is rounded twice; this is reproduced here. A premul-sum scalar
 * is given by the user in the buffer's dtype (ncclRedOpCreatePreMulSum), so it is rounded once. For fp8 the scalar
 * is held in half precision (an assumption: an fp8 scalar could not even hold 1/1000).
 */
export function premulScalar(op: ReduceOp, dtype: Dtype, ranks: number, userScalar?: number): number {
  const scalarDtype: Dtype = dtype === 'fp8e4m3' || dtype === 'fp8e5m2' ? 'fp16' : dtype;
  if (op === 'sum') return 1;
  if (op === 'avg') return roundToDtype(Math.fround(1 / ranks), scalarDtype);
  return roundToDtype(userScalar ?? 1 / ranks, scalarDtype);
}

/** The exact scale the op means (1, 1/N or the user's scalar), for the float64 reference. */
export function exactScale(op: ReduceOp, ranks: number, userScalar?: number): number {
  if (op === 'sum') return 1;
  if (op === 'avg') return 1 / ranks;
  return userScalar ?? 1 / ranks;
}

// Validates the options of a numeric reduction and fixes everything the algorithms need: the inputs as the GPUs
// hold them (rounded to the dtype), the premul scalar, the node layout and the channel count.
import { ALGORITHMS, DTYPES, type Algorithm, type Dtype, type ReduceOp } from '../collective-types';
import { exactScale, premulScalar } from './arithmetic';
import { roundToDtype } from './formats';
import { syntheticGradients } from './synthetic';

export interface NumericReductionOptions {
  readonly algorithm: Algorithm;
  readonly ranks: number;
  /** GPUs per node for tree, nvlstree and hierarchical; must divide ranks. Default: the largest divisor ≤ 8. */
  readonly gpusPerNode?: number;
  /** Channels split the buffer; tree channels alternate between the two trees. Defaults: 2 for tree, else 1. */
  readonly channels?: number;
  readonly dtype: Dtype;
  readonly op: ReduceOp;
  /** Elements per rank; required without `data`. */
  readonly elements?: number;
  readonly seed?: number;
  /** RMS of the synthetic per-rank gradient elements (default 100, loss-scaled fp16 gradients). */
  readonly magnitude?: number;
  /** Share of each element's variance common to all ranks (default 0.5). */
  readonly correlation?: number;
  /** premulsum's scalar; defaults to 1/ranks (the pre-divided sum). */
  readonly scalar?: number;
  /** One buffer per rank, used instead of synthetic gradients. */
  readonly data?: readonly ArrayLike<number>[];
}

export interface ReductionPlan {
  readonly algorithm: Algorithm;
  readonly ranks: number;
  readonly gpusPerNode: number;
  readonly channels: number;
  readonly dtype: Dtype;
  readonly op: ReduceOp;
  readonly elements: number;
  /** The scalar each input is multiplied by in the dtype (1 for sum). */
  readonly scalar: number;
  /** The exact scale the op means, for the float64 reference. */
  readonly exactScale: number;
  /** Inputs rounded to the dtype, one buffer per rank. */
  readonly inputs: readonly Float64Array[];
  /** Elements whose input on some rank did not fit the dtype. */
  readonly inputOverflowAt: Uint8Array;
}

/** A bad option of a numeric reduction; the message names the option. */
export class NumericOptionError extends Error {}

/** PAT has no AllReduce: NCCL runs it for reduce-scatter and all-gather only. */
export const PAT_NOT_ALLREDUCE = 'PAT runs reduce-scatter and all-gather only; these numerics are AllReduce';

function positiveInteger(value: number | undefined, name: string): void {
  if (value !== undefined && (!Number.isInteger(value) || value < 1))
    throw new NumericOptionError(`${name} must be a positive integer, got ${value}`);
}

/** The largest node size up to 8 that divides the rank count, so any rank count has a valid layout. */
export function defaultGpusPerNode(ranks: number): number {
  let size = Math.min(ranks, 8);
  while (ranks % size !== 0) size -= 1;
  return size;
}

export function planReduction(options: NumericReductionOptions): ReductionPlan {
  const { algorithm, ranks, dtype, op } = options;
  if (!ALGORITHMS.includes(algorithm))
    throw new NumericOptionError(`unknown algorithm '${String(algorithm)}' (expected ${ALGORITHMS.join(', ')})`);
  if (algorithm === 'pat') throw new NumericOptionError(PAT_NOT_ALLREDUCE);
  if (!DTYPES.includes(dtype))
    throw new NumericOptionError(`unknown dtype '${String(dtype)}' (expected ${DTYPES.join(', ')})`);
  if (op !== 'sum' && op !== 'avg' && op !== 'premulsum')
    throw new NumericOptionError(`unknown op '${String(op)}' (expected sum, avg, premulsum)`);
  positiveInteger(ranks, 'ranks');
  positiveInteger(options.gpusPerNode, 'gpusPerNode');
  positiveInteger(options.channels, 'channels');
  positiveInteger(options.elements, 'elements');
  const gpusPerNode = options.gpusPerNode ?? defaultGpusPerNode(ranks);
  if (ranks % gpusPerNode !== 0)
    throw new NumericOptionError(`ranks (${ranks}) must be a multiple of gpusPerNode (${gpusPerNode})`);
  if (options.scalar !== undefined && !Number.isFinite(options.scalar))
    throw new NumericOptionError(`scalar must be finite, got ${options.scalar}`);
  if (options.magnitude !== undefined && !(options.magnitude >= 0 && Number.isFinite(options.magnitude)))
    throw new NumericOptionError(`magnitude must be a finite number ≥ 0, got ${options.magnitude}`);
  if (options.correlation !== undefined && !(options.correlation >= 0 && options.correlation <= 1))
    throw new NumericOptionError(`correlation must be in [0, 1], got ${options.correlation}`);

  let raw: readonly ArrayLike<number>[];
  if (options.data !== undefined) {
    if (options.data.length !== ranks)
      throw new NumericOptionError(`data has ${options.data.length} buffers for ${ranks} ranks`);
    const length = options.data[0]?.length ?? 0;
    if (length === 0) throw new NumericOptionError('data buffers are empty');
    options.data.forEach((buffer, r) => {
      if (buffer.length !== length)
        throw new NumericOptionError(`data buffer of rank ${r} has ${buffer.length} elements, rank 0 has ${length}`);
    });
    if (options.elements !== undefined && options.elements !== length)
      throw new NumericOptionError(`elements (${options.elements}) differs from the data's length (${length})`);
    raw = options.data;
  } else {
    if (options.elements === undefined) throw new NumericOptionError('elements is required when no data is given');
    raw = syntheticGradients({
      ranks,
      elements: options.elements,
      seed: options.seed ?? 1,
      magnitude: options.magnitude,
      correlation: options.correlation,
    });
  }
  const elements = raw[0].length;
  const inputOverflowAt = new Uint8Array(elements);
  const inputs = raw.map((buffer) => {
    const rounded = new Float64Array(elements);
    for (let e = 0; e < elements; e++) {
      rounded[e] = roundToDtype(buffer[e], dtype);
      // An input that is already infinite overflowed too: the synthetic gradients are float32 values, so a
      // magnitude beyond float32's range makes them infinite before any dtype sees them. Only NaN is not overflow.
      if (!Number.isNaN(buffer[e]) && !Number.isFinite(rounded[e])) inputOverflowAt[e] = 1;
    }
    return rounded;
  });
  return {
    algorithm,
    ranks,
    gpusPerNode,
    dtype,
    op,
    elements,
    inputs,
    inputOverflowAt,
    // Trees alternate between NCCL's two; CollNet gives each head (every GPU of a node) its own channel.
    channels:
      options.channels ??
      (algorithm === 'tree' || algorithm === 'nvlstree'
        ? 2
        : algorithm === 'collnetdirect' || algorithm === 'collnetchain'
          ? gpusPerNode
          : 1),
    scalar: premulScalar(op, dtype, ranks, options.scalar),
    exactScale: exactScale(op, ranks, options.scalar),
  };
}

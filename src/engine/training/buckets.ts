// Gradient bucketing as PyTorch DDP does it (torch/csrc/distributed/c10d/reducer.cpp,
// compute_bucket_assignment_by_size): walk the parameters in reverse registration order, which is roughly the
// order backward produces their gradients, add each tensor to the open bucket, and close the bucket as soon as it
// reaches its limit. The first bucket's limit is small (1 MiB) so that the first AllReduce starts early; every
// later bucket uses the cap. A tensor larger than the cap therefore gets a bucket of its own.
import { type Bytes, asBytes } from '../units';
import type { ModelSpec } from './types';

/** DDP's `dist._DEFAULT_FIRST_BUCKET_BYTES`. */
export const DDP_FIRST_BUCKET_BYTES: Bytes = asBytes(1024 * 1024);
/** DDP's default `bucket_cap_mb` (25), in bytes: DDP multiplies the MB figure by 1024 × 1024. */
export const DDP_DEFAULT_BUCKET_BYTES: Bytes = asBytes(25 * 1024 * 1024);
/** Horovod's default HOROVOD_FUSION_THRESHOLD (64 MiB). */
export const HOROVOD_DEFAULT_FUSION_BYTES: Bytes = asBytes(64 * 1024 * 1024);
/** DeepSpeed's default reduce_bucket_size and allreduce_bucket_size, in elements. */
export const DEEPSPEED_DEFAULT_BUCKET_ELEMENTS = 5e8;

/** The model flattened into parallel arrays, in forward (registration) order. */
export interface FlatModel {
  readonly layerOfTensor: Int32Array;
  readonly params: Float64Array;
  readonly forwardFlopsPerToken: Float64Array;
  /** First flat tensor index of each layer, plus one past the end. */
  readonly layerStart: Int32Array;
  readonly layerNames: readonly string[];
  readonly totalParams: number;
}

/** Flattens the model; attention's context-dependent FLOPs are priced at `sequenceLength` tokens of context. */
export function flattenModel(model: ModelSpec, sequenceLength: number): FlatModel {
  const count = model.layers.reduce((n, layer) => n + layer.tensors.length, 0);
  const layerOfTensor = new Int32Array(count);
  const params = new Float64Array(count);
  const flops = new Float64Array(count);
  const layerStart = new Int32Array(model.layers.length + 1);
  let i = 0;
  let totalParams = 0;
  model.layers.forEach((layer, l) => {
    layerStart[l] = i;
    for (const tensor of layer.tensors) {
      layerOfTensor[i] = l;
      params[i] = tensor.params;
      flops[i] = tensor.forwardFlopsPerToken + (tensor.forwardFlopsPerTokenPerSequenceToken ?? 0) * sequenceLength;
      totalParams += tensor.params;
      i++;
    }
  });
  layerStart[model.layers.length] = count;
  return {
    layerOfTensor,
    params,
    forwardFlopsPerToken: flops,
    layerStart,
    layerNames: model.layers.map((l) => l.name),
    totalParams,
  };
}

export interface GradientBucket {
  readonly index: number;
  readonly bytes: Bytes;
  readonly params: number;
  /** The flat index of the tensor whose gradient completes the bucket (the lowest index in it). */
  readonly lastTensor: number;
  readonly tensorCount: number;
}

/**
 * Assigns gradient tensors to buckets in reverse registration order. `firstBucketBytes` of 0 means every bucket
 * uses the cap (Horovod, DeepSpeed). The first limit never exceeds the cap, so a larger cap can only merge buckets:
 * the bucket count never grows as the cap grows.
 */
export function assignBuckets(
  flat: FlatModel,
  bytesPerParam: number,
  capBytes: Bytes,
  firstBucketBytes: Bytes,
): GradientBucket[] {
  if (!(capBytes > 0)) throw new RangeError(`bucket cap must be positive (got ${capBytes} bytes)`);
  const buckets: GradientBucket[] = [];
  const firstLimit = firstBucketBytes > 0 ? Math.min(firstBucketBytes, capBytes) : capBytes;
  let limit = firstLimit;
  let bytes = 0;
  let params = 0;
  let tensorCount = 0;
  for (let t = flat.params.length - 1; t >= 0; t--) {
    const p = flat.params[t];
    if (p <= 0) continue;
    bytes += p * bytesPerParam;
    params += p;
    tensorCount++;
    if (bytes >= limit) {
      buckets.push({ index: buckets.length, bytes: asBytes(bytes), params, lastTensor: t, tensorCount });
      bytes = 0;
      params = 0;
      tensorCount = 0;
      limit = capBytes;
    }
  }
  if (tensorCount > 0) {
    let first = 0;
    while (first < flat.params.length && flat.params[first] <= 0) first++;
    buckets.push({ index: buckets.length, bytes: asBytes(bytes), params, lastTensor: first, tensorCount });
  }
  return buckets;
}

/** Splits `totalBytes` into chunks of at most `chunkBytes`, for collectives DeepSpeed issues in fixed-size pieces. */
export function chunkSizes(totalBytes: Bytes, chunkBytes: Bytes): Bytes[] {
  if (!(chunkBytes > 0)) throw new RangeError(`chunk size must be positive (got ${chunkBytes} bytes)`);
  const out: Bytes[] = [];
  for (let left = totalBytes; left > 0; left = asBytes(left - chunkBytes))
    out.push(asBytes(Math.min(left, chunkBytes)));
  return out;
}

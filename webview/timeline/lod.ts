// Level-of-detail buckets: for each lane, how much time each phase occupies in fixed time buckets, at several
// resolutions. When a pixel column covers many spans, the renderer reads these instead of visiting every span,
// so a zoomed-out frame costs O(pixels) rather than O(spans).

/** Lanes with fewer spans than this are always drawn span by span; a bucket pyramid would not pay for itself. */
export const LOD_MIN_SPANS = 512;
/** Finest level: about two spans per bucket on average, so zooming past it leaves a couple of spans per pixel to visit. */
const SPANS_PER_FINEST_BUCKET = 2;
const MAX_FINEST_BUCKETS = 1 << 16;
const MIN_COARSEST_BUCKETS = 256;

export interface LodLevel {
  /** Bucket width in µs; bucket b covers [originUs + b × bucketUs, originUs + (b + 1) × bucketUs). */
  readonly bucketUs: number;
  /** Busy time in each bucket, µs, summed over overlapping spans. */
  readonly busyUs: Float32Array;
  /** The phase index with the most time in each bucket. */
  readonly dominant: Uint8Array;
}

export interface RowLod {
  readonly originUs: number;
  /** Finest first; each level has half the buckets of the one before. */
  readonly levels: readonly LodLevel[];
}

/**
 * Builds the pyramid for the spans [from, to) of one lane (sorted by start), over the trace bounds.
 * `scratch` is reused across lanes to keep allocation out of the loop; it grows as needed.
 */
export function buildRowLod(
  startUs: Float64Array,
  endUs: Float64Array,
  phase: Uint8Array,
  from: number,
  to: number,
  originUs: number,
  endOfTraceUs: number,
  phaseCount: number,
  scratch: { perPhase: Float32Array },
): RowLod | null {
  const count = to - from;
  if (count < LOD_MIN_SPANS || !(endOfTraceUs > originUs)) return null;
  let buckets = MIN_COARSEST_BUCKETS;
  while (buckets * SPANS_PER_FINEST_BUCKET < count && buckets < MAX_FINEST_BUCKETS) buckets *= 2;
  const bucketUs = (endOfTraceUs - originUs) / buckets;
  if (scratch.perPhase.length < buckets * phaseCount) scratch.perPhase = new Float32Array(buckets * phaseCount);
  let perPhase = scratch.perPhase.subarray(0, buckets * phaseCount);
  perPhase.fill(0);
  let presentMask = 0;
  for (let i = from; i < to; i++) {
    const s = (startUs[i] - originUs) / bucketUs;
    const e = (endUs[i] - originUs) / bucketUs;
    const p = phase[i];
    presentMask |= 1 << p;
    const last = Math.min(buckets - 1, Math.floor(e));
    for (let b = Math.max(0, Math.floor(s)); b <= last; b++) {
      const overlap = Math.min(e, b + 1) - Math.max(s, b);
      // A zero-length span still marks its bucket as busy, so instants stay visible when zoomed out.
      perPhase[b * phaseCount + p] += overlap > 0 ? overlap * bucketUs : 1e-9;
    }
  }
  // Only the phases this lane uses are summed below: usually three or four of the seven.
  const present: number[] = [];
  for (let p = 0; p < phaseCount; p++) if (presentMask & (1 << p)) present.push(p);
  const levels: LodLevel[] = [];
  let width = bucketUs;
  for (let n = buckets; ; n >>= 1, width *= 2) {
    const busyUs = new Float32Array(n);
    const dominant = new Uint8Array(n);
    for (let b = 0; b < n; b++) {
      let best = 0;
      let bestUs = -1;
      let total = 0;
      for (const p of present) {
        const us = perPhase[b * phaseCount + p];
        total += us;
        if (us > bestUs) {
          bestUs = us;
          best = p;
        }
      }
      busyUs[b] = total;
      dominant[b] = best;
    }
    levels.push({ bucketUs: width, busyUs, dominant });
    if (n <= MIN_COARSEST_BUCKETS) break;
    // Halve the resolution in place: bucket b of the next level sums buckets 2b and 2b + 1 of this one.
    const next = perPhase.subarray(0, (n >> 1) * phaseCount);
    for (let b = 0; b < n >> 1; b++) {
      for (const p of present)
        next[b * phaseCount + p] = perPhase[2 * b * phaseCount + p] + perPhase[(2 * b + 1) * phaseCount + p];
    }
    perPhase = next;
  }
  return { originUs, levels };
}

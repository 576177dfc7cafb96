// Seeded, deterministic synthetic gradients: one buffer per rank.
//
// Data-parallel ranks compute gradients of the same loss on different samples, so their gradients are correlated:
// each element is a shared component (the expected gradient) plus per-rank noise. That correlation is what makes a
// sum over many ranks grow like N rather than √N, and so what makes fp16 sums overflow in practice.

/** mulberry32: a small, fast 32-bit PRNG with a good enough distribution for test data. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal samples (Box–Muller), deterministic for a seed. */
export function seededGaussian(seed: number): () => number {
  const uniform = seededRandom(seed);
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const value = spare;
      spare = undefined;
      return value;
    }
    const u = 1 - uniform(); // in (0, 1], so the logarithm is finite
    const v = uniform();
    const radius = Math.sqrt(-2 * Math.log(u));
    spare = radius * Math.sin(2 * Math.PI * v);
    return radius * Math.cos(2 * Math.PI * v);
  };
}

export interface SyntheticGradientOptions {
  readonly ranks: number;
  readonly elements: number;
  readonly seed: number;
  /** RMS of one rank's gradient elements. 100 is typical of loss-scaled fp16 gradients. */
  readonly magnitude?: number;
  /** Fraction of each element's variance shared by all ranks (0: independent, 1: identical). */
  readonly correlation?: number;
}

export const DEFAULT_GRADIENT_MAGNITUDE = 100;
export const DEFAULT_GRADIENT_CORRELATION = 0.5;

/** One Float64Array of `elements` values per rank. */
export function syntheticGradients(options: SyntheticGradientOptions): Float64Array[] {
  const magnitude = options.magnitude ?? DEFAULT_GRADIENT_MAGNITUDE;
  const correlation = options.correlation ?? DEFAULT_GRADIENT_CORRELATION;
  const gaussian = seededGaussian(options.seed);
  const shared = new Float64Array(options.elements);
  for (let e = 0; e < options.elements; e++) shared[e] = gaussian();
  const sharedWeight = magnitude * Math.sqrt(correlation);
  const noiseWeight = magnitude * Math.sqrt(1 - correlation);
  const buffers: Float64Array[] = [];
  for (let r = 0; r < options.ranks; r++) {
    const buffer = new Float64Array(options.elements);
    // Gradients come out of float32 kernels, so the synthetic ones are float32 values too.
    for (let e = 0; e < options.elements; e++)
      buffer[e] = Math.fround(sharedWeight * shared[e] + noiseWeight * gaussian());
    buffers.push(buffer);
  }
  return buffers;
}

// Prices each collective of a training step with the engine's simulator. Buckets repeat the same few sizes
// (most tensors of a transformer share a shape), so results are cached by kind and size: a 70 B model on 1,024
// GPUs needs a few dozen simulations, not thousands.
import type { Algorithm, CollectiveKind, Dtype, PhaseTimes, Protocol, ReduceOp } from '../collective-types';
import { type Bytes, type Micros, asMicros, asBytes } from '../units';
import type { System } from '../topology/model';
import { simulateCollective } from '../simulate';

export interface CollectiveCost {
  readonly timeUs: Micros;
  readonly algorithm: Algorithm;
  readonly protocol: Protocol;
  readonly phases: PhaseTimes;
}

export interface CostOptions {
  readonly algorithm: Algorithm | 'auto';
  readonly protocol: Protocol | 'auto';
  readonly op: ReduceOp;
}

const NO_COMM: PhaseTimes = { exchange: asMicros(0), reduce: asMicros(0), broadcast: asMicros(0) };

/**
 * Prices one collective. The default runs the simulator; a caller with measurements (the native engine, an
 * imported nccl-tests table) can price collectives from those instead.
 */
export type CollectivePricer = (
  system: System,
  kind: CollectiveKind,
  bytes: Bytes,
  dtype: Dtype,
  options: CostOptions,
) => CollectiveCost;

export const simulatedPrice: CollectivePricer = (system, kind, bytes, dtype, options) => {
  const result = simulateCollective(system, {
    kind,
    bytes,
    dtype,
    op: kind === 'allgather' ? undefined : options.op,
    algorithm: options.algorithm,
    protocol: options.protocol,
    trace: false,
  });
  return { timeUs: result.timeUs, algorithm: result.algorithm, protocol: result.protocol, phases: result.phases };
};

/** Anchors refine down to 2^(1/8) apart (9 %) where the algorithm or protocol changes between them. */
export const MAX_ANCHOR_REFINEMENT = 3;

/**
 * Prices collectives for one system, caching by kind, dtype and size. A size between two anchors (powers of two
 * to start with) is priced by linear interpolation between their simulated times. A collective's time is affine
 * in its size while the algorithm and protocol stay the same (latency plus bytes over bandwidth), so where both
 * anchors agree on them the interpolation is exact; where they differ, the interval is halved (in log space) up
 * to MAX_ANCHOR_REFINEMENT times around the size. A model whose buckets come in hundreds of slightly different
 * sizes then needs a handful of simulations instead of hundreds.
 */
export class CollectiveCoster {
  private readonly cache = new Map<string, CollectiveCost>();
  simulations = 0;

  constructor(
    private readonly system: System,
    private readonly options: CostOptions,
    private readonly price: CollectivePricer = simulatedPrice,
    private readonly interpolate = true,
  ) {}

  private exact(kind: CollectiveKind, bytes: Bytes, dtype: Dtype): CollectiveCost {
    const key = `${kind}|${dtype}|${bytes}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const cost = this.price(this.system, kind, bytes, dtype, this.options);
    this.simulations++;
    this.cache.set(key, cost);
    return cost;
  }

  cost(kind: CollectiveKind, bytes: Bytes, dtype: Dtype): CollectiveCost {
    if (this.system.ranks <= 1 || bytes <= 0)
      return { timeUs: asMicros(0), algorithm: 'ring', protocol: 'Simple', phases: NO_COMM };
    const hit = this.cache.get(`${kind}|${dtype}|${bytes}`);
    if (hit || !this.interpolate) return hit ?? this.exact(kind, bytes, dtype);
    // Bracket log2(bytes) between exponents lo and hi, halving while the anchors disagree on the algorithm.
    const exponent = Math.log2(bytes);
    let loExp = Math.floor(exponent);
    let hiExp = loExp + 1;
    let loBytes = 2 ** loExp;
    let hiBytes = 2 ** hiExp;
    if (bytes === loBytes) return this.exact(kind, bytes, dtype);
    let lo = this.exact(kind, asBytes(loBytes), dtype);
    let hi = this.exact(kind, asBytes(hiBytes), dtype);
    for (
      let depth = 0;
      depth < MAX_ANCHOR_REFINEMENT && (lo.algorithm !== hi.algorithm || lo.protocol !== hi.protocol);
      depth++
    ) {
      const midExp = (loExp + hiExp) / 2;
      const midBytes = asBytes(Math.round(2 ** midExp));
      if (midBytes === bytes) return this.exact(kind, bytes, dtype);
      const mid = this.exact(kind, midBytes, dtype);
      if (bytes < midBytes) [hiExp, hiBytes, hi] = [midExp, midBytes, mid];
      else [loExp, loBytes, lo] = [midExp, midBytes, mid];
    }
    const w = (bytes - loBytes) / (hiBytes - loBytes);
    const mix = (a: number, b: number): number => a + (b - a) * w;
    // The nearer anchor names the algorithm and protocol when the two differ.
    const named = w < 0.5 ? lo : hi;
    return {
      timeUs: asMicros(mix(lo.timeUs, hi.timeUs)),
      algorithm: named.algorithm,
      protocol: named.protocol,
      phases: {
        exchange: asMicros(mix(lo.phases.exchange, hi.phases.exchange)),
        reduce: asMicros(mix(lo.phases.reduce, hi.phases.reduce)),
        broadcast: asMicros(mix(lo.phases.broadcast, hi.phases.broadcast)),
      },
    };
  }
}

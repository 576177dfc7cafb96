// Prices each collective of a training step with the engine's simulator. Buckets repeat the same few sizes
// (most tensors of a transformer share a shape), so results are cached by kind and size: a 70 B model on 1,024
// GPUs needs a few dozen simulations, not thousands.
import type { Algorithm, CollectiveKind, Dtype, PhaseTimes, Protocol, ReduceOp } from '../collective-types';
import type { Bytes, Micros } from '../units';
// The engine's simulator is reached through its public surface; it is only called inside methods, so the
// import cycle (index -> training -> index) is harmless.
import type { System } from '../topology/model';
import { simulateCollective } from '../index';

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

const NO_COMM: PhaseTimes = { exchange: 0, reduce: 0, broadcast: 0 };

/**
 * Prices one collective. The default runs the simulator; a caller with measurements (the native engine, an
 * imported nccl-tests table) can price collectives from those instead.
 */
export type CollectivePricer = (system: System, kind: CollectiveKind, bytes: Bytes, dtype: Dtype, options: CostOptions) => CollectiveCost;

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

export class CollectiveCoster {
  private readonly cache = new Map<string, CollectiveCost>();
  simulations = 0;

  constructor(
    private readonly system: System,
    private readonly options: CostOptions,
    private readonly price: CollectivePricer = simulatedPrice,
  ) {}

  cost(kind: CollectiveKind, bytes: Bytes, dtype: Dtype): CollectiveCost {
    if (this.system.ranks <= 1 || bytes <= 0) return { timeUs: 0, algorithm: 'ring', protocol: 'Simple', phases: NO_COMM };
    const key = `${kind}|${dtype}|${bytes}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const cost = this.price(this.system, kind, bytes, dtype, this.options);
    this.simulations++;
    this.cache.set(key, cost);
    return cost;
  }
}

// A schedule is what an algorithm hands the simulator: rounds of concurrent transfers. A round starts when the
// previous one has finished (NCCL's per-step synchronisation), waits its latency, then its flows share the links.
import type { Phase } from '../trace/model';
import type { FlowSet } from './maxmin';
import type { ShownParts } from './shown-round';

export interface Flow {
  /** Sending and receiving rank (the receiver reduces when `reduce` is set). */
  readonly rank: number;
  readonly peer: number;
  /** Bytes on the wire for one copy of this flow. */
  readonly bytes: number;
  /** Resources crossed: link indices, and for reductions the receiver's memory (see memoryResource). */
  readonly resources: readonly number[];
  /** Bytes put on each resource per wire byte (1 for links; the memory traffic factor for a reduction). */
  readonly coefficients?: readonly number[];
  /** Identical copies (channels of one class) that this flow stands for; they share every resource equally. */
  readonly weight: number;
  /** First channel of the copies; copy i runs on channel + i × channelStride. */
  readonly channel: number;
  readonly channelStride: number;
  /** Ceiling on one copy's rate, GB/s (an SM's copy throughput), Infinity when none. */
  readonly capGBps: number;
  readonly chunk: number;
  readonly phase: Phase;
  /** Payload bytes reduced at the receiver (0 when the flow only copies). */
  readonly reduceBytes: number;
  /** Identical flows elsewhere in the system this one stands for on the fast path (default 1). */
  readonly represents?: number;
  /**
   * Where the reduction is drawn when it is not at `peer`: a flow folded onto one node (algorithms/ring-folded.ts)
   * is sent to the next node's GPU `peer` but received, and reduced, by its own node's GPU `rank`, as the copy that
   * arrives from rank `from` of the previous node. Its memory resource is that GPU's, so the trace must agree.
   */
  readonly reducedAt?: { readonly rank: number; readonly from: number };
}

export interface Round {
  readonly flows: readonly Flow[];
  /** Synchronisation and hop latency paid before the flows move, µs. */
  readonly latencyUs: number;
  /** Identical rounds in a row (ring steps, steady pipeline stages). */
  readonly repeat: number;
  readonly phase: Phase;
  /** Algorithm step of the first repetition; repetitions count up from it. */
  readonly step: number;
  /**
   * The same flows packed for the solver, when the builder made them without Flow objects (then `flows` is built on
   * first read, for a trace or the full path).
   */
  readonly packed?: PackedFlows;
}

export interface Schedule {
  readonly rounds: readonly Round[];
  /** One-off cost before the first round (launch, algorithm base latency), µs. */
  readonly setupUs: number;
  readonly channels: number;
  /** Capacity of each GPU's engine resource (see engineResource), GB/s, when the algorithm uses one. */
  readonly engineGBps?: number;
}

/**
 * `count` flows in a row that add `term` (bytes × weight × represents) to `phase`'s bytes (see sim/packed.ts); with
 * `cycle`, `count` repetitions of those terms in turn (a stage whose flows alternate two sizes, rank after rank).
 */
export interface PhaseRun {
  readonly phase: Phase;
  readonly term: number;
  readonly count: number;
  readonly cycle?: readonly number[];
}

/** A round's flows packed for the solver, with what the runner reads of them besides (see sim/packed.ts). */
export interface PackedFlows {
  readonly set: FlowSet;
  /** The flows' byte terms by phase, in flow order. */
  readonly runs: readonly PhaseRun[];
  /** The largest payload any flow reduces at its receiver (0 when none). */
  readonly maxReduceBytes: number;
  /** A proof the runner asks for the round's duration before it solves `set` (sim/shown-round.ts). */
  readonly shown?: ShownParts;
}

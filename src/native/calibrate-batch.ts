// The search of calibrate.ts is written as a generator that yields what it needs simulated next, one batch of
// independent simulations at a time (every fitted row of one evaluation, or NCCL's choice for every row), and
// resumes with their outcomes. This file answers batches on the calling thread; the CLI answers the same batches
// on worker threads (src/cli/parallel/calibrate-pool.ts). One search, two drivers: the fitted system is the same
// bytes either way.
import {
  resolveSystem,
  simulateCollective,
  type Algorithm,
  type CollectiveRequest,
  type Protocol,
  type System,
  type SystemSpec,
} from '../engine/index';

/** Independent simulations on one system: their order is the order of the outcomes. */
export interface SimulationBatch {
  readonly spec: SystemSpec;
  /** The spec already resolved, where the search has it: the thread that asked may use it instead. */
  readonly system?: System;
  readonly requests: readonly CollectiveRequest[];
}

/** What the search reads of one simulation: plain data, so a worker thread can send it back unchanged. */
export interface SimulationOutcome {
  readonly timeUs: number;
  readonly algorithm: Algorithm;
  readonly protocol: Protocol;
}

/** The outcomes, in the requests' order, or undefined when the spec resolves to no system (impossible overrides). */
export type BatchAnswer = readonly SimulationOutcome[] | undefined;

export type Search<T> = Generator<SimulationBatch, T, BatchAnswer>;

/** The system a batch runs on, or undefined when its spec is impossible (the search then scores it Infinity). */
export function batchSystem(batch: SimulationBatch): System | undefined {
  if (batch.system) return batch.system;
  try {
    return resolveSystem(batch.spec);
  } catch {
    return undefined;
  }
}

export function simulationOutcome(system: System, request: CollectiveRequest): SimulationOutcome {
  const result = simulateCollective(system, request);
  return { timeUs: result.timeUs, algorithm: result.algorithm, protocol: result.protocol };
}

/** Answers a batch here, one simulation after another. */
export function answerHere(batch: SimulationBatch, system = batchSystem(batch)): BatchAnswer {
  return system && batch.requests.map((request) => simulationOutcome(system, request));
}

/** Runs a search to its end on this thread. */
export function runSearchHere<T>(search: Search<T>): T {
  let step = search.next(undefined);
  while (!step.done) step = search.next(answerHere(step.value));
  return step.value;
}

// The independent simulations a CLI command may spread over worker threads, as plain data both sides can clone,
// and the one function that runs them: the serial path and every worker call it, so their results are the same
// numbers (structured cloning copies doubles exactly) and the output is the same bytes.
import {
  resolveSystem,
  type CollectiveRequest,
  sweepAllReduce,
  trainingSweepPoint,
  type SweepOptions,
  type SweepPoint,
  type SweepRange,
  type SweepRow,
  type System,
  type SystemSpec,
  type TrainingRun,
} from '../../engine/index';
import { simulationOutcome, type SimulationOutcome } from '../../native/calibrate-batch';

/** AllReduce at one size (a sweep's row) on the system a spec resolves to. */
export interface AllReduceSizeTask {
  readonly kind: 'allreduce-size';
  readonly spec: SystemSpec;
  readonly options: SweepOptions;
}

/** One point of a training sweep (`profile --sweep nodes=…`): the step with the knob at `value`. */
export interface TrainingPointTask {
  readonly kind: 'training-point';
  readonly run: TrainingRun;
  readonly key: SweepRange['key'];
  readonly value: number;
}

/** One collective on the system a spec resolves to: a row of one calibrate evaluation. */
export interface CollectiveTask {
  readonly kind: 'collective';
  readonly spec: SystemSpec;
  readonly request: CollectiveRequest;
}

export type ParallelTask = AllReduceSizeTask | TrainingPointTask | CollectiveTask;

export interface ParallelResults {
  readonly 'allreduce-size': readonly SweepRow[];
  readonly 'training-point': SweepPoint;
  readonly collective: SimulationOutcome;
}

export type ParallelResult = ParallelResults[ParallelTask['kind']];

/**
 * Resolved systems by spec, so a worker that runs many sizes of one system resolves it once. Keyed by the spec's
 * JSON: specs come from files and presets, plain data whose JSON names them exactly. A calibrate search asks for a
 * new spec at every evaluation, so only the most recent few are kept.
 */
export class SystemCache {
  private readonly systems = new Map<string, System>();
  private static readonly KEPT = 4;

  constructor(seed?: System) {
    if (seed) this.systems.set(JSON.stringify(seed.spec), seed);
  }

  get(spec: SystemSpec): System {
    const key = JSON.stringify(spec);
    let system = this.systems.get(key);
    if (!system) {
      system = resolveSystem(spec);
      if (this.systems.size >= SystemCache.KEPT) this.systems.delete(this.systems.keys().next().value!);
      this.systems.set(key, system);
    }
    return system;
  }
}

export function runTask(task: ParallelTask, systems: SystemCache): ParallelResult {
  switch (task.kind) {
    case 'allreduce-size':
      return sweepAllReduce(systems.get(task.spec), task.options);
    case 'training-point':
      return trainingSweepPoint(task.run, task.key, task.value);
    case 'collective':
      return simulationOutcome(systems.get(task.spec), task.request);
  }
}

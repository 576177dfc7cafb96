// Runs a schedule on a resolved system: each round waits its latency, then its flows share links (max-min fair)
// until the last one lands. The fast path runs each distinct round once per repeat-group and each channel class
// once (copies share links through their weight); the full path expands every channel and every repetition.
import { MAX_TRACE_SPANS, REDUCE_MEMORY_FACTOR } from '../constants';
import type { PhaseTimes } from '../collective-types';
import { linkTable } from '../topology/link-table';
import type { System } from '../topology/model';
import { TRUNCATED_FACT, type Trace, type TraceMetadata } from '../trace/model';
import type { RecordedSpans } from '../trace/simulated-index';
import { ComponentSolver } from './components';
import type { RoundResult } from './maxmin';
import { pack, phaseRuns, phaseShares } from './packed';
import { shownDurationUs } from './shown-round';
import type { Flow, Round, Schedule } from './schedule';
import { SpanEmitter, SpanRecorder, spansOf } from './recorded-spans';
import { asMicros } from '../units';

export interface RunOptions {
  /** Expand every channel copy and every repeated round (the reference the fast path must agree with). */
  readonly full: boolean;
  readonly trace?: TraceMetadata;
  /** The most spans the trace records (MAX_TRACE_SPANS when not given). */
  readonly traceSpanLimit?: number;
  /**
   * Record the trace's flows and times rather than make its spans (RunResult.recorded): for a summary, which makes
   * the spans of the ranks it draws only. The trace then holds the metadata alone.
   */
  readonly recordSpans?: boolean;
}

export interface RunResult {
  readonly timeUs: number;
  readonly phases: PhaseTimes;
  readonly trace?: Trace;
  /** The trace's spans as recorded, with `recordSpans`. */
  readonly recorded?: RecordedSpans;
  readonly spanCount: number;
  /**
   * True when the trace's span limit was reached: the run stopped at the last round whose spans fitted, so its
   * time and phases cover only those rounds (simulate.ts takes them from an untraced run instead).
   */
  readonly truncated?: boolean;
}

/** The receiver's memory as a resource: reductions read two inputs and write one result there. */
export function memoryResource(system: System, rank: number): number {
  return linkTable(system.topology).count + rank;
}

/** A GPU's CTAs as a resource: what the algorithm's kernels can push per GPU, whatever the links allow. */
export function engineResource(system: System, rank: number): number {
  return linkTable(system.topology).count + system.ranks + rank;
}

/** The finish times of a round timed by a proof: none, as only a traced run reads them (and it lists its flows). */
const NO_FINISH = new Float64Array(0);

function expand(round: Round): Flow[] {
  const out: Flow[] = [];
  for (const flow of round.flows) {
    for (let i = 0; i < flow.weight; i++)
      out.push({ ...flow, weight: 1, channel: flow.channel + i * flow.channelStride });
  }
  return out;
}

export function runSchedule(system: System, schedule: Schedule, options: RunOptions): RunResult {
  const links = linkTable(system.topology);
  const linkCount = links.count;
  const engineGBps = schedule.engineGBps ?? Infinity;
  // Read for every resource of every round (a path per node on thousands of nodes): the bounds are constants.
  const memoryEnd = linkCount + system.ranks;
  const hbmGBps = system.hbmGBps;
  const capacity = (r: number): number => (r < linkCount ? links.GBps(r) : r < memoryEnd ? hbmGBps : engineGBps);
  const phases = { exchange: schedule.setupUs, reduce: 0, broadcast: 0 };
  const recorder = options.trace && options.recordSpans ? new SpanRecorder(system, options.trace) : undefined;
  const emitter = options.trace && !recorder ? new SpanEmitter(system, options.trace) : undefined;
  const builder = recorder ?? emitter;
  /** Spans recorded or made so far: counted alike, so a recorded trace stops at the round a made one does. */
  let spanCount = 0;
  const spanLimit = options.traceSpanLimit ?? MAX_TRACE_SPANS;
  /**
   * Whether the limit left rounds without spans. Spans are kept whole rounds at a time, so every rank's trace stops
   * at the same round and a trace summarised per node compares like with like.
   */
  let truncated = false;
  const solver = new ComponentSolver(capacity, linkCount + 2 * system.ranks);
  let now = schedule.setupUs;
  rounds: for (const round of schedule.rounds) {
    const repeats = options.full ? round.repeat : 1;
    // A builder may hand the fast path its flows packed already (no Flow objects); a trace reads the objects. A
    // packed round may stand for its flows rather than list them (PAT's folded rounds, hierarchical's groups), so a
    // traced round is solved from its objects.
    const packed = options.full || builder ? undefined : round.packed;
    const flows = packed ? [] : options.full ? expand(round) : round.flows;
    // A packed round's flows may be made only when solved: a builder's proof can time the round without them.
    let set = packed ? undefined : pack(flows);
    const runs = packed?.runs ?? phaseRuns(flows);
    let maxReduceBytes = packed?.maxReduceBytes ?? 0;
    if (!packed) for (const flow of flows) maxReduceBytes = Math.max(maxReduceBytes, flow.reduceBytes);
    const solve = (): RoundResult => {
      const shownUs = packed?.shown && shownDurationUs(packed.shown, capacity, (others) => solver.solve(others));
      // Only the duration is read of a round without a trace: no finish per flow.
      if (shownUs !== undefined) return { durationUs: shownUs, finishUs: NO_FINISH };
      return solver.solve((set ??= packed!.set));
    };
    let cached: RoundResult | undefined;
    for (let rep = 0; rep < repeats; rep++) {
      // Identical repetitions take identical time; the full path still runs each one, as the reference does.
      const result = options.full || !cached ? solve() : cached;
      cached = result;
      const multiplier = options.full ? 1 : round.repeat;
      const duration = round.latencyUs + result.durationUs;
      // The largest reduction sets the reduce time (the time is monotone in the bytes, so max of times = time of max).
      let reduceUs = maxReduceBytes > 0 ? (maxReduceBytes * REDUCE_MEMORY_FACTOR) / (system.hbmGBps * 1e3) : 0;
      reduceUs = Math.min(reduceUs, result.durationUs);
      const shares = phaseShares(runs);
      if (shares) {
        // A pipelined round runs several phases at once: split its time by the bytes each phase moves.
        phases.exchange += duration * multiplier * shares.exchange;
        phases.reduce += duration * multiplier * shares.reduce;
        phases.broadcast += duration * multiplier * shares.broadcast;
      } else if (round.phase === 'broadcast') phases.broadcast += duration * multiplier;
      else {
        phases.reduce += reduceUs * multiplier;
        phases.exchange += (duration - reduceUs) * multiplier;
      }
      if (builder) {
        for (let r = 0; r < multiplier; r++) {
          const start = now + r * duration + round.latencyUs;
          let roundSpans = 0;
          for (const flow of flows) roundSpans += spansOf(flow);
          if (spanCount + roundSpans > spanLimit) {
            truncated = true;
            break rounds;
          }
          spanCount += roundSpans;
          for (let f = 0; f < flows.length; f++)
            builder.record(flows[f], round.step + rep + r, start, result.finishUs[f]);
        }
      }
      now += duration * multiplier;
    }
  }
  const metadata =
    options.trace && truncated
      ? { ...options.trace, facts: { ...options.trace.facts, [TRUNCATED_FACT]: spanLimit } }
      : options.trace;
  recorder?.close(metadata!);
  const built = recorder ? { metadata: metadata!, lanes: [], spans: [] } : emitter?.build();
  const trace = built && { ...built, metadata: metadata! };
  return {
    timeUs: now,
    phases: {
      exchange: asMicros(phases.exchange),
      reduce: asMicros(phases.reduce),
      broadcast: asMicros(phases.broadcast),
    },
    trace,
    ...(recorder ? { recorded: recorder } : {}),
    spanCount,
    ...(truncated ? { truncated } : {}),
  };
}

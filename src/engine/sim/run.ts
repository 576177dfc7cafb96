// Runs a schedule on a resolved system: each round waits its latency, then its flows share links (max-min fair)
// until the last one lands. The fast path runs each distinct round once per repeat-group and each channel class
// once (copies share links through their weight); the full path expands every channel and every repetition.
import { MAX_TRACE_SPANS, REDUCE_MEMORY_FACTOR } from '../constants';
import type { PhaseTimes } from '../collective-types';
import { linkIds, linkTable } from '../topology/link-table';
import type { System } from '../topology/model';
import { TraceBuilder } from '../trace/builder';
import { TRUNCATED_FACT, type Trace, type TraceMetadata } from '../trace/model';
import { ComponentSolver } from './components';
import { pack, phaseRuns, phaseShares } from './packed';
import type { Flow, Round, Schedule } from './schedule';
import { asBytes, asMicros } from '../units';

export interface RunOptions {
  /** Expand every channel copy and every repeated round (the reference the fast path must agree with). */
  readonly full: boolean;
  readonly trace?: TraceMetadata;
  /** The most spans the trace records (MAX_TRACE_SPANS when not given). */
  readonly traceSpanLimit?: number;
}

export interface RunResult {
  readonly timeUs: number;
  readonly phases: PhaseTimes;
  readonly trace?: Trace;
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
  const builder = options.trace ? new TraceBuilder(options.trace) : undefined;
  const rankLanes: number[] = [];
  const reduceLanes: number[] = [];
  // Each round's flows cross the links of the round before: one string per link, shared by the spans that name it.
  const linkNames = new Map<number, string>();
  if (builder) {
    for (let r = 0; r < system.ranks; r++) {
      rankLanes.push(builder.lane('rank', `rank ${r}`, { rank: r, node: Math.floor(r / system.gpusPerNode) }));
    }
  }
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
    // A builder may hand the fast path its flows packed already (no Flow objects); a trace reads the objects.
    const packed = options.full || builder ? undefined : round.packed;
    const flows = packed ? [] : options.full ? expand(round) : round.flows;
    const set = packed?.set ?? pack(flows);
    const runs = packed?.runs ?? phaseRuns(flows);
    let maxReduceBytes = packed?.maxReduceBytes ?? 0;
    if (!packed) for (const flow of flows) maxReduceBytes = Math.max(maxReduceBytes, flow.reduceBytes);
    let cached: ReturnType<ComponentSolver['solve']> | undefined;
    for (let rep = 0; rep < repeats; rep++) {
      // Identical repetitions take identical time; the full path still runs each one, as the reference does.
      const result = options.full || !cached ? solver.solve(set) : cached;
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
          let roundSpans = flows.length;
          for (const flow of flows) if (flow.reduceBytes > 0) roundSpans++;
          if (builder.spanCount + roundSpans > spanLimit) {
            truncated = true;
            break rounds;
          }
          for (let f = 0; f < flows.length; f++) {
            emitSpans(
              builder,
              system,
              flows[f],
              round.step + rep + r,
              start,
              result.finishUs[f],
              rankLanes,
              reduceLanes,
              linkNames,
            );
          }
        }
      }
      now += duration * multiplier;
    }
  }
  const built = builder?.build();
  const trace =
    built && truncated
      ? { ...built, metadata: { ...built.metadata, facts: { ...built.metadata.facts, [TRUNCATED_FACT]: spanLimit } } }
      : built;
  return {
    timeUs: now,
    phases: {
      exchange: asMicros(phases.exchange),
      reduce: asMicros(phases.reduce),
      broadcast: asMicros(phases.broadcast),
    },
    trace,
    spanCount: builder?.spanCount ?? 0,
    ...(truncated ? { truncated } : {}),
  };
}

function emitSpans(
  builder: TraceBuilder,
  system: System,
  flow: Flow,
  step: number,
  startUs: number,
  finishUs: number,
  rankLanes: number[],
  reduceLanes: number[],
  linkNames: Map<number, string>,
): void {
  // Named from the layout: reading topology.links would build every node's links (a million at 131,072 GPUs).
  const count = linkTable(system.topology).count;
  const ids = linkIds(system.topology);
  const spanLinks: string[] = [];
  for (const r of flow.resources) {
    if (r >= count) continue;
    let name = linkNames.get(r);
    if (name === undefined) linkNames.set(r, (name = ids.id(r)));
    spanLinks.push(name);
  }
  builder.add({
    lane: rankLanes[flow.rank],
    rank: flow.rank,
    phase: flow.phase,
    name: `${flow.phase} → rank ${flow.peer}`,
    step,
    channel: flow.channel,
    chunk: flow.chunk,
    bytes: asBytes(flow.bytes * flow.weight),
    links: spanLinks,
    startUs: asMicros(startUs),
    endUs: asMicros(startUs + finishUs),
    args: { copies: flow.weight, peer: flow.peer },
  });
  if (flow.reduceBytes > 0) {
    const receiver = flow.reducedAt?.rank ?? flow.peer;
    const sender = flow.reducedAt?.from ?? flow.rank;
    if (reduceLanes[receiver] === undefined) {
      reduceLanes[receiver] = builder.lane('stream', `rank ${receiver} · reduce`, {
        rank: receiver,
        node: Math.floor(receiver / system.gpusPerNode),
      });
    }
    const reduceUs = Math.min(
      finishUs,
      (flow.reduceBytes * flow.weight * REDUCE_MEMORY_FACTOR) / (system.hbmGBps * 1e3),
    );
    builder.add({
      lane: reduceLanes[receiver],
      rank: receiver,
      phase: 'reduce',
      name: `reduce from rank ${sender}`,
      step,
      channel: flow.channel,
      chunk: flow.chunk,
      bytes: asBytes(flow.reduceBytes * flow.weight),
      links: [],
      startUs: asMicros(startUs + finishUs - reduceUs),
      endUs: asMicros(startUs + finishUs),
    });
  }
}

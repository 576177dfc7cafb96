// The engine's entry points: simulate one collective (choosing algorithm and protocol like NCCL when asked to),
// and sweep AllReduce over sizes as nccl-tests does.
import { buildCollNet } from './algorithms/collnet';
import { buildDirect } from './algorithms/direct';
import { buildHierarchical } from './algorithms/hierarchical';
import { buildNvls } from './algorithms/nvls';
import { buildPat } from './algorithms/pat';
import { buildRing } from './algorithms/ring';
import { buildTree } from './algorithms/tree';
import type { BuildContext } from './algorithms/context';
import { channelsFor } from './channels';
import {
  ALGORITHMS,
  DTYPE_BYTES,
  PROTOCOLS,
  type Algorithm,
  type CollectiveKind,
  type CollectiveRequest,
  type CollectiveResult,
  type Dtype,
  type Protocol,
  type SweepRow,
} from './collective-types';
import * as K from './constants';
import { EngineError } from './errors';
import { ncclPredictedUs } from './nccl-model';
import {
  algorithmUnavailable,
  autoCandidates,
  protocolsFor,
  protocolUnavailable,
  type ProtocolOptions,
} from './select';
import { runSchedule, type RunResult } from './sim/run';
import type { Schedule } from './sim/schedule';
import type { System } from './topology/model';
import { resolveSystem } from './topology/resolve';
import { nodesIdentical } from './topology/uniform';
import type { SystemSpec } from './topology/spec';
import { algbwGBps, type Bytes, asMicros, asGBps, asBytes } from './units';

export interface SimulateOptions {
  /** 'fast' (default) collapses identical channels and repeated steps; 'full' runs every copy (the reference). */
  readonly path?: 'fast' | 'full';
}

const BUILDERS: Record<Algorithm, (ctx: BuildContext) => Schedule> = {
  ring: buildRing,
  tree: buildTree,
  collnetdirect: buildCollNet,
  collnetchain: buildCollNet,
  nvls: buildNvls,
  nvlstree: buildNvls,
  pat: buildPat,
  hierarchical: buildHierarchical,
  direct: buildDirect,
};

function asSystem(system: SystemSpec | System): System {
  return 'topology' in system && 'fabric' in system ? system : resolveSystem(system);
}

/** nccl-tests' busbw factor for each collective. */
function busFactor(kind: CollectiveKind, ranks: number): number {
  if (ranks <= 1) return 0;
  return kind === 'allreduce' ? (2 * (ranks - 1)) / ranks : (ranks - 1) / ranks;
}

function schedule(
  system: System,
  kind: CollectiveKind,
  bytes: number,
  algorithm: Algorithm,
  protocol: Protocol,
  representative = true,
  traced = false,
): Schedule {
  const channels = channelsFor(system, algorithm, protocol, bytes);
  // One node stands for all only when all nodes are the same; an edited (heterogeneous) system runs its edited
  // groups and one stand-in for the rest where the builder can show that exact, else node by node. A trace lists
  // every flow, so it gets them all.
  const uniform = representative && (system.nodes === 1 || nodesIdentical(system));
  const reduceEdits = representative && !uniform && !traced;
  return BUILDERS[algorithm]({
    system,
    algorithm,
    kind,
    bytes,
    protocol,
    channels,
    representative: uniform,
    reduceEdits,
    reference: !representative,
  });
}

/**
 * Host time of one collective for the process: its launches, and on NCCL ≤ 2.12 one work slot in host memory for
 * every channel beyond the first (System.hostWorkSlotUs).
 */
export function hostUs(system: System, channels: number): number {
  return system.launchUs + Math.max(0, channels - 1) * (system.hostWorkSlotUs ?? 0);
}

/**
 * Back-to-back collectives overlap the host's launches with the GPUs' work, so the slower of the two sets the pace.
 * Both jitter from one iteration to the next, and the mean of a maximum exceeds the maximum of the means most
 * when the two are close: a smooth maximum (a p-norm) stands for that.
 */
function overlapUs(hostTimeUs: number, deviceUs: number): number {
  const p = K.OVERLAP_SHARPNESS;
  const top = Math.max(hostTimeUs, deviceUs);
  if (top <= 0) return 0;
  return top * ((hostTimeUs / top) ** p + (deviceUs / top) ** p) ** (1 / p);
}

interface Choice {
  readonly algorithm: Algorithm;
  readonly protocol: Protocol;
  /** The fast-path run behind the choice, when the simulator (not NCCL's model) made it. */
  readonly plan?: Schedule;
  readonly run?: RunResult;
}

/** Picks (algorithm, protocol) as NCCL does: the smallest time NCCL's model predicts, ties to the first in NCCL's order. */
export function choose(
  system: System,
  kind: CollectiveKind,
  bytes: number,
  dtype: Dtype,
  algorithm: Algorithm | 'auto',
  protocol: Protocol | 'auto',
  options: ProtocolOptions = {},
): Choice {
  let candidates: { algorithm: Algorithm; protocol: Protocol }[];
  if (algorithm === 'auto') {
    candidates = autoCandidates(system, kind, dtype, options);
    if (protocol !== 'auto') candidates = candidates.filter((c) => c.protocol === protocol);
    if (candidates.length === 0) throw new EngineError(`no algorithm runs protocol ${protocol} on ${system.label}`);
  } else {
    const why = algorithmUnavailable(system, algorithm, kind);
    if (why) throw new EngineError(`${algorithm} cannot run ${kind} on ${system.label}: ${why}`);
    if (protocol !== 'auto') {
      const bad = protocolUnavailable(system, algorithm, protocol, options);
      if (bad) throw new EngineError(`${algorithm}/${protocol} cannot run on ${system.label}: ${bad}`);
      return { algorithm, protocol };
    }
    candidates = protocolsFor(system, algorithm, options).map((p) => ({ algorithm, protocol: p }));
  }
  if (candidates.length === 1) return candidates[0];
  let best: Choice = candidates[0];
  let bestUs = Infinity;
  for (const candidate of candidates) {
    // NCCL chooses with its own cost model; where NCCL has no say (the idealised ring, hierarchical and one-shot
    // are not NCCL algorithms) the simulator decides.
    if (system.fabric.idealised || candidate.algorithm === 'hierarchical' || candidate.algorithm === 'direct') {
      const plan = schedule(system, kind, bytes, candidate.algorithm, candidate.protocol);
      const run = runSchedule(system, plan, { full: false });
      const us = overlapUs(hostUs(system, plan.channels), run.timeUs);
      if (us < bestUs) {
        bestUs = us;
        best = { ...candidate, plan, run };
      }
    } else {
      const us = ncclPredictedUs(system, kind, bytes, candidate.algorithm, candidate.protocol);
      if (us < bestUs) {
        bestUs = us;
        best = candidate;
      }
    }
  }
  return best;
}

export function simulateCollective(
  system: SystemSpec | System,
  request: CollectiveRequest,
  options: SimulateOptions = {},
): CollectiveResult {
  const resolved = asSystem(system);
  const kind = request.kind ?? 'allreduce';
  const bytes: Bytes = request.bytes;
  if (!(bytes >= 0) || !Number.isFinite(bytes))
    throw new EngineError(`bytes must be a non-negative number, got ${bytes}`);
  const dtype = request.dtype ?? 'fp32';
  if (!(dtype in DTYPE_BYTES)) throw new EngineError(`unknown dtype '${dtype}'`);
  // sum, avg (ncclAvg divides on the fly) and premulsum (scales while loading) all fuse into the same pass, so the
  // op does not change the time; it is checked so a typo never passes silently.
  if (request.op !== undefined && request.op !== 'sum' && request.op !== 'avg' && request.op !== 'premulsum')
    throw new EngineError(`unknown op '${String(request.op)}'; use sum, avg or premulsum`);
  // The CLI checks its flags, but API callers pass strings too: a typo is named here rather than failing deep in
  // the cost model's tables.
  const algorithm = request.algorithm ?? 'auto';
  if (algorithm !== 'auto' && !ALGORITHMS.includes(algorithm))
    throw new EngineError(`unknown algorithm '${String(algorithm)}'; use auto or ${ALGORITHMS.join(', ')}`);
  const protocol = request.protocol ?? 'auto';
  if (protocol !== 'auto' && !PROTOCOLS.includes(protocol))
    throw new EngineError(`unknown protocol '${String(protocol)}'; use auto or ${PROTOCOLS.join(', ')}`);
  const pick = choose(resolved, kind, bytes, dtype, algorithm, protocol, {
    ncclProtoSet: request.ncclProtoSet,
  });
  const full = options.path === 'full';
  const reuse = pick.run !== undefined && !full && !request.trace;
  const plan =
    (reuse ? pick.plan : undefined) ??
    schedule(resolved, kind, bytes, pick.algorithm, pick.protocol, !full, request.trace === true);
  const traced: RunResult = reuse
    ? pick.run!
    : runSchedule(resolved, plan, {
        full,
        traceSpanLimit: request.traceSpanLimit,
        recordSpans: request.traceForSummary === true,
        trace: request.trace
          ? {
              origin: 'simulated',
              title: `${kind} ${bytes} B on ${resolved.label}`,
              system: resolved.label,
              ranks: resolved.ranks,
              facts: {
                algorithm: pick.algorithm,
                protocol: pick.protocol,
                channels: plan.channels,
                path: full ? 'full' : 'fast',
              },
            }
          : undefined,
      });
  // A trace cut at its span limit stopped the traced run there: the numbers come from the run without spans. Its
  // schedule is the traced one unless the untraced run reduces an edited system's nodes (see schedule).
  const sameSchedule = full || resolved.nodes === 1 || nodesIdentical(resolved);
  const numbers: RunResult =
    traced.truncated === true
      ? !full && pick.run !== undefined
        ? pick.run
        : runSchedule(
            resolved,
            sameSchedule ? plan : schedule(resolved, kind, bytes, pick.algorithm, pick.protocol, !full),
            { full },
          )
      : traced;
  const run: RunResult = { ...numbers, trace: traced.trace, recorded: traced.recorded, spanCount: traced.spanCount };
  const timeUs = asMicros(overlapUs(hostUs(resolved, plan.channels), run.timeUs));
  const algbw = algbwGBps(bytes, timeUs);
  return {
    kind,
    bytes,
    ranks: resolved.ranks,
    timeUs,
    algbwGBps: algbw,
    busbwGBps: asGBps(algbw * busFactor(kind, resolved.ranks)),
    algorithm: pick.algorithm,
    protocol: pick.protocol,
    channels: plan.channels,
    phases: run.phases,
    trace: run.trace,
    ...(run.recorded ? { recordedSpans: run.recorded } : {}),
    spanCount: run.spanCount,
  };
}

export interface SweepOptions {
  readonly minBytes: Bytes;
  readonly maxBytes: Bytes;
  readonly factor?: number;
  readonly dtype?: Dtype;
  readonly algorithm?: Algorithm | 'auto';
  readonly protocol?: Protocol | 'auto';
  readonly op?: CollectiveRequest['op'];
  /** The collective swept; all-reduce when not named (a measured all-gather is read against an all-gather model). */
  readonly kind?: CollectiveRequest['kind'];
}

/** AllReduce over sizes minBytes, minBytes·factor, … ≤ maxBytes, rounded to whole elements like nccl-tests. */
export function sweepAllReduce(system: SystemSpec | System, options: SweepOptions): SweepRow[] {
  return sweepCollective(system, { ...options, kind: 'allreduce' });
}

/** The collective `options.kind` (all-reduce by default) over the sizes sweepAllReduce takes. */
export function sweepCollective(system: SystemSpec | System, options: SweepOptions): SweepRow[] {
  const resolved = asSystem(system);
  const factor = options.factor ?? 2;
  const dtype = options.dtype ?? 'fp32';
  if (!(factor > 1)) throw new EngineError(`factor must be greater than 1, got ${factor}`);
  if (!(options.minBytes > 0) || !(options.maxBytes >= options.minBytes))
    throw new EngineError('need 0 < minBytes ≤ maxBytes');
  const element = DTYPE_BYTES[dtype];
  const rows: SweepRow[] = [];
  for (let size = options.minBytes; size <= options.maxBytes; size = asBytes(size * factor)) {
    const count = Math.max(1, Math.floor(size / element));
    const bytes = asBytes(count * element);
    const result = simulateCollective(resolved, {
      kind: options.kind ?? 'allreduce',
      bytes,
      dtype,
      algorithm: options.algorithm,
      protocol: options.protocol,
      op: options.op,
    });
    rows.push({
      bytes,
      count,
      dtype,
      timeUs: result.timeUs,
      algbwGBps: result.algbwGBps,
      busbwGBps: result.busbwGBps,
      algorithm: result.algorithm,
      protocol: result.protocol,
    });
  }
  return rows;
}

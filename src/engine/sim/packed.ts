// Flows packed into typed arrays for the solver, and what the runner reads of a round besides: each phase's bytes
// (summed in the flows' order, so the sums round as they always did) and the largest reduction. A builder can make
// these for tens of thousands of flows without a Flow object each (see algorithms/nvls-tree.ts); `pack` makes
// them from Flow objects.
import { allocateFlowSet, type FlowSet } from './maxmin';
import type { Flow, PackedFlows, PhaseRun } from './schedule';

// The shapes live in schedule.ts, which a round carries them in; they are re-exported for the packing's callers.
export type { PackedFlows, PhaseRun };

export function pack(flows: readonly Flow[]): FlowSet {
  let entries = 0;
  for (const flow of flows) entries += flow.resources.length;
  const n = flows.length;
  const set: FlowSet = {
    count: n,
    bytes: new Float64Array(n),
    weight: new Float64Array(n),
    capRate: new Float64Array(n),
    start: new Int32Array(n + 1),
    resource: new Int32Array(entries),
    coefficient: new Float64Array(entries),
  };
  let k = 0;
  for (let f = 0; f < n; f++) {
    const flow = flows[f];
    set.bytes[f] = flow.bytes;
    set.weight[f] = flow.weight;
    set.capRate[f] = flow.capGBps * 1e3;
    set.start[f] = k;
    for (let i = 0; i < flow.resources.length; i++) {
      set.resource[k] = flow.resources[i];
      set.coefficient[k] = flow.coefficients ? flow.coefficients[i] : 1;
      k++;
    }
  }
  set.start[n] = k;
  return set;
}

/** Phase runs of Flow objects, one flow per run. */
export function phaseRuns(flows: readonly Flow[]): PhaseRun[] {
  return flows.map((flow) => ({
    phase: flow.phase,
    term: flow.bytes * flow.weight * (flow.represents ?? 1),
    count: 1,
  }));
}

export function packFlows(flows: readonly Flow[]): PackedFlows {
  let maxReduceBytes = 0;
  for (const flow of flows) maxReduceBytes = Math.max(maxReduceBytes, flow.reduceBytes);
  return { set: pack(flows), runs: phaseRuns(flows), maxReduceBytes };
}

/** The size-free arrays of a concatenation, and the parts' arrays it was made from. */
interface Concatenation {
  readonly parts: readonly FlowSet[];
  readonly start: Int32Array;
  readonly resource: Int32Array;
  readonly coefficient: Float64Array;
  readonly weight: Float64Array;
}

const CONCATENATIONS = new WeakMap<Int32Array, Concatenation>();

/** Whether two sets share every array that does not depend on the message size. */
function sameArrays(a: FlowSet, b: FlowSet): boolean {
  return a.resource === b.resource && a.start === b.start && a.coefficient === b.coefficient && a.weight === b.weight;
}

/**
 * Several packed flow lists as one, in order. When the parts share their size-free arrays with the parts of an
 * earlier concatenation (a sweep's sizes on one tree, see algorithms/tree.ts), its arrays are shared too, so what
 * is derived from them (uniform-round.ts) is computed once; only the sizes and ceilings are copied.
 */
export function concatPacked(parts: readonly PackedFlows[]): PackedFlows {
  let count = 0;
  let entries = 0;
  for (const part of parts) {
    count += part.set.count;
    entries += part.set.resource.length;
  }
  const earlier = parts.length > 0 ? CONCATENATIONS.get(parts[0].set.resource) : undefined;
  const reuse =
    earlier !== undefined &&
    earlier.parts.length === parts.length &&
    parts.every((part, i) => sameArrays(part.set, earlier.parts[i]));
  const set: FlowSet = reuse
    ? {
        count,
        bytes: new Float64Array(count),
        weight: earlier.weight,
        capRate: new Float64Array(count),
        start: earlier.start,
        resource: earlier.resource,
        coefficient: earlier.coefficient,
      }
    : allocateFlowSet(count, entries);
  let f = 0;
  let k = 0;
  const runs: PhaseRun[] = [];
  let maxReduceBytes = 0;
  for (const part of parts) {
    const p = part.set;
    set.bytes.set(p.bytes, f);
    set.capRate.set(p.capRate, f);
    if (!reuse) {
      set.weight.set(p.weight, f);
      for (let i = 0; i < p.count; i++) set.start[f + i] = p.start[i] + k;
      set.resource.set(p.resource, k);
      set.coefficient.set(p.coefficient, k);
    }
    f += p.count;
    k += p.resource.length;
    // One push per run: an edited system's part can hold more runs than a spread call may pass as arguments.
    for (const run of part.runs) runs.push(run);
    maxReduceBytes = Math.max(maxReduceBytes, part.maxReduceBytes);
  }
  if (!reuse) {
    set.start[count] = k;
    if (parts.length > 0) {
      const { start, resource, coefficient, weight } = set;
      CONCATENATIONS.set(parts[0].set.resource, {
        parts: parts.map((p) => p.set),
        start,
        resource,
        coefficient,
        weight,
      });
    }
  }
  return { set, runs, maxReduceBytes };
}

/**
 * Byte shares of each phase when a round mixes phases, or undefined when it has one. The terms are added one by
 * one in flow order, as a loop over the flows adds them.
 */
export function phaseShares(
  runs: readonly PhaseRun[],
): { exchange: number; reduce: number; broadcast: number } | undefined {
  const bytes = { exchange: 0, reduce: 0, broadcast: 0 };
  let kinds = 0;
  for (const run of runs) {
    const phase = run.phase === 'reduce' || run.phase === 'broadcast' ? run.phase : 'exchange';
    for (let i = 0; i < run.count; i++) {
      if (bytes[phase] === 0) kinds++;
      bytes[phase] += run.term;
    }
  }
  const total = bytes.exchange + bytes.reduce + bytes.broadcast;
  if (kinds < 2 || total <= 0) return undefined;
  return { exchange: bytes.exchange / total, reduce: bytes.reduce / total, broadcast: bytes.broadcast / total };
}

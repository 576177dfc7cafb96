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
 * Several packed flow lists as one, as concatPacked joins them, made only when the set is read. Parts timed by one
 * proof (sim/shown-round.ts) are joined into one question to it, and the other parts' flows are handed along for
 * uniformRound to check; parts with a proof of their own, or one that already hands flows along, are not joined.
 */
export function joinPacked(parts: readonly PackedFlows[]): PackedFlows {
  const proofs = new Set(parts.flatMap((part) => (part.shown ? [part.shown.proof] : [])));
  const [proof] = proofs;
  if (proofs.size !== 1 || parts.some((part) => part.shown?.others)) return concatPacked(parts);
  const runs: PhaseRun[] = [];
  let maxReduceBytes = 0;
  const shownParts: number[] = [];
  const others: PackedFlows[] = [];
  for (const part of parts) {
    for (const run of part.runs) runs.push(run);
    maxReduceBytes = Math.max(maxReduceBytes, part.maxReduceBytes);
    if (part.shown) shownParts.push(...part.shown.parts);
    else others.push(part);
  }
  let set: FlowSet | undefined;
  return {
    get set() {
      return (set ??= concatPacked(parts).set);
    },
    runs,
    maxReduceBytes,
    shown: { proof, parts: shownParts, ...(others.length > 0 ? { others: concatPacked(others).set } : {}) },
  };
}

/**
 * Byte shares of each phase when a round mixes phases, or undefined when it has one. The terms are added one by
 * one in flow order, as a loop over the flows adds them.
 */
export function phaseShares(
  runs: readonly PhaseRun[],
): { exchange: number; reduce: number; broadcast: number } | undefined {
  // One phase whose first term is positive counts one kind however its terms add up: no shares, without the sums
  // (a stage of a tree over thousands of nodes adds a term per flow).
  const phaseOf = (run: PhaseRun): string =>
    run.phase === 'reduce' || run.phase === 'broadcast' ? run.phase : 'exchange';
  const first = runs.find((run) => run.count > 0);
  if (first && (first.cycle?.[0] ?? first.term) > 0 && runs.every((run) => phaseOf(run) === phaseOf(first)))
    return undefined;
  // Each phase's sum in an array slot and each run's terms added in a local: the same additions in the same order.
  const bytes = [0, 0, 0];
  let kinds = 0;
  for (const run of runs) {
    const slot = run.phase === 'reduce' ? 1 : run.phase === 'broadcast' ? 2 : 0;
    const cycle = run.cycle;
    let sum = bytes[slot];
    for (let i = 0; i < run.count; i++) {
      if (cycle === undefined) {
        if (sum === 0) kinds++;
        sum += run.term;
        continue;
      }
      for (let j = 0; j < cycle.length; j++) {
        if (sum === 0) kinds++;
        sum += cycle[j];
      }
    }
    bytes[slot] = sum;
  }
  const [exchange, reduce, broadcast] = bytes;
  const total = exchange + reduce + broadcast;
  if (kinds < 2 || total <= 0) return undefined;
  return { exchange: exchange / total, reduce: reduce / total, broadcast: broadcast / total };
}

/**
 * The phase runs of `times` ranks that each repeat one pattern per channel class (classes outer, ranks inner), as
 * phaseRuns gives them for every flow but without a run per flow where it can: phaseShares adds each phase's terms
 * into its own sum, so only the order of each phase's terms matters, and a phase whose pattern holds one term is
 * one run of them all, and one that alternates terms is one run of its cycle.
 */
export function repeatedRuns(patterns: readonly (readonly PhaseRun[])[], times: number): PhaseRun[] {
  const runs: PhaseRun[] = [];
  for (const pattern of patterns) {
    for (const phase of new Set(pattern.map((run) => run.phase))) {
      const own = pattern.filter((run) => run.phase === phase);
      if (own.every((run) => run.term === own[0].term)) {
        let count = 0;
        for (const run of own) count += run.count;
        runs.push({ phase, term: own[0].term, count: count * times });
      } else {
        const cycle: number[] = [];
        for (const run of own) for (let i = 0; i < run.count; i++) cycle.push(run.term);
        runs.push({ phase, term: cycle[0], count: times, cycle });
      }
    }
  }
  return runs;
}

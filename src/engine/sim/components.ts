// Flows that share no resource do not affect each other's max-min rates, so a round splits into independent
// components. Symmetric systems repeat the same component many times (every node's NVSwitch, every rail's ring);
// each distinct component is solved once and its result reused, which keeps thousands of GPUs cheap. Exact: two
// components share a result only when their canonical forms (resources renamed in order of use) are identical.
import { allocateFlowSet, runFlows, type FlowSet, type RoundResult } from './maxmin';
import { twoLevelRound } from './two-level';
import { uniformRound } from './uniform-round';

/** Below this many flows the filling costs little more than the checks that would replace it. */
const TWO_LEVEL_MIN_FLOWS = 64;

interface Entry {
  readonly canonical: Float64Array;
  readonly result: RoundResult;
}

function find(parent: Int32Array, x: number): number {
  while (parent[x] !== x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

export class ComponentSolver {
  private readonly cache = new Map<number, Entry[]>();
  /** Flow counts of the components solved so far: only a component of a count seen twice can repeat one. */
  private readonly seenSizes = new Set<number>();
  private readonly localId: Int32Array;
  /** Components answered by the two-level shortcut (two-level.ts), for the tests that must see it run. */
  twoLevelAnswers = 0;
  private scratch = new Float64Array(1024);

  /**
   * `resourceCount` bounds every resource id the flows may use. `localId` holds 0 for a resource not in use and
   * its local id + 1 while it is: a new array is all zeros without being written, so only the pages of the
   * resources a round uses are ever touched (filling 1.6 M entries with -1 at 131,072 GPUs took 20-30 ms of CPU,
   * nearly all of it page faults).
   */
  constructor(
    private readonly capacityGBps: (resource: number) => number,
    resourceCount: number,
  ) {
    this.localId = new Int32Array(resourceCount);
  }

  solve(flows: FlowSet): RoundResult {
    // Most rounds on identical nodes end in one step at one rate per component: those components are shown exact
    // without grouping them; the rest are solved.
    const uniform = uniformRound(flows, this.capacityGBps, this.localId);
    if (!uniform) return this.solveComponents(flows);
    let rest = 0;
    for (let f = 0; f < flows.count; f++) if (!uniform.solved[f]) rest++;
    if (rest === 0) return uniform;
    const order = new Int32Array(rest);
    for (let f = 0, i = 0; f < flows.count; f++) if (!uniform.solved[f]) order[i++] = f;
    const others = this.solveComponents(this.subset(flows, order, 0, rest));
    const finish = uniform.finishUs;
    for (let i = 0; i < rest; i++) finish[order[i]] = others.finishUs[i];
    return { durationUs: Math.max(uniform.durationUs, others.durationUs), finishUs: finish };
  }

  private solveComponents(flows: FlowSet): RoundResult {
    const n = flows.count;
    const parent = new Int32Array(n);
    for (let f = 0; f < n; f++) parent[f] = f;
    // Union flows that share a resource; localId doubles as "first flow seen on this resource, + 1" here.
    const owner = this.localId;
    for (let f = 0; f < n; f++) {
      for (let k = flows.start[f]; k < flows.start[f + 1]; k++) {
        const r = flows.resource[k];
        const other = owner[r] - 1;
        if (other < 0) owner[r] = f + 1;
        else {
          const a = find(parent, f);
          const b = find(parent, other);
          if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
        }
      }
    }
    for (let k = 0; k < flows.resource.length; k++) owner[flows.resource[k]] = 0;
    // Group flows by component root (counting sort keeps flows in their original order).
    const root = new Int32Array(n);
    const size = new Int32Array(n + 1);
    for (let f = 0; f < n; f++) {
      root[f] = find(parent, f);
      size[root[f] + 1]++;
    }
    for (let f = 0; f < n; f++) size[f + 1] += size[f];
    const order = new Int32Array(n);
    const fill = size.slice(0, n);
    for (let f = 0; f < n; f++) order[fill[root[f]]++] = f;
    const finish = new Float64Array(n);
    // A component whose flow count no other component of this round or an earlier one has cannot equal one, so
    // it is solved without its canonical form (a tree's steady round over 16,384 nodes is one such component).
    const roundSizes = new Map<number, number>();
    for (let c = 0; c < n; c++) {
      const count = size[c + 1] - size[c];
      if (count > 0) roundSizes.set(count, (roundSizes.get(count) ?? 0) + 1);
    }
    let duration = 0;
    for (let c = 0; c < n; c++) {
      const from = size[c];
      const to = size[c + 1];
      if (to === from) continue;
      const count = to - from;
      const unique = roundSizes.get(count) === 1 && !this.seenSizes.has(count);
      this.seenSizes.add(count);
      const result = unique ? this.unique(this.subset(flows, order, from, to)) : this.component(flows, order, from, to);
      for (let i = from; i < to; i++) finish[order[i]] = result.finishUs[i - from];
      duration = Math.max(duration, result.durationUs);
    }
    return { durationUs: duration, finishUs: finish };
  }

  /**
   * A component solved once: a large one that is uniform but for a few slower flows (an edited rail's tree) on those
   * flows and a stand-in for the rest (two-level.ts), any other by the filling.
   */
  private unique(flows: FlowSet): RoundResult {
    const shortcut =
      flows.count >= TWO_LEVEL_MIN_FLOWS ? twoLevelRound(flows, this.capacityGBps, this.localId) : undefined;
    if (!shortcut) return runFlows(flows, this.capacityGBps, this.localId);
    this.twoLevelAnswers++;
    return shortcut;
  }

  private component(flows: FlowSet, order: Int32Array, from: number, to: number): RoundResult {
    // Canonical form: per flow [bytes, weight, cap, entries, (local resource, capacity, coefficient)...].
    let length = 0;
    for (let i = from; i < to; i++) length += 4 + 3 * (flows.start[order[i] + 1] - flows.start[order[i]]);
    if (this.scratch.length < length) this.scratch = new Float64Array(length * 2);
    const canon = this.scratch;
    let p = 0;
    let locals = 0;
    let hash = 2166136261;
    const mix = (x: number): void => {
      const bits = x === Infinity ? 0x7ff00000 : Math.floor(x * 1024) | 0;
      hash = Math.imul(hash ^ bits, 16777619);
    };
    for (let i = from; i < to; i++) {
      const f = order[i];
      const count = flows.start[f + 1] - flows.start[f];
      canon[p++] = flows.bytes[f];
      canon[p++] = flows.weight[f];
      canon[p++] = flows.capRate[f];
      canon[p++] = count;
      mix(flows.bytes[f]);
      mix(count);
      for (let k = flows.start[f]; k < flows.start[f + 1]; k++) {
        const r = flows.resource[k];
        if (this.localId[r] === 0) this.localId[r] = ++locals;
        const local = this.localId[r] - 1;
        canon[p++] = local;
        canon[p++] = this.capacityGBps(r);
        canon[p++] = flows.coefficient[k];
        mix(local);
        mix(canon[p - 2]);
      }
    }
    for (let i = from; i < to; i++) {
      const f = order[i];
      for (let k = flows.start[f]; k < flows.start[f + 1]; k++) this.localId[flows.resource[k]] = 0;
    }
    const bucket = this.cache.get(hash);
    if (bucket) {
      for (const entry of bucket) {
        if (entry.canonical.length !== length) continue;
        let same = true;
        for (let j = 0; j < length && same; j++) same = entry.canonical[j] === canon[j];
        if (same) return entry.result;
      }
    }
    const result = runFlows(this.subset(flows, order, from, to), this.capacityGBps, this.localId);
    const entry = { canonical: canon.slice(0, length), result };
    if (bucket) bucket.push(entry);
    else this.cache.set(hash, [entry]);
    return result;
  }

  private subset(flows: FlowSet, order: Int32Array, from: number, to: number): FlowSet {
    const count = to - from;
    let entries = 0;
    for (let i = from; i < to; i++) entries += flows.start[order[i] + 1] - flows.start[order[i]];
    const set = allocateFlowSet(count, entries);
    let k = 0;
    for (let i = 0; i < count; i++) {
      const f = order[from + i];
      set.bytes[i] = flows.bytes[f];
      set.weight[i] = flows.weight[f];
      set.capRate[i] = flows.capRate[f];
      set.start[i] = k;
      for (let e = flows.start[f]; e < flows.start[f + 1]; e++) {
        set.resource[k] = flows.resource[e];
        set.coefficient[k] = flows.coefficient[e];
        k++;
      }
    }
    set.start[count] = k;
    return set;
  }
}

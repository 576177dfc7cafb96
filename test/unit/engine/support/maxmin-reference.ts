// The progressive filling as it was before the heap (session 4): every step rescans every resource and flow. Kept
// as the reference the heap-based solver must match bit for bit on random flow sets (maxmin-heap.test.ts).
import type { FlowSet, RoundResult } from '../../../../src/engine/sim/maxmin';

const BYTES_PER_US_PER_GBPS = 1e3;

/**
 * Runs flows that start together to completion, sharing each resource's capacity max-min fairly. `capacityGBps`
 * is indexed by resource id. Flows with zero bytes finish at once.
 */
export function runFlowsByRescan(flows: FlowSet, capacityGBps: (resource: number) => number): RoundResult {
  const n = flows.count;
  const finish = new Float64Array(n);
  // Map the resources these flows touch onto a dense local index.
  const local = new Map<number, number>();
  const localOf = new Int32Array(flows.resource.length);
  for (let i = 0; i < flows.resource.length; i++) {
    const r = flows.resource[i];
    let id = local.get(r);
    if (id === undefined) {
      id = local.size;
      local.set(r, id);
    }
    localOf[i] = id;
  }
  const m = local.size;
  const capacity = new Float64Array(m);
  for (const [r, id] of local) capacity[id] = capacityGBps(r) * BYTES_PER_US_PER_GBPS;
  // Inverse index: flows on each resource.
  const countOn = new Int32Array(m + 1);
  for (let i = 0; i < localOf.length; i++) countOn[localOf[i] + 1]++;
  for (let i = 0; i < m; i++) countOn[i + 1] += countOn[i];
  const onStart = countOn.slice();
  const onFlow = new Int32Array(localOf.length);
  const onCoef = new Float64Array(localOf.length);
  const fill = onStart.slice(0, m);
  for (let f = 0; f < n; f++) {
    for (let k = flows.start[f]; k < flows.start[f + 1]; k++) {
      const id = localOf[k];
      onFlow[fill[id]] = f;
      onCoef[fill[id]] = flows.coefficient[k];
      fill[id]++;
    }
  }
  const remaining = new Float64Array(n);
  const rate = new Float64Array(n);
  const active = new Uint8Array(n);
  const frozen = new Uint8Array(n);
  const residual = new Float64Array(m);
  const demand = new Float64Array(m);
  let activeCount = 0;
  for (let f = 0; f < n; f++) {
    remaining[f] = flows.bytes[f];
    if (remaining[f] > 0) {
      active[f] = 1;
      activeCount++;
    }
  }
  let now = 0;
  while (activeCount > 0) {
    // Progressive filling: repeatedly find the tightest resource (or flow ceiling) and fix its flows' rates.
    residual.set(capacity);
    demand.fill(0);
    let unfrozen = 0;
    for (let f = 0; f < n; f++) {
      frozen[f] = active[f] ? 0 : 1;
      if (!active[f]) continue;
      unfrozen++;
      for (let k = flows.start[f]; k < flows.start[f + 1]; k++)
        demand[localOf[k]] += flows.coefficient[k] * flows.weight[f];
    }
    while (unfrozen > 0) {
      let share = Infinity;
      let tight = -1;
      for (let id = 0; id < m; id++) {
        if (demand[id] <= 1e-12) continue;
        const s = residual[id] / demand[id];
        if (s < share) {
          share = s;
          tight = id;
        }
      }
      let capFlow = -1;
      for (let f = 0; f < n; f++)
        if (!frozen[f] && flows.capRate[f] < share) {
          share = flows.capRate[f];
          capFlow = f;
        }
      const byCap = capFlow >= 0;
      if (!byCap && tight < 0) throw new Error('a flow crosses no resource');
      // Fix the rate of every flow held by the tightest constraint and take its use off the other resources.
      const first = byCap ? 0 : onStart[tight];
      const last = byCap ? n : onStart[tight + 1];
      for (let i = first; i < last; i++) {
        const f = byCap ? i : onFlow[i];
        if (frozen[f] || (byCap && flows.capRate[f] > share)) continue;
        frozen[f] = 1;
        rate[f] = share;
        unfrozen--;
        for (let k = flows.start[f]; k < flows.start[f + 1]; k++) {
          const id = localOf[k];
          const use = flows.coefficient[k] * flows.weight[f];
          residual[id] = Math.max(0, residual[id] - use * share);
          demand[id] -= use;
        }
      }
      if (!byCap) demand[tight] = 0;
    }
    let step = Infinity;
    for (let f = 0; f < n; f++) if (active[f]) step = Math.min(step, remaining[f] / rate[f]);
    now += step;
    for (let f = 0; f < n; f++) {
      if (!active[f]) continue;
      remaining[f] -= rate[f] * step;
      if (remaining[f] <= flows.bytes[f] * 1e-12 + 1e-9) {
        active[f] = 0;
        activeCount--;
        finish[f] = now;
      }
    }
  }
  return { durationUs: now, finishUs: finish };
}

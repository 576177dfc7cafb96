// Flow-level sharing of links: max-min fair rates by progressive filling, advanced from one flow completion to
// the next. Typed arrays and index lists only; no allocation inside the loops.

import { ShareHeap } from './share-heap';
import { uniformLevel } from './uniform-level';

/** 1 GB/s moves 1000 bytes per µs. */
const BYTES_PER_US_PER_GBPS = 1e3;

export interface FlowSet {
  readonly count: number;
  readonly bytes: Float64Array;
  readonly weight: Float64Array;
  /** Per-copy rate ceiling in bytes/µs (Infinity when none). */
  readonly capRate: Float64Array;
  /** CSR: resources of flow f are resource[start[f] .. start[f+1]). */
  readonly start: Int32Array;
  readonly resource: Int32Array;
  readonly coefficient: Float64Array;
}

/** An empty flow set of `count` flows and `entries` (flow, resource) pairs, to be filled in place. */
export function allocateFlowSet(count: number, entries: number): FlowSet {
  return {
    count,
    bytes: new Float64Array(count),
    weight: new Float64Array(count),
    capRate: new Float64Array(count),
    start: new Int32Array(count + 1),
    resource: new Int32Array(entries),
    coefficient: new Float64Array(entries),
  };
}

export interface RoundResult {
  /** Time from the first byte to the last, µs. */
  readonly durationUs: number;
  /** When each flow finished, µs from the round's first byte. */
  readonly finishUs: Float64Array;
}

/**
 * Runs flows that start together to completion, sharing each resource's capacity max-min fairly. `capacityGBps`
 * is indexed by resource id. Flows with zero bytes finish at once. `firstRates`, when given, receives each flow's
 * rate (bytes/µs per copy) of the first filling, before any flow finishes (0 for a flow that moves nothing).
 */
export function runFlows(
  flows: FlowSet,
  capacityGBps: (resource: number) => number,
  scratch?: Int32Array,
  firstRates?: Float64Array,
): RoundResult {
  const n = flows.count;
  const finish = new Float64Array(n);
  // Map the resources these flows touch onto a dense local index, in order of first use (the order ties break
  // in). `scratch`, when given, covers every resource id and holds 0 everywhere (a local id + 1 while
  // in use); it is left that way.
  const localOf = new Int32Array(flows.resource.length);
  const globalOf: number[] = [];
  const local = scratch ?? new Map<number, number>();
  if (local instanceof Int32Array) {
    for (let i = 0; i < flows.resource.length; i++) {
      const r = flows.resource[i];
      let id = local[r] - 1;
      if (id < 0) {
        id = globalOf.length;
        local[r] = id + 1;
        globalOf.push(r);
      }
      localOf[i] = id;
    }
    for (const r of globalOf) local[r] = 0;
  } else {
    for (let i = 0; i < flows.resource.length; i++) {
      const r = flows.resource[i];
      let id = local.get(r);
      if (id === undefined) {
        id = globalOf.length;
        local.set(r, id);
        globalOf.push(r);
      }
      localOf[i] = id;
    }
  }
  const m = globalOf.length;
  const capacity = new Float64Array(m);
  for (let id = 0; id < m; id++) capacity[id] = capacityGBps(globalOf[id]) * BYTES_PER_US_PER_GBPS;
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
  // Flows with a finite ceiling, by ceiling and then by index: the order a scan of every flow would find them in.
  const capOrder = cappedFlowsInOrder(flows);
  const heap = new ShareHeap();
  let now = 0;
  let recorded = false;
  while (activeCount > 0) {
    // Progressive filling: repeatedly find the tightest resource (or flow ceiling) and fix its flows' rates. The
    // heap holds every resource's current share, so each step costs a logarithm instead of a scan of all of them.
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
    // One level often freezes every flow (identical nodes' trees and rings): then two linear passes suffice.
    const level = uniformLevel({ ...flows, localOf, active, capacity, demand });
    if (level > 0) {
      for (let f = 0; f < n; f++) if (active[f]) rate[f] = level;
      unfrozen = 0;
    }
    heap.clear();
    if (unfrozen > 0) for (let id = 0; id < m; id++) if (demand[id] > 1e-12) heap.push(residual[id] / demand[id], id);
    let capAt = 0;
    while (unfrozen > 0) {
      let share = Infinity;
      let tight = -1;
      while (heap.length > 0) {
        const id = heap.topId();
        // An entry is current only while its resource still has demand and the share it recorded.
        if (demand[id] > 1e-12 && residual[id] / demand[id] === heap.topShare()) {
          share = heap.topShare();
          tight = id;
          break;
        }
        heap.pop();
      }
      while (capAt < capOrder.length && frozen[capOrder[capAt]]) capAt++;
      const byCap = capAt < capOrder.length && flows.capRate[capOrder[capAt]] < share;
      if (byCap) share = flows.capRate[capOrder[capAt]];
      if (!byCap && tight < 0) throw new Error('a flow crosses no resource');
      // Fix the rate of every flow held by the tightest constraint and take its use off the other resources.
      const held = byCap ? -1 : tight;
      const first = byCap ? capAt : onStart[tight];
      const last = byCap ? capOrder.length : onStart[tight + 1];
      for (let i = first; i < last; i++) {
        const f = byCap ? capOrder[i] : onFlow[i];
        if (byCap && flows.capRate[f] > share) break;
        if (frozen[f]) continue;
        frozen[f] = 1;
        rate[f] = share;
        unfrozen--;
        for (let k = flows.start[f]; k < flows.start[f + 1]; k++) {
          const id = localOf[k];
          const use = flows.coefficient[k] * flows.weight[f];
          residual[id] = Math.max(0, residual[id] - use * share);
          demand[id] -= use;
          if (id !== held && demand[id] > 1e-12) heap.push(residual[id] / demand[id], id);
        }
      }
      if (!byCap) demand[tight] = 0;
    }
    if (firstRates && !recorded) {
      firstRates.set(rate);
      recorded = true;
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

/** Indices of the flows with a finite rate ceiling, sorted by ceiling and, among equal ceilings, by index. */
function cappedFlowsInOrder(flows: FlowSet): Int32Array {
  const capped: number[] = [];
  for (let f = 0; f < flows.count; f++) if (flows.capRate[f] < Infinity) capped.push(f);
  capped.sort((a, b) => flows.capRate[a] - flows.capRate[b] || a - b);
  return Int32Array.from(capped);
}

// A whole round solved without splitting it into components, when every component ends in one step at one level.
// A tree or ring round on thousands of identical nodes is tens of thousands of flows in thousands of components
// (or one large one); grouping them, hashing each for the cache and running the filling cost far more than the
// answer, which is usually one rate per component and one completion.
//
// Exactness. Give each flow the smallest share (capacity / demand) among its resources: its level. When every
// resource carries flows of one level only and of one size only, each component (flows linked by shared resources)
// has one level and one size. Each resource then passes the checks of uniform-level.ts at its level, so the filling
// of each component gives every flow exactly its level (see uniform-level.ts), and each flow finishes after
// bytes / level in one step, as runFlows computes it. When any condition fails the caller runs the components.
//
// Ceilings. A flow whose ceiling lies strictly below its level is capped: its level is the ceiling. Where every flow
// on a resource is capped, at one ceiling and one size, the component's smallest share exceeds the ceiling, so the
// filling's first step freezes every flow of it at exactly the ceiling (no subtraction decides anything) and each
// finishes after bytes / ceiling. Trees of small messages run so: NCCL's per-channel ceiling binds, not a link.
import type { FlowSet } from './maxmin';
import { resourceAtLevel, USE_GRID } from './uniform-level';

/** 1 GB/s moves 1000 bytes per µs (as in maxmin.ts). */
const BYTES_PER_US_PER_GBPS = 1e3;

export interface UniformPart {
  /** Per flow: 1 when its finish time below is shown exact, 0 when its component must be solved. */
  readonly solved: Uint8Array;
  readonly finishUs: Float64Array;
  /** Latest finish among the solved flows, µs. */
  readonly durationUs: number;
}

/**
 * The part of a round that can be shown to finish exactly as solving its components would: whole components, each
 * at one level and one size. Undefined when no flow qualifies. `scratch` covers every resource id and holds 0
 * everywhere (a local id + 1 while in use); it is left that way.
 */
export function uniformRound(
  flows: FlowSet,
  capacityGBps: (resource: number) => number,
  scratch: Int32Array,
): UniformPart | undefined {
  const n = flows.count;
  const { start, bytes, capRate } = flows;
  const { localOf, capacity, demand, entries, smallestUse, offGrid, own } = roundStructure(
    flows,
    capacityGBps,
    scratch,
  );
  const m = capacity.length;
  // A flow is left to the solver when it moves nothing (it finishes at once) or, unless it is capped, when a use is
  // off the exact grid.
  const left = new Uint8Array(n);
  for (let f = 0; f < n; f++) if (!(bytes[f] > 0)) left[f] = 1;
  // Each flow's level, and each resource's level, size and whether its flows are capped (NaN until a flow claims it).
  const level = new Float64Array(n);
  const resourceLevel = new Float64Array(m).fill(NaN);
  const resourceBytes = new Float64Array(m).fill(NaN);
  const resourceCapped = new Uint8Array(m);
  const leftResource = new Uint8Array(m);
  for (let f = 0; f < n; f++) {
    const capped = capRate[f] < own[f] ? 1 : 0;
    if (!(own[f] > 0 && own[f] < Infinity) || (offGrid[f] && !capped)) left[f] = 1;
    const flowLevel = capped ? capRate[f] : own[f];
    level[f] = flowLevel;
    for (let k = start[f]; k < start[f + 1]; k++) {
      const id = localOf[k];
      const claimed = resourceLevel[id];
      // NaN until a flow claims the resource (claimed !== claimed is Number.isNaN without a call per entry).
      if (claimed !== claimed) {
        resourceLevel[id] = flowLevel;
        resourceBytes[id] = bytes[f];
        resourceCapped[id] = capped;
      } else if (claimed !== flowLevel || resourceBytes[id] !== bytes[f] || resourceCapped[id] !== capped)
        leftResource[id] = 1;
    }
  }
  for (let id = 0; id < m; id++) {
    // A resource of capped flows has a share above their ceiling: nothing on it needs to be exact.
    if (leftResource[id] || resourceCapped[id] || !(demand[id] > 1e-12)) continue;
    if (resourceAtLevel(capacity[id], demand[id], entries[id], smallestUse[id], resourceLevel[id]) < 0)
      leftResource[id] = 1;
  }
  if (!closeOverSharing(flows, localOf, left, leftResource)) return undefined;
  // Every solved flow's level is the share of one of its resources, which the checks showed tight and exact there,
  // or its own ceiling, which every flow of its component shares and which lies below all their shares.
  const solved = new Uint8Array(n);
  const finish = new Float64Array(n);
  let duration = 0;
  for (let f = 0; f < n; f++) {
    if (left[f]) continue;
    solved[f] = 1;
    finish[f] = bytes[f] / level[f];
    duration = Math.max(duration, finish[f]);
  }
  return { solved, finishUs: finish, durationUs: duration };
}

/**
 * What the checks read of a round besides its sizes and ceilings: each entry's local resource, each resource's
 * capacity, demand (uses summed in flow order), entry count and smallest use, each flow's own share (the smallest
 * capacity / demand on its path) and whether a use is off the exact grid. The arrays of a set are never written after
 * packing, so a sweep's sizes that share a round's arrays (algorithms/tree.ts) share this too.
 */
export interface RoundStructure {
  readonly start: Int32Array;
  readonly coefficient: Float64Array;
  readonly weight: Float64Array;
  readonly localOf: Int32Array;
  readonly globalOf: Int32Array;
  readonly capacity: Float64Array;
  readonly demand: Float64Array;
  readonly entries: Float64Array;
  readonly smallestUse: Float64Array;
  readonly offGrid: Uint8Array;
  readonly own: Float64Array;
}

const STRUCTURES = new WeakMap<Int32Array, RoundStructure>();

export function roundStructure(
  flows: FlowSet,
  capacityGBps: (resource: number) => number,
  scratch: Int32Array,
): RoundStructure {
  const cached = STRUCTURES.get(flows.resource);
  if (
    cached &&
    cached.start === flows.start &&
    cached.coefficient === flows.coefficient &&
    cached.weight === flows.weight &&
    sameCapacities(cached, capacityGBps)
  )
    return cached;
  const structure = buildStructure(flows, capacityGBps, scratch);
  STRUCTURES.set(flows.resource, structure);
  return structure;
}

/** Whether the capacities read when the structure was built are the ones `capacityGBps` gives now. */
function sameCapacities(structure: RoundStructure, capacityGBps: (resource: number) => number): boolean {
  const { globalOf, capacity } = structure;
  for (let id = 0; id < capacity.length; id++)
    if (capacityGBps(globalOf[id]) * BYTES_PER_US_PER_GBPS !== capacity[id]) return false;
  return true;
}

function buildStructure(
  flows: FlowSet,
  capacityGBps: (resource: number) => number,
  scratch: Int32Array,
): RoundStructure {
  const n = flows.count;
  const { start, resource, coefficient, weight } = flows;
  const localOf = new Int32Array(resource.length);
  const globalOf = new Int32Array(resource.length);
  let m = 0;
  for (let k = 0; k < resource.length; k++) {
    const r = resource[k];
    let id = scratch[r] - 1;
    if (id < 0) {
      id = m++;
      scratch[r] = id + 1;
      globalOf[id] = r;
    }
    localOf[k] = id;
  }
  for (let id = 0; id < m; id++) scratch[globalOf[id]] = 0;
  const demand = new Float64Array(m);
  const entries = new Float64Array(m);
  const smallestUse = new Float64Array(m).fill(Infinity);
  const offGrid = new Uint8Array(n);
  for (let f = 0; f < n; f++) {
    for (let k = start[f]; k < start[f + 1]; k++) {
      const use = coefficient[k] * weight[f];
      if (!Number.isInteger(use * USE_GRID)) offGrid[f] = 1;
      const id = localOf[k];
      demand[id] += use;
      entries[id]++;
      if (use < smallestUse[id]) smallestUse[id] = use;
    }
  }
  // Each resource's share (capacity / demand) is divided once, not once per entry; a resource without demand
  // takes no part, as Infinity takes none in a minimum.
  const capacity = new Float64Array(m);
  const shareOf = new Float64Array(m);
  for (let id = 0; id < m; id++) {
    capacity[id] = capacityGBps(globalOf[id]) * BYTES_PER_US_PER_GBPS;
    shareOf[id] = demand[id] > 1e-12 ? capacity[id] / demand[id] : Infinity;
  }
  const own = new Float64Array(n);
  for (let f = 0; f < n; f++) {
    let share = Infinity;
    for (let k = start[f]; k < start[f + 1]; k++) {
      const s = shareOf[localOf[k]];
      // Math.min without a call per entry: the smaller, and NaN once either is NaN.
      if (s < share || s !== s) share = s;
    }
    own[f] = share;
  }
  return {
    start,
    coefficient,
    weight,
    localOf,
    globalOf: globalOf.slice(0, m),
    capacity,
    demand,
    entries,
    smallestUse,
    offGrid,
    own,
  };
}

/**
 * Leaves to the solver every flow linked to a left flow or resource through shared resources, so that what
 * remains is whole components. Returns whether any flow remains.
 */
function closeOverSharing(flows: FlowSet, localOf: Int32Array, left: Uint8Array, leftResource: Uint8Array): boolean {
  const n = flows.count;
  const { start } = flows;
  // Sweep the flows until nothing changes: a sweep carries the marks forward along the flow order, so a left
  // component that is not spread across the whole order settles in a few sweeps (and usually nothing is left).
  let changed = left.includes(1) || leftResource.includes(1);
  while (changed) {
    changed = false;
    for (let f = 0; f < n; f++) {
      let mark = left[f] === 1;
      for (let k = start[f]; k < start[f + 1] && !mark; k++) mark = leftResource[localOf[k]] === 1;
      if (!mark) continue;
      if (!left[f]) {
        left[f] = 1;
        changed = true;
      }
      for (let k = start[f]; k < start[f + 1]; k++) {
        if (!leftResource[localOf[k]]) {
          leftResource[localOf[k]] = 1;
          changed = true;
        }
      }
    }
  }
  for (let f = 0; f < n; f++) if (!left[f]) return true;
  return false;
}

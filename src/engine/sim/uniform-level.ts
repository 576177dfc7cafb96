// A shortcut for progressive filling when one water level freezes every flow. Rounds of NCCL's trees and rings on
// identical nodes usually end that way: every flow crosses a link loaded like the most loaded one, so all flows get
// the same rate in the first step. The heap-based filling reaches that result after one pick per tight link and a
// heap entry per touched link; this check reaches it with two linear passes, and only when it can prove that the
// heap-based filling gives every flow exactly the same rate, bit for bit.
//
// Why the proof holds. Let s be the smallest share (residual / demand) of any resource. The filling freezes the
// flows of the tightest resource at s and subtracts use × s from every resource they cross. For a tight resource
// (share s) whose capacity is exactly s × demand, whose uses lie on a grid of 2^-16 and whose products s × (any
// partial demand) fit in 53 bits, every subtraction is exact, so its share stays exactly s until its last flow is
// frozen. A resource whose share is above s only rises when flows leave it at s (removing a flow below the mean
// raises the mean), so with a margin that covers the rounding of its subtractions it never drops to s. Every flow
// crosses a tight resource (or has a ceiling of exactly s), so every flow is frozen at s before the level moves.

/** Uses (coefficient × weight) on this grid make every partial demand exact. */
export const USE_GRID = 65536;
/** Demands below this on the grid stay exact integers in a double. */
export const MAX_GRID_DEMAND = 2 ** 53;

const bitsView = new DataView(new ArrayBuffer(8));

/** Trailing zero bits of a non-zero 32-bit integer. */
function trailingZeros(x: number): number {
  return 31 - Math.clz32(x & -x);
}

/** Number of bits between the highest and the lowest set bit of a positive finite double (53 when subnormal). */
export function significandBits(value: number): number {
  bitsView.setFloat64(0, value, true);
  const low = bitsView.getUint32(0, true);
  const high = bitsView.getUint32(4, true);
  if ((high & 0x7ff00000) === 0) return 53;
  const fraction = high & 0xfffff;
  // The 52 stored fraction bits follow an implicit leading one.
  const zeros = low !== 0 ? trailingZeros(low) : fraction !== 0 ? 32 + trailingZeros(fraction) : 52;
  return 53 - zeros;
}

export interface LevelInput {
  readonly count: number;
  readonly start: Int32Array;
  readonly coefficient: Float64Array;
  readonly weight: Float64Array;
  readonly capRate: Float64Array;
  /** Local resource of each entry. */
  readonly localOf: Int32Array;
  /** Flows still moving (1) or done (0). */
  readonly active: Uint8Array;
  /** Capacity of each local resource, bytes/µs. */
  readonly capacity: Float64Array;
  /** Sum of uses of the active flows on each local resource, as the filling computed it. */
  readonly demand: Float64Array;
}

/**
 * The rate every active flow gets when one level freezes them all and the heap-based filling provably gives each
 * of them exactly that rate; -1 when that cannot be shown (the caller then runs the filling).
 */
export function uniformLevel(input: LevelInput): number {
  const { count, start, coefficient, weight, capRate, localOf, active, capacity, demand } = input;
  const m = capacity.length;
  let level = Infinity;
  for (let id = 0; id < m; id++) if (demand[id] > 1e-12) level = Math.min(level, capacity[id] / demand[id]);
  if (!(level > 0 && level < Infinity)) return -1;
  // Per resource: entries of active flows, and the smallest use among them.
  const entries = new Float64Array(m);
  const smallestUse = new Float64Array(m).fill(Infinity);
  for (let f = 0; f < count; f++) {
    if (!active[f]) continue;
    if (capRate[f] < level) return -1; // A ceiling below the level freezes that flow first.
    for (let k = start[f]; k < start[f + 1]; k++) {
      const use = coefficient[k] * weight[f];
      if (!Number.isInteger(use * USE_GRID)) return -1;
      const id = localOf[k];
      entries[id]++;
      if (use < smallestUse[id]) smallestUse[id] = use;
    }
  }
  const tight = new Uint8Array(m);
  for (let id = 0; id < m; id++) {
    const d = demand[id];
    if (!(d > 1e-12)) continue;
    const verdict = resourceAtLevel(capacity[id], d, entries[id], smallestUse[id], level);
    if (verdict < 0) return -1;
    tight[id] = verdict;
  }
  for (let f = 0; f < count; f++) {
    if (!active[f] || capRate[f] === level) continue;
    let held = false;
    for (let k = start[f]; k < start[f + 1] && !held; k++) held = tight[localOf[k]] === 1;
    if (!held) return -1;
  }
  return level;
}

/** significandBits of the last level asked for: a round has few levels and many resources at each. */
let lastLevel = NaN;
let lastLevelBits = 53;
function levelBits(level: number): number {
  if (level !== lastLevel) {
    lastLevel = level;
    lastLevelBits = significandBits(level);
  }
  return lastLevelBits;
}

/**
 * Whether a resource (capacity and demand in bytes/µs, its active entries and their smallest use) keeps the filling
 * at `level` exact: 1 when it is tight there and every subtraction from it is exact, 0 when its share stays above
 * the level whatever its subtractions round to, -1 when neither can be shown.
 */
export function resourceAtLevel(
  capacity: number,
  demand: number,
  entries: number,
  smallestUse: number,
  level: number,
): number {
  if (demand * USE_GRID >= MAX_GRID_DEMAND) return -1;
  const share = capacity / demand;
  if (share === level) {
    // Exact: capacity = level × demand, and level × every partial demand fits in a double.
    if (levelBits(level) + Math.ceil(Math.log2(demand * USE_GRID + 1)) > 53) return -1;
    return level * demand === capacity ? 1 : -1;
  }
  // Each of `entries` subtractions rounds by at most 2^-52 of the capacity; a share above the level by more than
  // that error relative to the smallest remaining demand stays above it.
  const slack = (entries * (demand / smallestUse) + 2) * 2 ** -50;
  return share * (1 - slack) > level ? 0 : -1;
}

// One round of NVLSTree's trees timed from the classes of nvls-tree-node-classes.ts: the per-edge proof's checks
// (nvls-tree-classes.ts) in the same arithmetic, per role, leaf class, edge type and node or leaf type instead of
// per node, leaf and edge. Sums are each role's or leaf class's uses added one by one (exact on the 2^-16 grid below
// 2^53, as checked); a flow's level is its edge type's; a resource's flows are at one level and capped state when
// its node's or leaf's type says so, and resourceAtLevel is asked with the role's or leaf class's sums.
import { MAX_GRID_DEMAND, USE_GRID, resourceAtLevel } from '../sim/uniform-level';
import type { TreeClasses } from './nvls-tree-node-classes';

/** What every tree flow of rail 0 shares: its size, ceiling, weight per tree and the memory charge. */
export interface TreeFlowTerms {
  readonly wireBytes: number;
  /** Per-channel ceiling, bytes/µs. */
  readonly capRate: number;
  readonly weights: readonly number[];
  /** Coefficient of the receiver's memory on a reduction, or 0 when reductions charge none. */
  readonly memoryCoefficient: number;
}

/** Capacities, bytes/µs: a node's three sending links, three receiving links and memory; every leaf's up and down. */
export interface ClassCapacities {
  readonly node: Float64Array;
  readonly leafUp: number;
  readonly leafDown: number;
}

const SEND = 0;
const RECEIVE = 1;
const MEMORY = 2;

/** Sums of uses per resource: demand, entries and smallest use, added one use at a time. */
class Sums {
  readonly demand: Float64Array;
  readonly entries: Float64Array;
  readonly smallest: Float64Array;
  readonly share: Float64Array;
  constructor(size: number) {
    this.demand = new Float64Array(size);
    this.entries = new Float64Array(size);
    this.smallest = new Float64Array(size).fill(Infinity);
    this.share = new Float64Array(size).fill(Infinity);
  }
  add(id: number, use: number, times: number): void {
    for (let i = 0; i < times; i++) {
      this.demand[id] += use;
      this.entries[id]++;
      if (use < this.smallest[id]) this.smallest[id] = use;
    }
  }
  /** Each touched resource's share over its links (capacities from `first`, `links` of them); false past 2^53. */
  shares(id: number, capacities: Float64Array, first: number, links: number): boolean {
    const d = this.demand[id];
    if (this.entries[id] === 0) return true;
    if (!(d * USE_GRID < MAX_GRID_DEMAND)) return false;
    let s = Infinity;
    for (let i = first; i < first + links; i++) {
      const linkShare = d > 1e-12 ? capacities[i] / d : Infinity;
      if (linkShare < s) s = linkShare;
    }
    this.share[id] = s;
    return true;
  }
  /** resourceAtLevel on each link, as uniformRound asks it of a resource whose flows are not capped. */
  atLevel(id: number, level: number, capacities: Float64Array, first: number, links: number): boolean {
    const d = this.demand[id];
    if (!(d > 1e-12)) return true;
    for (let i = first; i < first + links; i++)
      if (resourceAtLevel(capacities[i], d, this.entries[id], this.smallest[id], level) < 0) return false;
    return true;
  }
}

/**
 * Each resource's one level and capped state (−1: no flow yet), claimed by each of its flows in turn: false when
 * two differ. Plain arrays and indexed loops throughout: this runs a few dozen times, mostly before the optimising
 * compiler has seen it, where an iterator or an object per claim costs more than the work.
 */
function take(levels: Float64Array, cappedAt: Int8Array, at: number, level: number, capped: number): boolean {
  if (cappedAt[at] < 0) {
    levels[at] = level;
    cappedAt[at] = capped;
    return true;
  }
  return levels[at] === level && cappedAt[at] === capped;
}

/**
 * The round of the given stages (depth, direction) timed from the classes, or undefined where uniformRound would not
 * solve every flow at its level (the per-edge proof's verdict, bit for bit).
 */
export function classRoundUs(
  k: TreeClasses,
  stages: readonly { depth: number; up: boolean }[],
  terms: TreeFlowTerms,
  capacity: ClassCapacities,
): number | undefined {
  const { wireBytes, capRate, weights, memoryCoefficient } = terms;
  if (!(wireBytes > 0)) return undefined;
  const T = k.trees;
  const D = k.depths;
  const up = new Uint8Array(D + 2);
  const down = new Uint8Array(D + 2);
  for (let i = 0; i < stages.length; i++) (stages[i].up ? up : down)[stages[i].depth] = 1;
  const reduceUse = (w: number): number => memoryCoefficient * w;
  // Each role's sums: a node sends to its parent going up and to its children going down, and receives the reverse.
  const roles = k.roleDepth.length / T;
  const node = new Sums(3 * roles);
  for (let r = 0; r < roles; r++) {
    for (let c = 0; c < T; c++) {
      const depth = k.roleDepth[r * T + c];
      const children = k.roleChildren[r * T + c];
      const w = weights[c];
      if (depth >= 1 && up[depth]) node.add(3 * r + SEND, w, 1);
      if (depth >= 1 && down[depth]) node.add(3 * r + RECEIVE, w, 1);
      if (children > 0 && up[depth + 1]) {
        node.add(3 * r + RECEIVE, w, children);
        if (memoryCoefficient !== 0) node.add(3 * r + MEMORY, reduceUse(w), children);
      }
      if (children > 0 && down[depth + 1]) node.add(3 * r + SEND, w, children);
    }
  }
  for (let r = 0; r < roles; r++) {
    if (!node.shares(3 * r + SEND, capacity.node, 0, 3)) return undefined;
    if (!node.shares(3 * r + RECEIVE, capacity.node, 3, 3)) return undefined;
    if (!node.shares(3 * r + MEMORY, capacity.node, 6, 1)) return undefined;
  }
  // Each leaf class's uplink (flows leaving) and downlink (flows entering) sums.
  const leafClasses = k.leafOut.length / (T * D);
  const leaf = new Sums(2 * leafClasses);
  const leafCapacities = Float64Array.of(capacity.leafUp, capacity.leafDown);
  for (let l = 0; l < leafClasses; l++) {
    for (let c = 0; c < T; c++) {
      for (let d = 1; d <= D; d++) {
        const out = k.leafOut[(l * T + c) * D + d - 1];
        const into = k.leafIn[(l * T + c) * D + d - 1];
        if (up[d]) {
          leaf.add(2 * l, weights[c], out);
          leaf.add(2 * l + 1, weights[c], into);
        }
        if (down[d]) {
          leaf.add(2 * l, weights[c], into);
          leaf.add(2 * l + 1, weights[c], out);
        }
      }
    }
    if (!leaf.shares(2 * l, leafCapacities, 0, 1) || !leaf.shares(2 * l + 1, leafCapacities, 1, 1)) return undefined;
  }
  // Each edge type's flow up and down: its level, the smallest share on its way, and whether its ceiling holds it.
  const E = k.edgeTree.length;
  const level = new Float64Array(2 * E);
  const capped = new Uint8Array(2 * E);
  let duration = 0;
  for (let e = 0; e < E; e++) {
    const d = k.edgeDepth[e];
    for (let dir = 0; dir < 2; dir++) {
      const goingUp = dir === 0;
      if (!(goingUp ? up[d] : down[d])) continue;
      const childRole = k.edgeChildRole[e];
      const parentRole = k.edgeParentRole[e];
      const s = goingUp ? childRole : parentRole;
      const r = goingUp ? parentRole : childRole;
      let own = node.share[3 * s + SEND];
      if (node.share[3 * r + RECEIVE] < own) own = node.share[3 * r + RECEIVE];
      if (goingUp && memoryCoefficient !== 0 && node.share[3 * r + MEMORY] < own) own = node.share[3 * r + MEMORY];
      if (k.edgeChildLeaf[e] >= 0) {
        const ls = goingUp ? k.edgeChildLeaf[e] : k.edgeParentLeaf[e];
        const lr = goingUp ? k.edgeParentLeaf[e] : k.edgeChildLeaf[e];
        if (leaf.share[2 * ls] < own) own = leaf.share[2 * ls];
        if (leaf.share[2 * lr + 1] < own) own = leaf.share[2 * lr + 1];
      }
      if (!(own > 0 && own < Infinity)) return undefined;
      const flowCapped = capRate < own ? 1 : 0;
      const flowLevel = flowCapped ? capRate : own;
      level[2 * e + dir] = flowLevel;
      capped[2 * e + dir] = flowCapped;
      duration = Math.max(duration, wireBytes / flowLevel);
    }
  }
  // Every node type: the flows on each of its resources at one level, then each resource at that level. Types of
  // one role mostly ask the same question of its sums: the level last asked per role's resource is kept.
  const claimed = new Float64Array(3);
  const claimedCapped = new Int8Array(3);
  const asked = new Float64Array(3 * roles).fill(NaN);
  for (let t = 0; t < k.nodeTypeRole.length; t++) {
    claimedCapped.fill(-1);
    const codes = k.nodeTypeEdges[t];
    for (let i = 0; i < codes.length; i++) {
      const e = codes[i] >> 1;
      const asParent = (codes[i] & 1) === 1;
      const d = k.edgeDepth[e];
      // Going up the child sends and the parent receives (and reduces); going down the reverse.
      if (up[d]) {
        const at = asParent ? RECEIVE : SEND;
        if (!take(claimed, claimedCapped, at, level[2 * e], capped[2 * e])) return undefined;
        if (asParent && memoryCoefficient !== 0 && !take(claimed, claimedCapped, MEMORY, level[2 * e], capped[2 * e]))
          return undefined;
      }
      if (down[d] && !take(claimed, claimedCapped, asParent ? SEND : RECEIVE, level[2 * e + 1], capped[2 * e + 1]))
        return undefined;
    }
    const r = k.nodeTypeRole[t];
    for (let at = SEND; at <= MEMORY; at++) {
      if (claimedCapped[at] !== 0 || asked[3 * r + at] === claimed[at]) continue;
      const first = at === SEND ? 0 : at === RECEIVE ? 3 : 6;
      if (!node.atLevel(3 * r + at, claimed[at], capacity.node, first, at === MEMORY ? 1 : 3)) return undefined;
      asked[3 * r + at] = claimed[at];
    }
  }
  // Every leaf type: its uplink's flows (leaving, slot 0) and its downlink's (entering, slot 1) alike, then each
  // link at its level.
  for (let t = 0; t < k.leafTypeClass.length; t++) {
    claimedCapped.fill(-1);
    const codes = k.leafTypeEdges[t];
    for (let i = 0; i < codes.length; i++) {
      const e = codes[i] >> 1;
      const parentInside = (codes[i] & 1) === 1;
      const d = k.edgeDepth[e];
      // Going up a flow leaves its child's leaf and enters its parent's; going down the reverse.
      if (up[d] && !take(claimed, claimedCapped, parentInside ? 1 : 0, level[2 * e], capped[2 * e])) return undefined;
      if (down[d] && !take(claimed, claimedCapped, parentInside ? 0 : 1, level[2 * e + 1], capped[2 * e + 1]))
        return undefined;
    }
    const l = k.leafTypeClass[t];
    if (claimedCapped[0] === 0 && !leaf.atLevel(2 * l, claimed[0], leafCapacities, 0, 1)) return undefined;
    if (claimedCapped[1] === 0 && !leaf.atLevel(2 * l + 1, claimed[1], leafCapacities, 1, 1)) return undefined;
  }
  return duration;
}

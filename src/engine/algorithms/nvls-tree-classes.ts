// NVLSTree's tree rounds on identical nodes, timed without their flows. Rail 0 stands for every rail there, but its
// trees still have a flow per node and tree (8,188 in the stages and as many in the steady round at 2,048 nodes),
// each routed, packed and checked one entry at a time by the uniform-round proof (sim/uniform-round.ts). That proof
// reads a round through per-resource sums only: each resource's demand, entry count and smallest use, and each flow's
// smallest share. A rail-0 tree flow from node s to node r crosses exactly: s's three NIC-side sending links (GPU to
// its PCIe switch, switch to NIC, NIC to leaf), when s and r sit under different leaves the uplink of s's leaf and
// the downlink of r's, r's three receiving links, and on a reduction r's memory. So the resources fall into classes
// of one node's sending links, one node's receiving links, one node's memory and one leaf's up- or downlink, whose
// members carry the same flows; the sums are taken per class, with each link's own capacity.
//
// Exactness. Every use is a weight (or the memory coefficient times it) on uniform-level.ts's 2^-16 grid, checked,
// and every demand stays below 2^53 of that grid, so every partial sum is exact and the order of the additions does
// not matter. The checks are uniformRound's, in the same arithmetic: a flow is solved when its smallest share is
// positive and finite, every resource carries flows of one level, one size and one capped state, and each resource
// whose flows are not capped passes resourceAtLevel. When every flow is solved the round lasts max(bytes / level),
// uniformRound's duration; when any check fails the proof declines and the runner solves the packed flows as before.
// The layout the classes rely on (a constant stride between nodes' NIC-side links, one uplink and one downlink per
// leaf, memories after the links) is read from routes between sample nodes, and the proof declines where it differs.
import type { System } from '../topology/model';
import type { ClassProof } from '../sim/shown-round';
import { MAX_GRID_DEMAND, USE_GRID, resourceAtLevel } from '../sim/uniform-level';
import { classRoundUs, type ClassCapacities, type TreeFlowTerms } from './nvls-tree-class-round';
import { buildTreeClasses, type DepthEdges, type TreeClasses } from './nvls-tree-node-classes';
import { railLayout } from './nvls-tree-rail';

export type { DepthEdges } from './nvls-tree-node-classes';
export type { TreeFlowTerms } from './nvls-tree-class-round';

/** The proof of one run, with its two ways of reaching the verdict apart for the property test. */
export interface NvlsTreeProof extends ClassProof {
  /** The verdict from every tree edge (the unreduced computation). */
  edgeDurationUs(parts: readonly number[], capacityGBps: (resource: number) => number): number | undefined;
  /**
   * The verdict from the classes (nvls-tree-node-classes.ts), or null where they do not apply: classes that could
   * not be keyed, or leaves whose links differ in capacity.
   */
  classDurationUs(parts: readonly number[], capacityGBps: (resource: number) => number): number | undefined | null;
}

/** 1 GB/s moves 1000 bytes per µs (as in maxmin.ts). */
const BYTES_PER_US_PER_GBPS = 1e3;

/**
 * The proof for one NVLSTree run: `stages` lists each stage's depth (1-based) and direction in pipeline order, the
 * parts the runner names. Undefined when the layout is not the one described above.
 */
export function nvlsTreeClassProof(
  system: System,
  depths: readonly DepthEdges[],
  parents: readonly Int32Array[],
  stages: readonly { depth: number; up: boolean }[],
  terms: TreeFlowTerms,
): NvlsTreeProof | undefined {
  const layout = railLayout(system);
  if (!layout) return undefined;
  for (const w of terms.weights) {
    if (!(w > 0) || !Number.isInteger(w * USE_GRID)) return undefined;
    if (terms.memoryCoefficient !== 0 && !Number.isInteger(terms.memoryCoefficient * w * USE_GRID)) return undefined;
  }
  const nodes = system.nodes;
  const perLeaf = system.fabric.network!.nodesPerLeaf;
  const leaves = layout.leafUp.length;
  // Classes of resources: each node's sending links, receiving links and memory, each leaf's uplink and downlink.
  const SEND = 0;
  const RECEIVE = nodes;
  const MEMORY = 2 * nodes;
  const UP = 3 * nodes;
  const DOWN = 3 * nodes + leaves;
  const count = 3 * nodes + 2 * leaves;
  const demand = new Float64Array(count);
  const entries = new Float64Array(count);
  const smallestUse = new Float64Array(count).fill(Infinity);
  const share = new Float64Array(count);
  const level = new Float64Array(count).fill(NaN);
  const capped = new Uint8Array(count);
  const mixed = new Uint8Array(count);
  const touched = new Int32Array(count);
  const marked = new Uint8Array(count);
  let touchedCount = 0;
  const { wireBytes, capRate, weights, memoryCoefficient } = terms;

  // Capacities of each class's links, bytes/µs: node 0's NIC-side links and memory stand for every node's (the
  // nodes are identical, which is what lets rail 0 of node 0's layout stand for all here), each leaf's own links.
  const SEND_LINKS = 0;
  const RECEIVE_LINKS = 3;
  const MEMORY_LINK = 6;
  const LEAF_LINKS = 7;
  const capacity = new Float64Array(LEAF_LINKS + 2 * leaves);
  const readCapacities = (capacityGBps: (r: number) => number): boolean => {
    for (let i = 0; i < 3; i++) {
      capacity[SEND_LINKS + i] = capacityGBps(layout.send[i]) * BYTES_PER_US_PER_GBPS;
      capacity[RECEIVE_LINKS + i] = capacityGBps(layout.receive[i]) * BYTES_PER_US_PER_GBPS;
    }
    capacity[MEMORY_LINK] = capacityGBps(layout.memoryBase) * BYTES_PER_US_PER_GBPS;
    for (let l = 0; l < leaves && leaves > 1; l++) {
      capacity[LEAF_LINKS + l] = capacityGBps(layout.leafUp[l]) * BYTES_PER_US_PER_GBPS;
      capacity[LEAF_LINKS + leaves + l] = capacityGBps(layout.leafDown[l]) * BYTES_PER_US_PER_GBPS;
    }
    for (let i = 0; i < capacity.length; i++) if (!(capacity[i] >= 0)) return false;
    return true;
  };
  /** The first of a class's links in `capacity`, and how many. */
  const linksOf = (id: number): number =>
    id < RECEIVE ? SEND_LINKS : id < MEMORY ? RECEIVE_LINKS : id < UP ? MEMORY_LINK : LEAF_LINKS + (id - UP);
  const linkCount = (id: number): number => (id < MEMORY ? 3 : 1);

  const add = (id: number, use: number): void => {
    if (!marked[id]) {
      marked[id] = 1;
      touched[touchedCount++] = id;
    }
    demand[id] += use;
    entries[id]++;
    if (use < smallestUse[id]) smallestUse[id] = use;
  };

  const claim = (id: number, flowLevel: number, flowCapped: number): void => {
    const claimed = level[id];
    if (claimed !== claimed) {
      level[id] = flowLevel;
      capped[id] = flowCapped;
    } else if (claimed !== flowLevel || capped[id] !== flowCapped) mixed[id] = 1;
  };

  const evaluate = (parts: readonly number[], capacityGBps: (r: number) => number): number | undefined => {
    if (!(wireBytes > 0)) return undefined;
    // Pass 1: each class's demand, entries and smallest use.
    for (const part of parts) {
      const { depth, up } = stages[part];
      const { trees, nodes: children } = depths[depth - 1];
      const reduce = up && memoryCoefficient !== 0;
      for (let i = 0; i < trees.length; i++) {
        const w = weights[trees[i]];
        const child = children[i];
        const parent = parents[trees[i]][child];
        const s = up ? child : parent;
        const r = up ? parent : child;
        add(SEND + s, w);
        add(RECEIVE + r, w);
        if (reduce) add(MEMORY + r, memoryCoefficient * w);
        const ls = Math.floor(s / perLeaf);
        const lr = Math.floor(r / perLeaf);
        if (ls !== lr) {
          add(UP + ls, w);
          add(DOWN + lr, w);
        }
      }
    }
    // Each class's share: the smallest of its links' capacity / demand.
    if (!readCapacities(capacityGBps)) return undefined;
    for (let t = 0; t < touchedCount; t++) {
      const id = touched[t];
      const d = demand[id];
      if (!(d * USE_GRID < MAX_GRID_DEMAND)) return undefined;
      const first = linksOf(id);
      const last = first + linkCount(id);
      let s = Infinity;
      for (let i = first; i < last; i++) {
        const linkShare = d > 1e-12 ? capacity[i] / d : Infinity;
        if (linkShare < s) s = linkShare;
      }
      share[id] = s;
    }
    // Pass 2: each flow's level, claimed on every class it crosses.
    let duration = 0;
    for (const part of parts) {
      const { depth, up } = stages[part];
      const { trees, nodes: children } = depths[depth - 1];
      const reduce = up && memoryCoefficient !== 0;
      for (let i = 0; i < trees.length; i++) {
        const child = children[i];
        const parent = parents[trees[i]][child];
        const s = up ? child : parent;
        const r = up ? parent : child;
        const ls = Math.floor(s / perLeaf);
        const lr = Math.floor(r / perLeaf);
        let own = share[SEND + s];
        if (share[RECEIVE + r] < own) own = share[RECEIVE + r];
        if (reduce && share[MEMORY + r] < own) own = share[MEMORY + r];
        if (ls !== lr) {
          if (share[UP + ls] < own) own = share[UP + ls];
          if (share[DOWN + lr] < own) own = share[DOWN + lr];
        }
        if (!(own > 0 && own < Infinity)) return undefined;
        const flowCapped = capRate < own ? 1 : 0;
        const flowLevel = flowCapped ? capRate : own;
        claim(SEND + s, flowLevel, flowCapped);
        claim(RECEIVE + r, flowLevel, flowCapped);
        if (reduce) claim(MEMORY + r, flowLevel, flowCapped);
        if (ls !== lr) {
          claim(UP + ls, flowLevel, flowCapped);
          claim(DOWN + lr, flowLevel, flowCapped);
        }
        duration = Math.max(duration, wireBytes / flowLevel);
      }
    }
    // Pass 3: every link of every class at its level, as uniformRound checks each resource. Most nodes' classes
    // ask the same question: the last answer per link is kept.
    const asked = new Float64Array(capacity.length * 4).fill(NaN);
    for (let t = 0; t < touchedCount; t++) {
      const id = touched[t];
      if (mixed[id]) return undefined;
      if (capped[id] || !(demand[id] > 1e-12)) continue;
      const first = linksOf(id);
      const last = first + linkCount(id);
      for (let i = first; i < last; i++) {
        const q = 4 * i;
        if (
          asked[q] === demand[id] &&
          asked[q + 1] === entries[id] &&
          asked[q + 2] === smallestUse[id] &&
          asked[q + 3] === level[id]
        )
          continue;
        if (resourceAtLevel(capacity[i], demand[id], entries[id], smallestUse[id], level[id]) < 0) return undefined;
        asked[q] = demand[id];
        asked[q + 1] = entries[id];
        asked[q + 2] = smallestUse[id];
        asked[q + 3] = level[id];
      }
    }
    return duration;
  };

  const reset = (): void => {
    for (let t = 0; t < touchedCount; t++) {
      const id = touched[t];
      demand[id] = 0;
      entries[id] = 0;
      smallestUse[id] = Infinity;
      level[id] = NaN;
      capped[id] = 0;
      mixed[id] = 0;
      marked[id] = 0;
    }
    touchedCount = 0;
  };

  const edgeDurationUs = (parts: readonly number[], capacityGBps: (r: number) => number): number | undefined => {
    try {
      return evaluate(parts, capacityGBps);
    } finally {
      reset();
    }
  };

  // The classes, made on the first round, and the capacities each capacity function gives them (read once per
  // function: the runner's and the test's are pure functions of the resource).
  let classes: TreeClasses | undefined | null = null;
  const capacitiesOf = new WeakMap<(r: number) => number, ClassCapacities | null>();
  const classCapacities = (capacityGBps: (r: number) => number): ClassCapacities | null => {
    let known = capacitiesOf.get(capacityGBps);
    if (known === undefined) {
      known = uniformCapacities(capacityGBps);
      capacitiesOf.set(capacityGBps, known);
    }
    return known;
  };
  /** Node 0's links for every node's, and one capacity for every leaf's uplink and one for every downlink. */
  const uniformCapacities = (capacityGBps: (r: number) => number): ClassCapacities | null => {
    const node = new Float64Array(7);
    for (let i = 0; i < 3; i++) {
      node[i] = capacityGBps(layout.send[i]) * BYTES_PER_US_PER_GBPS;
      node[3 + i] = capacityGBps(layout.receive[i]) * BYTES_PER_US_PER_GBPS;
    }
    node[6] = capacityGBps(layout.memoryBase) * BYTES_PER_US_PER_GBPS;
    let leafUp = 0;
    let leafDown = 0;
    for (let l = 0; l < leaves && leaves > 1; l++) {
      const upGBps = capacityGBps(layout.leafUp[l]) * BYTES_PER_US_PER_GBPS;
      const downGBps = capacityGBps(layout.leafDown[l]) * BYTES_PER_US_PER_GBPS;
      if (l === 0) {
        leafUp = upGBps;
        leafDown = downGBps;
      } else if (!Object.is(upGBps, leafUp) || !Object.is(downGBps, leafDown)) return null;
    }
    return { node, leafUp, leafDown };
  };
  const classDurationUs = (
    parts: readonly number[],
    capacityGBps: (r: number) => number,
  ): number | undefined | null => {
    if (classes === null) classes = buildTreeClasses(nodes, perLeaf, depths, parents);
    const capacities = classes && classCapacities(capacityGBps);
    if (!classes || !capacities) return null;
    // As the per-edge proof's readCapacities: a capacity that is not a number ≥ 0 declines.
    if (!capacities.node.every((c) => c >= 0) || !(capacities.leafUp >= 0 && capacities.leafDown >= 0))
      return undefined;
    return classRoundUs(
      classes,
      parts.map((part) => stages[part]),
      terms,
      capacities,
    );
  };

  const ownIds = [...layout.send, ...layout.receive];
  return {
    durationUs(parts, capacityGBps) {
      const byClasses = classDurationUs(parts, capacityGBps);
      return byClasses === null ? edgeDurationUs(parts, capacityGBps) : byClasses;
    },
    edgeDurationUs,
    classDurationUs,
    mayCross(resource) {
      if (resource >= layout.memoryBase) return resource < layout.memoryBase + system.ranks;
      for (let l = 0; l < leaves; l++)
        if (resource === layout.leafUp[l] || resource === layout.leafDown[l]) return true;
      for (const o of ownIds) if (resource >= o && (resource - o) % layout.stride === 0) return true;
      return false;
    },
  };
}

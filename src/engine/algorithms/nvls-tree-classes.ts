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
import { memoryResource } from '../sim/run';
import type { ClassProof } from '../sim/shown-round';
import { MAX_GRID_DEMAND, USE_GRID, resourceAtLevel } from '../sim/uniform-level';

/** 1 GB/s moves 1000 bytes per µs (as in maxmin.ts). */
const BYTES_PER_US_PER_GBPS = 1e3;

/** One depth of the trees: tree (channel class) and child node of each edge, in build order. */
export interface DepthEdges {
  readonly trees: Int32Array;
  readonly nodes: Int32Array;
}

/** What every tree flow of rail 0 shares: its size, ceiling, weight per tree and the memory charge. */
export interface TreeFlowTerms {
  readonly wireBytes: number;
  /** Per-channel ceiling, bytes/µs. */
  readonly capRate: number;
  readonly weights: readonly number[];
  /** Coefficient of the receiver's memory on a reduction, or 0 when reductions charge none. */
  readonly memoryCoefficient: number;
}

/** The resource ids a rail-0 tree flow crosses, read from sample routes; undefined when the layout differs. */
interface RailLayout {
  readonly send: readonly number[];
  readonly receive: readonly number[];
  /** Distance between consecutive nodes' NIC-side link ids. */
  readonly stride: number;
  readonly leafUp: Int32Array;
  readonly leafDown: Int32Array;
  readonly memoryBase: number;
}

function railLayout(system: System): RailLayout | undefined {
  const network = system.fabric.network;
  const g = system.gpusPerNode;
  const nodes = system.nodes;
  if (!network || nodes < 2) return undefined;
  const perLeaf = network.nodesPerLeaf;
  const leaves = Math.ceil(nodes / perLeaf);
  const last = nodes - 1;
  const out0 = network.routeParts(0, g, 0);
  const in0 = network.routeParts(g, 0, 0);
  const outLast = network.routeParts(last * g, 0, 0);
  const inLast = network.routeParts(0, last * g, 0);
  const send = out0.send;
  const receive = in0.receive;
  if (send.length !== 3 || receive.length !== 3) return undefined;
  const stride = in0.send[0] - send[0];
  const shifted = (a: readonly number[], b: readonly number[], k: number): boolean =>
    a.length === b.length && a.every((id, i) => id === b[i] + k * stride);
  if (!shifted(in0.send, send, 1) || !shifted(out0.receive, receive, 1)) return undefined;
  if (!shifted(outLast.send, send, last) || !shifted(inLast.receive, receive, last)) return undefined;
  // A node's six NIC-side links are distinct and within one stride, so no two nodes' links meet.
  const own = [...send, ...receive];
  if (new Set(own).size !== 6 || Math.max(...own) - Math.min(...own) >= stride) return undefined;
  // Routes within a leaf cross no shared link; across leaves, their uplink and downlink.
  const sameLeaf = (a: number, b: number): boolean => Math.floor(a / perLeaf) === Math.floor(b / perLeaf);
  if (sameLeaf(0, 1) && out0.shared.length !== 0) return undefined;
  // Under one leaf no route crosses a shared link: the ids stay -1, which no resource has.
  const leafUp = new Int32Array(leaves).fill(-1);
  const leafDown = new Int32Array(leaves).fill(-1);
  for (let l = 0; l < leaves && leaves > 1; l++) {
    const node = l * perLeaf;
    const other = l === 0 ? perLeaf : 0;
    const out = network.routeParts(node * g, other * g, 0).shared;
    const into = network.routeParts(other * g, node * g, 0).shared;
    if (out.length !== 2 || into.length !== 2) return undefined;
    leafUp[l] = out[0];
    leafDown[l] = into[1];
  }
  const linkCount = memoryResource(system, 0);
  if (leaves > 1 && new Set([...leafUp, ...leafDown]).size !== 2 * leaves) return undefined;
  for (let l = 0; l < leaves && leaves > 1; l++) {
    for (const id of [leafUp[l], leafDown[l]]) {
      if (id >= linkCount) return undefined;
      if (own.some((o) => id >= o && (id - o) % stride === 0 && (id - o) / stride < nodes)) return undefined;
    }
  }
  return { send, receive, stride, leafUp, leafDown, memoryBase: memoryResource(system, 0) };
}

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
): ClassProof | undefined {
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

  const ownIds = [...layout.send, ...layout.receive];
  return {
    durationUs(parts, capacityGBps) {
      try {
        return evaluate(parts, capacityGBps);
      } finally {
        reset();
      }
    },
    mayCross(resource) {
      if (resource >= layout.memoryBase) return resource < layout.memoryBase + system.ranks;
      for (let l = 0; l < leaves; l++)
        if (resource === layout.leafUp[l] || resource === layout.leafDown[l]) return true;
      for (const o of ownIds) if (resource >= o && (resource - o) % layout.stride === 0) return true;
      return false;
    },
  };
}

// The uniform-round shortcut (src/engine/sim/uniform-round.ts) and the uniform-level one inside the filling
// (uniform-level.ts) may only answer when their answer is the solver's, bit for bit. Random flow sets shaped like
// the rounds of trees and rings (many flows at one level, integer weights, round and not-so-round capacities,
// memory coefficients on and off the exact grid, a few odd flows) are checked flow by flow against the rescan
// reference run on each flow's own component, which is how the component solver runs them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FlowSet } from '../../../src/engine/sim/maxmin';
import { ComponentSolver } from '../../../src/engine/sim/components';
import { uniformRound } from '../../../src/engine/sim/uniform-round';
import { significandBits } from '../../../src/engine/sim/uniform-level';
import { runFlowsByRescan } from './support/maxmin-reference';
import { random, pick } from './support/random';

interface Case {
  readonly flows: FlowSet;
  readonly capacityGBps: (r: number) => number;
  readonly resources: number;
}

/** A round like a tree's or a ring's: nodes with out and in links, flows between nodes, some memory charges. */
function treeLikeRound(next: () => number): Case {
  const nodes = 2 + Math.floor(next() * 40);
  // Resources: node k's out link 2k, in link 2k+1, memory 2·nodes + k, then a few shared "leaf" links.
  const leafLinks = 1 + Math.floor(next() * 3);
  const resources = 3 * nodes + leafLinks;
  const linkGBps = pick(next, [48, 49.5, 50 * 0.99, 25, 100 / 3]);
  const oddNode = next() < 0.3 ? Math.floor(next() * nodes) : -1;
  const capacities = Array.from({ length: resources }, (_, r) => {
    if (r >= 2 * nodes + nodes) return pick(next, [1584, 48 * 32, 40]);
    if (r >= 2 * nodes) return 3350;
    return Math.floor(r / 2) === oddNode ? linkGBps / 4 : linkGBps;
  });
  // Rings and trees (up and down) as the algorithms build them, or random pairs.
  const shape = pick(next, ['ring', 'tree', 'random'] as const);
  const pairs: [number, number][] = [];
  if (shape === 'ring') for (let k = 0; k < nodes; k++) pairs.push([k, (k + 1) % nodes]);
  else if (shape === 'tree') for (let k = 1; k < nodes; k++) pairs.push([k, (k - 1) >> 1], [(k - 1) >> 1, k]);
  else
    for (let i = 1 + Math.floor(next() * 3 * nodes); i > 0; i--) {
      const from = Math.floor(next() * nodes);
      pairs.push([from, (from + 1 + Math.floor(next() * (nodes - 1))) % nodes]);
    }
  const count = pairs.length;
  const weights = [pick(next, [1, 2, 8]), pick(next, [1, 2, 3, 8])];
  const bytes = pick(next, [65536, 1e6, 4096 / 0.9375]);
  const memoryCoefficient = pick(next, [3, 2.8125, 3 * 0.9]);
  const memoryCharged = next() < 0.5;
  // Trees of small messages: every flow under one per-channel ceiling (NCCL's), below or near the links' shares.
  const sharedCap = next() < 0.3 ? pick(next, [1e3, 5e3, 12e3, 24e3, 48e3 / 3]) : undefined;
  const start = new Int32Array(count + 1);
  const resource: number[] = [];
  const coefficient: number[] = [];
  const byteList = new Float64Array(count);
  const weight = new Float64Array(count);
  const capRate = new Float64Array(count);
  for (let f = 0; f < count; f++) {
    const [from, to] = pairs[f];
    start[f] = resource.length;
    byteList[f] = next() < 0.01 ? bytes / 2 : bytes;
    weight[f] = pick(next, weights);
    capRate[f] =
      sharedCap !== undefined && next() < 0.99 ? sharedCap : next() < 0.98 ? pick(next, [30e3, Infinity]) : 1e3;
    resource.push(2 * from);
    coefficient.push(1);
    if (next() < 0.1) {
      resource.push(3 * nodes + Math.floor(next() * leafLinks));
      coefficient.push(1);
    }
    resource.push(2 * to + 1);
    coefficient.push(1);
    if (memoryCharged) {
      resource.push(2 * nodes + to);
      coefficient.push(next() < 0.01 ? 1 / 0.9 : memoryCoefficient);
    }
  }
  start[count] = resource.length;
  const flows: FlowSet = {
    count,
    bytes: byteList,
    weight,
    capRate,
    start,
    resource: Int32Array.from(resource),
    coefficient: Float64Array.from(coefficient),
  };
  return { flows, capacityGBps: (r) => capacities[r], resources };
}

/** The flows of one component, in order, and where they came from. */
function components(flows: FlowSet): number[][] {
  const parent = Array.from({ length: flows.count }, (_, f) => f);
  const find = (x: number): number => (parent[x] === x ? x : (parent[x] = find(parent[x])));
  const owner = new Map<number, number>();
  for (let f = 0; f < flows.count; f++) {
    for (let k = flows.start[f]; k < flows.start[f + 1]; k++) {
      const other = owner.get(flows.resource[k]);
      if (other === undefined) owner.set(flows.resource[k], f);
      else parent[find(f)] = find(other);
    }
  }
  const groups = new Map<number, number[]>();
  for (let f = 0; f < flows.count; f++) groups.set(find(f), [...(groups.get(find(f)) ?? []), f]);
  return [...groups.values()];
}

function subset(flows: FlowSet, members: readonly number[]): FlowSet {
  const resource: number[] = [];
  const coefficient: number[] = [];
  const start = new Int32Array(members.length + 1);
  members.forEach((f, i) => {
    start[i] = resource.length;
    for (let k = flows.start[f]; k < flows.start[f + 1]; k++) {
      resource.push(flows.resource[k]);
      coefficient.push(flows.coefficient[k]);
    }
  });
  start[members.length] = resource.length;
  return {
    count: members.length,
    bytes: Float64Array.from(members, (f) => flows.bytes[f]),
    weight: Float64Array.from(members, (f) => flows.weight[f]),
    capRate: Float64Array.from(members, (f) => flows.capRate[f]),
    start,
    resource: Int32Array.from(resource),
    coefficient: Float64Array.from(coefficient),
  };
}

/** Every flow's finish time from the rescan reference run on its own component. */
function referenceFinish(flows: FlowSet, capacityGBps: (r: number) => number): Float64Array {
  const finish = new Float64Array(flows.count);
  for (const members of components(flows)) {
    const result = runFlowsByRescan(subset(flows, members), capacityGBps);
    members.forEach((f, i) => (finish[f] = result.finishUs[i]));
  }
  return finish;
}

test('the uniform round answers only with the solver’s finish times, bit for bit (3,000 random rounds)', () => {
  let solvedFlows = 0;
  let leftFlows = 0;
  let wholeRounds = 0;
  let cappedSolved = 0;
  for (let seed = 1; seed <= 3000; seed++) {
    const { flows, capacityGBps, resources } = treeLikeRound(random(seed));
    const reference = referenceFinish(flows, capacityGBps);
    const part = uniformRound(flows, capacityGBps, new Int32Array(resources));
    if (part) {
      for (let f = 0; f < flows.count; f++) {
        if (!part.solved[f]) {
          leftFlows++;
          continue;
        }
        solvedFlows++;
        if (part.finishUs[f] === flows.bytes[f] / flows.capRate[f]) cappedSolved++;
        assert.equal(part.finishUs[f], reference[f], `seed ${seed}: flow ${f}`);
      }
      if (part.solved.every((s) => s === 1)) wholeRounds++;
    } else leftFlows += flows.count;
    // The component solver (shortcut, then the rest by components) gives the reference's times too.
    const solved = new ComponentSolver(capacityGBps, resources).solve(flows);
    assert.deepEqual(Array.from(solved.finishUs), Array.from(reference), `seed ${seed}: component solver`);
  }
  // The shapes are drawn so that the shortcut both answers and declines often: the comparison means something.
  assert.ok(solvedFlows > 8000, `only ${solvedFlows} flows solved by the shortcut`);
  assert.ok(leftFlows > 20000, `only ${leftFlows} flows left to the solver`);
  assert.ok(wholeRounds > 200, `only ${wholeRounds} whole rounds solved by the shortcut`);
  assert.ok(cappedSolved > 3000, `only ${cappedSolved} flows solved at their ceiling`);
});

test('significandBits counts the bits between the highest and lowest set bit', () => {
  assert.equal(significandBits(1), 1);
  assert.equal(significandBits(1500), 9); // 0b10111011100
  assert.equal(significandBits(0.75), 2);
  assert.equal(significandBits(2 ** 53 - 1), 53);
  assert.equal(significandBits(1 / 3), 53);
  assert.equal(significandBits(49.5), 7); // 0b110001.1
});

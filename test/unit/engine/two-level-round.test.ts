// A component uniform but for a few slower flows is solved on those flows and one stand-in for the rest
// (sim/two-level.ts). Wherever that shortcut answers, its answer must be the filling's over every flow, bit for bit:
// the duration and every flow's finish. Random regular "trees" of send and receive links (every link carrying the
// same number of flows, as identical nodes' trees do) get degraded or faster links, a shared uplink, reductions
// into a memory, ceilings, nodes with fewer flows and flows of another size, so the checks both pass and refuse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runFlows, type FlowSet } from '../../../src/engine/sim/maxmin';
import { twoLevelRound } from '../../../src/engine/sim/two-level';
import { random, pick } from './support/random';

interface Drawn {
  readonly flows: FlowSet;
  readonly capacityGBps: (resource: number) => number;
  readonly resources: number;
}

/** Nodes 0..a−1 each send `degree` flows to nodes at fixed offsets; link capacities in GB/s. */
function regularFlows(next: () => number): Drawn {
  const a = pick(next, [8, 16, 24, 40, 64]);
  const degree = pick(next, [2, 3, 4]);
  const offsets = [1, 2, 3, 5].slice(0, degree);
  const weight = pick(next, [1, 8]);
  const bytes = pick(next, [65536, 524288, 1e6]);
  const withUplink = next() < 0.5;
  const withMemory = next() < 0.5;
  // Resources: send links 0..a−1, receive links a..2a−1, memories 2a..3a−1, the uplink 3a.
  const capacity = new Float64Array(3 * a + 1);
  for (let i = 0; i < 2 * a; i++) capacity[i] = 48;
  for (let i = 2 * a; i < 3 * a; i++) capacity[i] = pick(next, [3350, 200]);
  capacity[3 * a] = pick(next, [48 * a, 24 * a, 1e5]);
  // Some nodes send one flow fewer (a tree's roots and leaves), which may leave them at another level.
  const fewer = next() < 0.3 ? Math.floor(next() * a) : -1;
  const edited = 1 + Math.floor(next() * 2);
  for (let e = 0; e < edited; e++) {
    const link = Math.floor(next() * (withUplink ? 2 * a + 1 : 2 * a));
    const at = link === 2 * a ? 3 * a : link;
    capacity[at] *= pick(next, [0.25, 0.5, 0.9, 1.5]);
  }
  const bytesOf: number[] = [];
  const weightOf: number[] = [];
  const capOf: number[] = [];
  const start: number[] = [];
  const resource: number[] = [];
  const coefficient: number[] = [];
  const odd = next() < 0.15 ? Math.floor(next() * a * degree) : -1;
  const capped = next() < 0.2 ? pick(next, [100, 1500, 6000]) : Infinity;
  for (let i = 0; i < a; i++) {
    for (let j = 0; j < degree; j++) {
      if (i === fewer && j === degree - 1) continue;
      const to = (i + offsets[j]) % a;
      start.push(resource.length);
      bytesOf.push(bytesOf.length === odd ? bytes / 2 : bytes);
      weightOf.push(weight);
      capOf.push(next() < 0.5 ? capped : Infinity);
      resource.push(i);
      coefficient.push(1);
      if (withUplink && (i + j) % 3 === 0) {
        resource.push(3 * a);
        coefficient.push(1);
      }
      resource.push(a + to);
      coefficient.push(1);
      if (withMemory) {
        resource.push(2 * a + to);
        coefficient.push(3);
      }
    }
  }
  const count = bytesOf.length;
  start.push(resource.length);
  const flows: FlowSet = {
    count,
    bytes: Float64Array.from(bytesOf),
    weight: Float64Array.from(weightOf),
    capRate: Float64Array.from(capOf),
    start: Int32Array.from(start),
    resource: Int32Array.from(resource),
    coefficient: Float64Array.from(coefficient),
  };
  return { flows, capacityGBps: (r) => capacity[r], resources: capacity.length };
}

test('where the two-level shortcut answers, it is the filling over every flow, bit for bit', () => {
  let answered = 0;
  let refused = 0;
  for (let seed = 1; seed <= 600; seed++) {
    const next = random(17000 + seed);
    const { flows, capacityGBps, resources } = regularFlows(next);
    const scratch = new Int32Array(resources);
    const shortcut = twoLevelRound(flows, capacityGBps, scratch);
    assert.ok(
      scratch.every((x) => x === 0),
      `seed ${17000 + seed}: the scratch array is left as it was`,
    );
    if (!shortcut) {
      refused++;
      continue;
    }
    answered++;
    const full = runFlows(flows, capacityGBps);
    assert.equal(shortcut.durationUs, full.durationUs, `seed ${17000 + seed}: duration`);
    assert.deepEqual(shortcut.finishUs, full.finishUs, `seed ${17000 + seed}: finish times`);
  }
  // Both outcomes must be common, or the test compares nothing (or the checks refuse nothing).
  assert.ok(answered >= 100, `the shortcut answered ${answered} of 600`);
  assert.ok(refused >= 100, `the shortcut refused ${refused} of 600`);
});

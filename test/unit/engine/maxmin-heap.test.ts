// The heap-based progressive filling must give the very same rates as the rescan it replaced: the same tightest
// constraint at every step (ties to the lowest resource id, then ceilings by index), the same subtractions in the
// same order, so every finish time is bit for bit the reference's. Random flow sets cover ties (many equal links
// and equal ceilings), shared and repeated resources, weights, memory coefficients and zero-byte flows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runFlows, type FlowSet } from '../../../src/engine/sim/maxmin';
import { runFlowsByRescan } from './support/maxmin-reference';
import { random } from './support/random';

function randomFlows(next: () => number): { flows: FlowSet; capacityGBps: (r: number) => number } {
  const resources = 1 + Math.floor(next() * 40);
  // Few distinct capacities, bytes and ceilings, so equal shares (ties) are the rule rather than the exception.
  const capacities = Array.from({ length: resources }, () => [25, 50, 50, 100, 450][Math.floor(next() * 5)]);
  const count = 1 + Math.floor(next() * 60);
  const bytes = new Float64Array(count);
  const weight = new Float64Array(count);
  const capRate = new Float64Array(count);
  const start = new Int32Array(count + 1);
  const resource: number[] = [];
  const coefficient: number[] = [];
  for (let f = 0; f < count; f++) {
    bytes[f] = next() < 0.05 ? 0 : [1e5, 1e6, 1e6, 4e6][Math.floor(next() * 4)] * (next() < 0.2 ? next() : 1);
    weight[f] = 1 + Math.floor(next() * 4);
    capRate[f] = next() < 0.5 ? Infinity : [2e3, 5e3, 5e3, 2e4][Math.floor(next() * 4)];
    start[f] = resource.length;
    const hops = 1 + Math.floor(next() * 4);
    for (let h = 0; h < hops; h++) {
      // A host-staged route crosses one link twice: repeats are allowed.
      resource.push(Math.floor(next() * resources));
      coefficient.push(next() < 0.8 ? 1 : 0.5 + next() * 2);
    }
  }
  start[count] = resource.length;
  const flows: FlowSet = {
    count,
    bytes,
    weight,
    capRate,
    start,
    resource: Int32Array.from(resource),
    coefficient: Float64Array.from(coefficient),
  };
  return { flows, capacityGBps: (r) => capacities[r] };
}

test('the heap-based filling equals the rescan bit for bit (2,000 random flow sets)', () => {
  let events = 0;
  for (let seed = 1; seed <= 2000; seed++) {
    const { flows, capacityGBps } = randomFlows(random(seed));
    const fast = runFlows(flows, capacityGBps);
    const reference = runFlowsByRescan(flows, capacityGBps);
    assert.equal(fast.durationUs, reference.durationUs, `seed ${seed}: duration`);
    assert.deepEqual(Array.from(fast.finishUs), Array.from(reference.finishUs), `seed ${seed}: finish times`);
    events += new Set(reference.finishUs).size;
  }
  // Many distinct completion times per set: the comparison exercises re-filling after flows finish.
  assert.ok(events > 10000, `only ${events} distinct completions`);
});

test('a flow that crosses no resource and has no ceiling is refused by both', () => {
  const flows: FlowSet = {
    count: 1,
    bytes: Float64Array.of(1e6),
    weight: Float64Array.of(1),
    capRate: Float64Array.of(Infinity),
    start: Int32Array.of(0, 0),
    resource: new Int32Array(0),
    coefficient: new Float64Array(0),
  };
  assert.throws(() => runFlows(flows, () => 10), /crosses no resource/);
  assert.throws(() => runFlowsByRescan(flows, () => 10), /crosses no resource/);
});

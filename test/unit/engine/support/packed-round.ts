// A packed round must hold exactly what packing its Flow objects gives: the arrays, the phase byte runs and the
// largest reduction. Shared by the tree and NVLSTree packing tests.
import assert from 'node:assert/strict';
import { pack, phaseRuns, phaseShares, type PackedFlows } from '../../../../src/engine/sim/packed';
import type { Flow } from '../../../../src/engine/sim/schedule';

export function assertPackedMatchesFlows(packed: PackedFlows, flows: readonly Flow[], where: string): void {
  const expected = pack(flows);
  const actual = packed.set;
  assert.equal(actual.count, expected.count, `${where}: count`);
  for (const key of ['bytes', 'weight', 'capRate', 'start', 'resource', 'coefficient'] as const)
    assert.deepEqual(Array.from(actual[key]), Array.from(expected[key]), `${where}: ${key}`);
  assert.deepEqual(phaseShares(packed.runs), phaseShares(phaseRuns(flows)), `${where}: shares`);
  const maxReduce = flows.reduce((max, flow) => Math.max(max, flow.reduceBytes), 0);
  assert.equal(packed.maxReduceBytes, maxReduce, `${where}: largest reduction`);
}

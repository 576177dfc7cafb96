// Pricing collectives from a few simulated anchor sizes: exact where the algorithm stays the same, refined
// where it switches, and far fewer simulations than distinct sizes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CollectiveCoster, type CollectivePricer } from '../../../src/engine/training/collective-cost';
import { presetSystem, resolveSystem, asBytes, asMicros } from '../../../src/engine/index';

const SYSTEM = resolveSystem(presetSystem('dgx-h100', { nodes: 2 })!);
const OPTIONS = { algorithm: 'auto' as const, protocol: 'auto' as const, op: 'avg' as const };
const SWITCH_BYTES = 3_000_000;

/** Two affine regimes: a latency-bound tree below 3 MB, a bandwidth-bound ring above. */
const twoRegimes: CollectivePricer = (_system, _kind, bytes) => {
  const tree = bytes < SWITCH_BYTES;
  const timeUs = asMicros(tree ? 20 + bytes / 20e3 : 60 + bytes / 80e3);
  return {
    timeUs,
    algorithm: tree ? 'tree' : 'ring',
    protocol: tree ? 'LL128' : 'Simple',
    phases: { exchange: timeUs, reduce: asMicros(0), broadcast: asMicros(0) },
  };
};

test('inside one regime the interpolated time equals the simulated one', () => {
  const coster = new CollectiveCoster(SYSTEM, OPTIONS, twoRegimes);
  for (const bytes of [5_000_000, 9_437_184, 26_214_400, 90_177_536, 1_000_000]) {
    const priced = coster.cost('allreduce', asBytes(bytes), 'bf16');
    assert.ok(
      Math.abs(priced.timeUs - twoRegimes(SYSTEM, 'allreduce', asBytes(bytes), 'bf16', OPTIONS).timeUs) < 1e-9,
      String(bytes),
    );
  }
});

test('across a switch the anchors are refined and the error stays within the refined interval', () => {
  const coster = new CollectiveCoster(SYSTEM, OPTIONS, twoRegimes);
  const bytes = asBytes(2_900_000);
  const priced = coster.cost('allreduce', bytes, 'bf16');
  const truth = twoRegimes(SYSTEM, 'allreduce', bytes, 'bf16', OPTIONS);
  assert.ok(Math.abs(priced.timeUs - truth.timeUs) / truth.timeUs < 0.05, `${priced.timeUs} vs ${truth.timeUs}`);
  assert.ok(coster.simulations <= 2 + 3);
});

test('hundreds of distinct bucket sizes cost a handful of simulations, each cached', () => {
  let calls = 0;
  const counting: CollectivePricer = (...args) => (calls++, twoRegimes(...args));
  const coster = new CollectiveCoster(SYSTEM, OPTIONS, counting);
  for (let i = 0; i < 300; i++) coster.cost('allreduce', asBytes(26_214_400 + i * 8192), 'bf16');
  assert.equal(calls, coster.simulations);
  assert.ok(calls <= 3, `${calls} simulations`);
  const exact = new CollectiveCoster(SYSTEM, OPTIONS, counting, false);
  calls = 0;
  for (let i = 0; i < 10; i++) exact.cost('allreduce', asBytes(26_214_400 + i * 8192), 'bf16');
  assert.equal(calls, 10);
});

test('one rank or zero bytes cost nothing and simulate nothing', () => {
  const coster = new CollectiveCoster(
    resolveSystem({ gpu: 'H100-SXM', nodes: 1, gpusPerNode: 1, intraNode: 'nvswitch' }),
    OPTIONS,
    twoRegimes,
  );
  assert.equal(coster.cost('allreduce', asBytes(1 << 20), 'bf16').timeUs, 0);
  assert.equal(coster.simulations, 0);
});

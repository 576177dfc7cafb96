// The textbook case: N GPUs on a ring of identical links (bandwidth B, latency α), ring algorithm, Simple protocol.
// The simulated time must match 2(N−1)/N·S/B + 2(N−1)·α.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simulateCollective, type SystemSpec, asGBps, asMicros, asBytes } from '../../../src/engine/index';

function uniformRing(gpus: number, linkGBps: number, linkLatencyUs: number): SystemSpec {
  return {
    gpu: 'H100-SXM',
    nodes: 1,
    gpusPerNode: gpus,
    intraNode: 'uniform-ring',
    overrides: { linkGBps: asGBps(linkGBps), linkLatencyUs: asMicros(linkLatencyUs) },
  };
}

test('uniform ring matches 2(N−1)/N·S/B + 2(N−1)·α within 1% for N = 2..64', () => {
  const cases = [
    { B: 25, alpha: 2, bytes: 64 * 1024 * 1024 },
    { B: 100, alpha: 0.5, bytes: 1024 * 1024 * 1024 },
    { B: 12, alpha: 5, bytes: 256 * 1024 },
  ];
  for (const { B, alpha, bytes } of cases) {
    for (let n = 2; n <= 64; n++) {
      const result = simulateCollective(uniformRing(n, B, alpha), {
        bytes: asBytes(bytes),
        algorithm: 'ring',
        protocol: 'Simple',
      });
      const expectedUs = ((2 * (n - 1)) / n) * (bytes / (B * 1e3)) + 2 * (n - 1) * alpha;
      const error = Math.abs(result.timeUs - expectedUs) / expectedUs;
      assert.ok(
        error < 0.01,
        `N=${n} B=${B} α=${alpha} S=${bytes}: simulated ${result.timeUs} µs, formula ${expectedUs} µs`,
      );
    }
  }
});

test('uniform ring: doubling the link bandwidth halves the bandwidth term only', () => {
  const bytes = asBytes(512 * 1024 * 1024);
  const slow = simulateCollective(uniformRing(8, 20, 3), { bytes, algorithm: 'ring', protocol: 'Simple' }).timeUs;
  const fast = simulateCollective(uniformRing(8, 40, 3), { bytes, algorithm: 'ring', protocol: 'Simple' }).timeUs;
  const latencyUs = 2 * 7 * 3;
  assert.ok(Math.abs((slow - latencyUs) / (fast - latencyUs) - 2) < 0.01);
});

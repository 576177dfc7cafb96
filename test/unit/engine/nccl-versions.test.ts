// NCCL's choices follow its release: the tables a version string selects, the switch to NVLSTree that moves with
// them on two H100 nodes, and the simulator charging that release's per-step latencies but not its bandwidth formula.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  EngineError,
  ncclTuner,
  presetSystem,
  resolveSystem,
  simulateCollective,
  type SystemSpec,
  asBytes,
} from '../../../src/engine/index';

const MiB = 1 << 20;
const twoNodes: SystemSpec = presetSystem('dgx-h100', { nodes: 2 })!;
const on = (ncclVersion?: string) => resolveSystem({ ...twoNodes, ...(ncclVersion ? { ncclVersion } : {}) });

test('a version string selects the tables of the nearest documented release, keeping the version given', () => {
  const cases: [string | undefined, string, string][] = [
    [undefined, '2.30', '2.30.7'],
    ['2.30.7', '2.30', '2.30.7'],
    ['2.28.3', '2.30', '2.28.3'],
    ['2.27.7', '2.27', '2.27.7'],
    ['2.26.2+cuda12.4', '2.27', '2.26.2'],
    ['2.21.5', '2.21', '2.21.5'],
    ['2.18.5', '2.18', '2.18.5'],
    ['2.20.3', '2.18', '2.20.3'],
    ['2.12', '2.10-2.17', '2.12'],
  ];
  for (const [given, tables, version] of cases) {
    const tuner = ncclTuner(given);
    assert.deepEqual([tuner.tables, tuner.version], [tables, version], String(given));
  }
  assert.equal(ncclTuner('2.26.2').hwLatencyUs.net.nvlstree[2], 14);
  assert.equal(ncclTuner('2.30.7').hwLatencyUs.net.nvlstree[2], 20.9);
  assert.equal(ncclTuner('2.21.5').hwLatencyUs.net.tree[2], 28, '2.21 discouraged tree/Simple with 28 µs');
  assert.equal(ncclTuner('2.21.5').stepLatencyUs.net.tree[2], 14, 'a selection penalty is not what a step costs');
});

test('a version that is not NCCL 2.x is refused by name', () => {
  for (const bad of ['banana', '3.0.1', 'v2.26']) {
    assert.throws(
      () => ncclTuner(bad),
      (e: unknown) => e instanceof EngineError && /ncclVersion must look like 2\.26\.2/.test(e.message),
    );
  }
  assert.throws(() => resolveSystem({ ...twoNodes, ncclVersion: 'v2' }), EngineError);
});

// With the network search's 8 channels at 48 GB/s (one per NDR NIC), the newest tables cap tree/LL128 at 8 × 36.7 GB/s
// and NVLSTree's 66.8 µs latency is repaid from 4 MiB; 2.26's 14 µs NVLSTree step makes it pay from 1 MiB.
test('two H100 nodes: NCCL 2.26 leaves tree/LL128 for NVLSTree at 1 MiB, the newest tables only at 4 MiB', () => {
  const firstNvlsTree = (ncclVersion?: string): number => {
    const system = on(ncclVersion);
    for (let bytes = 64 * 1024; bytes <= 256 * MiB; bytes *= 2)
      if (simulateCollective(system, { bytes: asBytes(bytes) }).algorithm === 'nvlstree') return bytes;
    return Infinity;
  };
  assert.equal(firstNvlsTree('2.26.2'), 1 * MiB);
  assert.equal(firstNvlsTree(), 4 * MiB);
  // Below the switch both releases agree on tree/LL128.
  const small = simulateCollective(on('2.26.2'), { bytes: asBytes(256 * 1024) });
  assert.deepEqual([small.algorithm, small.protocol], ['tree', 'LL128']);
});

test("the simulator charges the release's NVLSTree network latency per tree stage, and the same bandwidth", () => {
  // Two nodes: one network stage up and one down, each 20.9 − 14 µs dearer on the newest release.
  for (const bytes of [1 * MiB, 1024 * MiB]) {
    const old = simulateCollective(on('2.26.2'), { bytes: asBytes(bytes), algorithm: 'nvlstree' }).timeUs;
    const head = simulateCollective(on(), { bytes: asBytes(bytes), algorithm: 'nvlstree' }).timeUs;
    assert.ok(Math.abs(head - old - 2 * (20.9 - 14)) < 0.05, `${bytes} B: ${old.toFixed(2)} vs ${head.toFixed(2)} µs`);
  }
});

// NCCL releases before 2.18 searched and ranked differently (search.cc, topo.h, tuning.cc, connect.cc read at their
// tags in NVIDIA/nccl). Each expected figure below is worked by hand from those files; the engine's figures for
// 2.18 and later are checked to stay what they were.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ncclTuner, presetSystem, resolveSystem, type SystemSpec } from '../../../src/engine/index';
import { searchChannels, searchGraph } from '../../../src/engine/channels';
import { ncclBusBwGBps } from '../../../src/engine/nccl-model';
import { algorithmUnavailable } from '../../../src/engine/select';
import { needSharedDir, SHARED_ROOT } from '../requirements';

const on = (preset: string, ncclVersion: string, nodes = 1) =>
  resolveSystem({ ...(presetSystem(preset, { nodes }) as SystemSpec), ncclVersion });
const graph = (preset: string, version: string, nodes = 1) => {
  const system = on(preset, version, nodes);
  const g = searchGraph(system);
  return [g.channels, g.bwIntra, searchChannels(system)];
};

test('8× A100 on NVSwitch: 12 links at 22 GB/s up to 2.17 (21 in 2.8–2.9), 20 from 2.18', () => {
  // 264 GB/s: 6 × 44 from speedArrayIntra {44, 30, 22, …}, duplicated at ≥ 25 GB/s to 12 × 22, 24 at runtime.
  assert.deepEqual(graph('dgx-a100', '2.12'), [12, 22, 24]);
  assert.deepEqual(graph('dgx-a100', '2.17.1'), [12, 22, 24]);
  // 2.9: 252 GB/s over one list {42, 30, 24, 21, …}: 6 × 42 → 12 × 21.
  assert.deepEqual(graph('dgx-a100', '2.9.9'), [12, 21, 24]);
  // 2.18+: 240 GB/s, 6 × 40 → 12 × 20, as before.
  assert.deepEqual(graph('dgx-a100', '2.18.5'), [12, 20, 24]);
  assert.deepEqual(graph('dgx-a100', '2.30.7'), [12, 20, 24]);
});

test('8× H100 on NVSwitch: no Hopper list up to 2.15, the first one in 2.16–2.17, the newest from 2.18', () => {
  // 2.15: 18 links × 22 = 396 GB/s, 9 × 44; duplication stops at MAXCHANNELS / 2 = 16 channels, at 44 / 2 GB/s.
  assert.deepEqual(graph('dgx-h100', '2.15.5'), [16, 22, 32]);
  // 2.16: sm90SpeedArrayIntra {66, 33, …}: 6 × 66, duplicated (≥ 50 GB/s on SM90) to 12 × 33.
  assert.deepEqual(graph('dgx-h100', '2.16.5'), [12, 33, 24]);
  assert.deepEqual(graph('dgx-h100', '2.18.5'), [12, 30, 24]);
});

test("nccl-tests 194's 24 channels on a bridged H100 PCIe pair follow from 12 links up to 2.15, not from 2.16", () => {
  // 12 × 22 = 264 GB/s: 6 × 44 → 12 × 22, doubled by connect.cc to 24; 2.16's 4 × 66 → 8 × 33 gives 16.
  assert.deepEqual(graph('bridge-h100pciex2', '2.15.5'), [12, 22, 24]);
  assert.deepEqual(graph('bridge-h100pciex2', '2.16.5'), [8, 33, 16]);
  assert.deepEqual(graph('bridge-h100pciex2', '2.30.7'), [8, 30, 16]);
});

test('across nodes, 2.15 duplicates an H100 graph at 48 GB/s and 2.16 does not', () => {
  // One channel per 50 GB/s NIC at the 48 GB/s PCIe Gen5 path: 8 × 48. Up to 2.15 every graph at ≥ 25 GB/s is
  // duplicated (16 × 24, 32 at runtime); 2.16–2.17 duplicate SM90 graphs from 50 GB/s only and have no "4 compute
  // channels per search channel" (connect.cc, from 2.18), so 8 × 48 runs 16 channels; so does 2.18.
  assert.deepEqual(graph('dgx-h100', '2.15.5', 2), [16, 24, 32]);
  assert.deepEqual(graph('dgx-h100', '2.16.5', 2), [8, 48, 16]);
  assert.deepEqual(graph('dgx-h100', '2.18.5', 2), [8, 48, 16]);
});

test("2.10–2.17's latency tables: ranked with tree/Simple's 28 µs, charged 2.18's steps", () => {
  const v212 = ncclTuner('2.12');
  assert.equal(v212.tables, '2.10-2.17');
  assert.deepEqual(v212.baseLatencyUs.ring, [3.6, 10, 8.4]);
  assert.deepEqual(v212.baseLatencyUs.tree, [4.4, 4.4, 0]);
  assert.deepEqual(v212.hwLatencyUs.nvlink.ring, [0.47, 1.9, 3.4]);
  assert.equal(v212.hwLatencyUs.nvlink.tree[2], 28);
  assert.equal(v212.stepLatencyUs.nvlink.tree[2], 4);
  // Ring/Simple across nodes: 28 µs in 2.12–2.13 only, 9.6 before and after; its steps cost 9.6.
  assert.equal(v212.hwLatencyUs.net.ring[2], 28);
  assert.equal(v212.stepLatencyUs.net.ring[2], 9.6);
  assert.equal(ncclTuner('2.14.3').hwLatencyUs.net.ring[2], 9.6);
  assert.equal(ncclTuner('2.11.4').hwLatencyUs.net.ring[2], 9.6);
  assert.equal(ncclTuner('2.18.5').tables, '2.18');
});

test('before 2.18 NCCL capped an Ampere bus at 235 GB/s and LL128 at 20 GB/s per channel on every GPU to 2.16', () => {
  const a100 = on('dgx-a100', '2.12');
  // 12 × 22 = 264 GB/s capped at 235; 2.18 has no cap: 12 × 20 = 240.
  assert.equal(ncclBusBwGBps(a100, 'allreduce', 'ring', 'Simple'), 235);
  assert.equal(ncclBusBwGBps(on('dgx-a100', '2.18.5'), 'allreduce', 'ring', 'Simple'), 240);
  // H100 on 2.16: 12 channels × 20 GB/s for LL128 (0.92 × 396 is more); 2.17 gives Hopper 36.7 and a 370 cap.
  assert.equal(ncclBusBwGBps(on('dgx-h100', '2.16.5'), 'allreduce', 'ring', 'LL128'), 240);
  assert.ok(Math.abs(ncclBusBwGBps(on('dgx-h100', '2.17.1'), 'allreduce', 'ring', 'LL128') - 0.92 * 370) < 1e-9);
});

test('NVLS arrived in 2.17 and NVLSTree in 2.18', () => {
  assert.match(algorithmUnavailable(on('dgx-h100', '2.16.5'), 'nvls', 'allreduce') ?? '', /NVLS arrived in NCCL 2\.17/);
  assert.equal(algorithmUnavailable(on('dgx-h100', '2.17.1'), 'nvls', 'allreduce'), undefined);
  const twoNodes = on('dgx-h100', '2.17.1', 2);
  assert.match(algorithmUnavailable(twoNodes, 'nvlstree', 'allreduce') ?? '', /NVLSTree arrived in NCCL 2\.18/);
  assert.equal(algorithmUnavailable(on('dgx-h100', '2.18.5', 2), 'nvlstree', 'allreduce'), undefined);
});

const fixtures = needSharedDir('fixtures-real');

test(
  "an NCCL 2.16.5 NCCL_DEBUG log (2 nodes × 1 A100 PCIe, 200G IB) shows the ring and tree graphs 2.16's search gives",
  { skip: fixtures },
  () => {
    const log = readFileSync(join(SHARED_ROOT, 'fixtures-real', 'nccl-debug-a100-2node-graph-ib.log'), 'utf8');
    assert.match(log, /NCCL version 2\.16\.5/);
    const graphs = [...log.matchAll(/Pattern (\d), crossNic \d, nChannels (\d+), bw ([\d.]+)\/([\d.]+)/g)];
    const ring = graphs.find((m) => m[1] === '4');
    const tree = graphs.find((m) => m[1] === '3' && m[2] !== '0');
    const runtime = /(\d+) coll channels/.exec(log);
    assert.ok(ring && tree && runtime, 'the log has its ring and tree graphs and runtime channels');
    const system = resolveSystem({
      gpu: 'A100-PCIe',
      nodes: 2,
      gpusPerNode: 1,
      intraNode: 'pcie',
      nic: { gbps: 200, perNode: 1 },
      ncclVersion: '2.16.5',
    });
    const g = searchGraph(system);
    // Ring: one channel at the 24 GB/s PCIe Gen4 path (below 25 GB/s: not duplicated); the tree raises its
    // intra-node speed to twice the network's.
    assert.deepEqual([g.channels, g.bwIntra, g.bwInter], [Number(ring[2]), Number(ring[3]), Number(ring[4])]);
    assert.deepEqual(
      [g.tree.channels, g.tree.bwIntra, g.tree.bwInter],
      [Number(tree[2]), Number(tree[3]), Number(tree[4])],
    );
    assert.equal(searchChannels(system), Number(runtime[1]));
  },
);

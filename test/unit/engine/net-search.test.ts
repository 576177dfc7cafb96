// NCCL's network channel search (search.cc) as the engine reproduces it: the NIC count and rate, the GPU-to-NIC PCIe
// path and NVLink decide the ring and tree graphs across nodes. Expected figures are worked by hand from search.cc's
// rules (speed arrays, one channel per NIC at a speed above half its rate, duplication, pass 2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { searchNetGraph, type NetSearchInput } from '../../../src/engine/net-search';
import { resolveSystem, type SystemSpec } from '../../../src/engine/index';
import { searchChannels, searchGraph } from '../../../src/engine/channels';

const h100: NetSearchInput = {
  smVersion: 90,
  gpusPerNode: 8,
  intraGBps: 370.8,
  nicGBps: 50,
  pcieGBps: 48,
  nicGroups: [{ gpus: 8, nics: 8 }],
};

test('8× H100 with 8 NDR NICs: 8 ring and tree channels at 48 GB/s, not duplicated', () => {
  // 48 GB/s is the GPU-to-NIC PCIe Gen5 path; one channel per 50 GB/s NIC; 8 × 48 ≥ NVLink's 370.8 ends the search;
  // SM90 below 50 GB/s with more than 4 channels keeps them as they are.
  assert.deepEqual(searchNetGraph(h100, 'ring'), { channels: 8, bwIntra: 48, bwInter: 48 });
  assert.deepEqual(searchNetGraph(h100, 'tree', 8), { channels: 8, bwIntra: 48, bwInter: 48 });
});

test('2× 100G per A100: one channel per NIC at 12 GB/s, and the tree raises its NVLink speed to 15', () => {
  const a100 = (nics: number): NetSearchInput => ({
    smVersion: 80,
    gpusPerNode: 8,
    intraGBps: 240,
    nicGBps: 12.5,
    pcieGBps: 24,
    nicGroups:
      nics >= 8 ? Array.from({ length: 8 }, () => ({ gpus: 1, nics: nics / 8 })) : [{ gpus: 8 / nics, nics: 1 }],
  });
  assert.deepEqual(searchNetGraph(a100(16), 'ring'), { channels: 16, bwIntra: 12, bwInter: 12 });
  // 16 channels at 18 GB/s need 288 GB/s of NVLink, more than 240 × 8/7.
  assert.deepEqual(searchNetGraph(a100(16), 'tree', 16), { channels: 16, bwIntra: 15, bwInter: 12 });
  assert.deepEqual(searchNetGraph(a100(8), 'ring'), { channels: 8, bwIntra: 12, bwInter: 12 });
  assert.deepEqual(searchNetGraph(a100(8), 'tree', 8), { channels: 8, bwIntra: 24, bwInter: 12 });
});

test('fewer NICs than GPUs: a shared NDR NIC carries one channel at 48, then the channels are doubled at 24', () => {
  const shared: NetSearchInput = {
    ...h100,
    nicGroups: [
      { gpus: 2, nics: 1 },
      { gpus: 2, nics: 1 },
      { gpus: 2, nics: 1 },
      { gpus: 2, nics: 1 },
    ],
  };
  assert.deepEqual(searchNetGraph(shared, 'ring'), { channels: 8, bwIntra: 24, bwInter: 24 });
  const one: NetSearchInput = { ...h100, nicGroups: [{ gpus: 8, nics: 1 }] };
  assert.deepEqual(searchNetGraph(one, 'ring'), { channels: 2, bwIntra: 24, bwInter: 24 });
});

test('a slow NIC sets the speed: 8 × 200G HDR on H100 runs 8 channels at 24 GB/s', () => {
  assert.deepEqual(searchNetGraph({ ...h100, nicGBps: 25 }, 'ring'), { channels: 8, bwIntra: 24, bwInter: 24 });
});

test('resolved systems: NIC count sets the network channels NCCL runs', () => {
  const spec = (perNode: number, gbps = 400): SystemSpec => ({
    gpu: 'H100-SXM',
    nodes: 4,
    gpusPerNode: 8,
    intraNode: 'nvswitch',
    nic: { gbps, perNode },
  });
  const eight = resolveSystem(spec(8));
  assert.equal(searchGraph(eight).channels, 8);
  // connect.cc doubles to 16; the SM90 rule doubles again only below 16 channels.
  assert.equal(searchChannels(eight), 16);
  const four = resolveSystem(spec(4));
  assert.equal(searchGraph(four).bwInter, 24);
  // 8 graph channels at 24 GB/s: connect.cc's 16, no further doubling (24 is not above 45).
  assert.equal(searchChannels(four), 16);
  const sixteen = resolveSystem(spec(16, 200));
  assert.equal(searchGraph(sixteen).channels, 16);
  // Two 25 GB/s NICs per GPU: 16 channels at 24 GB/s, 32 at runtime.
  assert.equal(searchChannels(sixteen), 32);
  // One node keeps the intra-node search.
  assert.equal(searchGraph(resolveSystem({ ...spec(8), nodes: 1 })).channels, 12);
});

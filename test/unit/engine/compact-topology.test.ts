// Resolution builds one node, the shared network and one node's NIC links, and answers every other link by index
// from those (a node's links repeat node 0's at a constant stride). The per-node vertices and links are built only
// when read. These tests compare the compact answers with the built topology on random systems, and check that a
// simulation of a large system never builds them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asBytes, presetSystem, resolveSystem, simulateCollective, type SystemSpec } from '../../../src/engine/index';
import { linkTable, materialised } from '../../../src/engine/topology/link-table';
import { random, pick } from './support/random';

const BASES: readonly SystemSpec[] = [
  { gpu: 'H100-SXM', nodes: 1, gpusPerNode: 8, intraNode: 'nvswitch' },
  { gpu: 'A100-SXM', nodes: 1, gpusPerNode: 8, intraNode: 'nvswitch' },
  { gpu: 'V100-SXM', nodes: 1, gpusPerNode: 8, intraNode: 'nvlink-mesh' },
  { gpu: 'A100-PCIe', nodes: 1, gpusPerNode: 4, intraNode: 'nvlink-bridge' },
  { gpu: 'L40S', nodes: 1, gpusPerNode: 8, intraNode: 'pcie' },
  { gpu: 'L40S', nodes: 1, gpusPerNode: 4, intraNode: 'pcie', p2p: false },
];

test('every link of the compact description equals the built topology (random multi-node systems)', () => {
  for (let seed = 1; seed <= 40; seed++) {
    const next = random(7000 + seed);
    const base = pick(next, BASES);
    const spec: SystemSpec = {
      ...base,
      nodes: 2 + Math.floor(next() * 70),
      gpusPerNode: pick(next, [1, 2, base.gpusPerNode]),
      nic: { gbps: pick(next, [100, 400]), perNode: pick(next, [1, 2, 4, 8, 16]) },
      network: { nodesPerLeaf: pick(next, [1, 3, 32]) },
    };
    const system = resolveSystem(spec);
    assert.equal(materialised(system.topology), false, `seed ${7000 + seed}: resolution built every node`);
    const table = linkTable(system.topology);
    const { links } = system.topology;
    assert.equal(materialised(system.topology), true);
    assert.equal(table.count, links.length, `seed ${7000 + seed} (${system.label})`);
    for (let i = 0; i < links.length; i++) {
      const where = `seed ${7000 + seed} (${system.label}) link ${i} (${links[i].id})`;
      assert.equal(table.GBps(i), links[i].GBps, where);
      assert.equal(table.latencyUs(i), links[i].latencyUs, where);
      assert.equal(table.kind(i), links[i].kind, where);
    }
    // The switch links and the routes name the links of their own node.
    const g = system.gpusPerNode;
    for (let rank = 0; rank < system.ranks && system.fabric.hasSwitch; rank++) {
      const prefix = `n${Math.floor(rank / g)}.gpu${rank % g}`;
      assert.equal(links[system.fabric.switchUplink(rank)].from, prefix, `seed ${7000 + seed} rank ${rank}`);
      assert.equal(links[system.fabric.switchDownlink(rank)].to, prefix, `seed ${7000 + seed} rank ${rank}`);
    }
  }
});

test('simulating 16,384 GPUs builds no per-node vertices or links, and the numbers match the built topology', () => {
  const system = resolveSystem(presetSystem('dgx-h100', { nodes: 2048 })!);
  const fast = simulateCollective(system, { bytes: asBytes(2 ** 30) });
  assert.equal(materialised(system.topology), false);
  assert.equal(fast.ranks, 16384);
  // An edited copy with the same links reads the built links: the same time to the last bit.
  const copy = { ...system, topology: { vertices: system.topology.vertices, links: system.topology.links } };
  assert.equal(materialised(system.topology), true);
  const again = simulateCollective(copy, { bytes: asBytes(2 ** 30) });
  assert.equal(again.timeUs, fast.timeUs);
  assert.equal(again.algorithm, fast.algorithm);
});

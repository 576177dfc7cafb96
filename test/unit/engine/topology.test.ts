// The catalogue, presets and resolved topologies: names, labels, link ids, and clear errors for impossible specs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NVLINK_EFFICIENCY } from '../../../src/engine/constants';
import {
  EngineError,
  findGpu,
  GPU_CATALOGUE,
  PRESETS,
  presetSystem,
  resolveSystem,
  asGBps,
} from '../../../src/engine/index';

test('the catalogue holds the required GPUs with their public facts, found case-insensitively', () => {
  for (const name of [
    'V100-SXM',
    'A100-SXM',
    'A100-PCIe',
    'H100-SXM',
    'H100-PCIe',
    'H200',
    'B200',
    'GB200',
    'L40S',
    'A10',
    'RTX3090',
    'RTX4090',
  ]) {
    const gpu = findGpu(name.toLowerCase());
    assert.ok(gpu, name);
    assert.equal(findGpu(name.toUpperCase())?.name, gpu.name);
    assert.ok(gpu.hbmGBps > 0 && gpu.memoryGB > 0 && gpu.fp32Tflops > 0 && gpu.pcieGen >= 3);
  }
  assert.equal(findGpu('h100')?.name, 'H100-SXM');
  assert.equal(findGpu('RTX 4090')?.name, 'RTX4090');
  assert.equal(findGpu('nope'), undefined);
  assert.equal(findGpu('H100-SXM')?.nvlinkLinks, 18);
  assert.ok(GPU_CATALOGUE.length >= 12);
});

test('labels read like the machines', () => {
  assert.equal(resolveSystem(presetSystem('dgx-h100')!).label, '8× H100 NVSwitch');
  assert.equal(resolveSystem(presetSystem('dgx-h100', { nodes: 2 })!).label, '2×8 H100 NVSwitch + 8×400G IB');
});

test('every preset resolves, scales with nodes, and its links connect known vertices', () => {
  for (const name of Object.keys(PRESETS)) {
    for (const nodes of [1, 3]) {
      const system = resolveSystem(presetSystem(name, { nodes })!);
      assert.equal(system.ranks, nodes * system.gpusPerNode);
      const ids = new Set(system.topology.vertices.map((v) => v.id));
      const linkIds = new Set<string>();
      for (const link of system.topology.links) {
        assert.ok(ids.has(link.from) && ids.has(link.to), `${name}: ${link.id}`);
        assert.equal(link.id, `${link.from}->${link.to}`);
        assert.ok(link.GBps > 0 && link.latencyUs >= 0);
        assert.ok(!linkIds.has(link.id), `duplicate link ${link.id}`);
        linkIds.add(link.id);
      }
      assert.equal(system.topology.vertices.filter((v) => v.kind === 'gpu').length, system.ranks);
    }
  }
});

test('DGX-1 hybrid cube-mesh: 6 NVLinks per GPU, PCIe for the pairs without one', () => {
  const system = resolveSystem(presetSystem('dgx1-v100')!);
  const out = system.topology.links.filter((l) => l.from === 'gpu0' && l.kind === 'nvlink');
  assert.ok(Math.abs(out.reduce((sum, l) => sum + l.GBps, 0) - 6 * 20 * NVLINK_EFFICIENCY) < 1e-9);
  const route = system.fabric.route(0, 6).map((i) => system.topology.links[i]);
  assert.ok(
    route.every((l) => l.kind === 'pcie' || l.kind === 'inter-socket'),
    route.map((l) => l.id).join(' '),
  );
  assert.equal(system.fabric.route(0, 3).length, 1);
});

test('without P2P, PCIe traffic is staged through host memory', () => {
  const system = resolveSystem(presetSystem('pcie-4090x8')!);
  const route = system.fabric.route(0, 1).map((i) => system.topology.links[i]);
  assert.ok(
    route.some((l) => l.kind === 'host'),
    route.map((l) => l.id).join(' '),
  );
  // With P2P on, NCCL's default level (PXB from 2.23) still stages GPUs on root ports; NCCL_P2P_LEVEL=SYS lifts it.
  const p2p = resolveSystem({ ...presetSystem('pcie-4090x8')!, p2p: true, p2pLevel: 'SYS' });
  assert.ok(p2p.fabric.route(0, 1).every((i) => p2p.topology.links[i].kind === 'pcie'));
  const crossSocket = p2p.fabric.route(0, 7).map((i) => p2p.topology.links[i].kind);
  assert.ok(crossSocket.includes('inter-socket'));
});

test('across nodes traffic leaves through the GPU’s NIC and a rail switch', () => {
  const system = resolveSystem(presetSystem('dgx-h100', { nodes: 2 })!);
  const route = system.fabric.route(3, 11).map((i) => system.topology.links[i].id);
  assert.deepEqual(route, [
    'n0.gpu3->n0.nicsw3',
    'n0.nicsw3->n0.nic3',
    'n0.nic3->rail3.leaf0',
    'rail3.leaf0->n1.nic3',
    'n1.nic3->n1.nicsw3',
    'n1.nicsw3->n1.gpu3',
  ]);
});

test('impossible systems throw EngineError with a message', () => {
  const base = presetSystem('dgx-h100')!;
  assert.throws(
    () => resolveSystem({ ...base, gpu: 'TPUv4' }),
    (e: unknown) => e instanceof EngineError && /unknown GPU 'TPUv4'/.test(e.message),
  );
  assert.throws(() => resolveSystem({ ...base, nodes: 0 }), EngineError);
  assert.throws(() => resolveSystem({ ...base, gpusPerNode: 2.5 }), EngineError);
  assert.throws(() => resolveSystem({ ...base, nodes: 2, nic: undefined }), /nic/);
  assert.throws(() => resolveSystem({ ...base, gpu: 'A100-SXM', nvls: true }), /nvls/);
  assert.throws(() => resolveSystem({ ...base, intraNode: 'nvlink-mesh', gpusPerNode: 16 }), /at most 8/);
  assert.throws(() => resolveSystem({ ...base, overrides: { nvlinkGBpsPerLink: asGBps(-3) } }), /positive/);
  assert.throws(() => resolveSystem({ gpu: 'H100', nodes: 1, gpusPerNode: 4, intraNode: 'uniform-ring' }), /linkGBps/);
  assert.throws(() => resolveSystem({ ...base, gpu: 'RTX4090' }), /NVLink/);
});

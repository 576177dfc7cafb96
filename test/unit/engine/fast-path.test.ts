// The fast path (one representative per channel class, each distinct step simulated once) must agree with the full
// simulation of every channel and every step, and both must be deterministic.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  presetSystem,
  resolveSystem,
  simulateCollective,
  type Algorithm,
  type CollectiveKind,
  type Protocol,
  type SystemSpec,
  asBytes,
} from '../../../src/engine/index';

const CASES: { spec: SystemSpec; algorithm: Algorithm; protocol: Protocol; kind?: CollectiveKind; bytes: number }[] = [
  { spec: presetSystem('dgx-h100')!, algorithm: 'ring', protocol: 'Simple', bytes: 64 << 20 },
  { spec: presetSystem('dgx-h100')!, algorithm: 'ring', protocol: 'LL', bytes: 64 << 10 },
  { spec: presetSystem('dgx-h100')!, algorithm: 'nvls', protocol: 'Simple', bytes: 32 << 20 },
  { spec: presetSystem('dgx-h100')!, algorithm: 'tree', protocol: 'LL128', bytes: 4 << 20 },
  { spec: presetSystem('dgx-a100')!, algorithm: 'direct', protocol: 'LL', bytes: 16 << 10 },
  { spec: presetSystem('dgx-a100')!, algorithm: 'ring', protocol: 'Simple', kind: 'reducescatter', bytes: 8 << 20 },
  { spec: presetSystem('dgx-a100')!, algorithm: 'ring', protocol: 'Simple', kind: 'allgather', bytes: 8 << 20 },
  { spec: presetSystem('dgx1-v100')!, algorithm: 'ring', protocol: 'Simple', bytes: 16 << 20 },
  { spec: presetSystem('pcie-4090x8')!, algorithm: 'ring', protocol: 'Simple', bytes: 16 << 20 },
  { spec: presetSystem('pcie-l40sx8')!, algorithm: 'tree', protocol: 'Simple', bytes: 2 << 20 },
  { spec: presetSystem('dgx-h100', { nodes: 2 })!, algorithm: 'nvlstree', protocol: 'Simple', bytes: 16 << 20 },
  { spec: presetSystem('dgx-h100', { nodes: 2 })!, algorithm: 'ring', protocol: 'LL128', bytes: 8 << 20 },
  { spec: presetSystem('dgx-a100', { nodes: 3 })!, algorithm: 'hierarchical', protocol: 'Simple', bytes: 32 << 20 },
  { spec: presetSystem('dgx-a100', { nodes: 4 })!, algorithm: 'tree', protocol: 'Simple', bytes: 4 << 20 },
  // Past 16 identical nodes the fast path builds one node per tree-depth pair and one rail.
  { spec: presetSystem('dgx-a100', { nodes: 20 })!, algorithm: 'tree', protocol: 'Simple', bytes: 16 << 20 },
  { spec: presetSystem('dgx-h100', { nodes: 20 })!, algorithm: 'nvlstree', protocol: 'Simple', bytes: 64 << 20 },
];

test('fast path equals the full simulation within 0.1%', () => {
  for (const c of CASES) {
    const system = resolveSystem(c.spec);
    const request = { bytes: asBytes(c.bytes), algorithm: c.algorithm, protocol: c.protocol, kind: c.kind };
    const fast = simulateCollective(system, request, { path: 'fast' });
    const full = simulateCollective(system, request, { path: 'full' });
    const error = Math.abs(fast.timeUs - full.timeUs) / full.timeUs;
    assert.ok(
      error < 1e-3,
      `${system.label} ${c.algorithm}/${c.protocol} ${c.kind ?? 'allreduce'} ${c.bytes} B: fast ${fast.timeUs} µs, full ${full.timeUs} µs`,
    );
    for (const phase of ['exchange', 'reduce', 'broadcast'] as const) {
      assert.ok(Math.abs(fast.phases[phase] - full.phases[phase]) <= 1e-3 * full.timeUs, `${phase} differs`);
    }
  }
});

test('the full path really expands channels: it produces more spans than the fast path', () => {
  const system = resolveSystem(presetSystem('dgx-a100')!);
  const request = { bytes: asBytes(8 << 20), algorithm: 'ring' as const, protocol: 'Simple' as const, trace: true };
  const fast = simulateCollective(system, request, { path: 'fast' });
  const full = simulateCollective(system, request, { path: 'full' });
  assert.ok(full.spanCount > fast.spanCount, `full ${full.spanCount} spans, fast ${fast.spanCount}`);
  const channels = new Set(full.trace!.spans.map((s) => s.channel));
  assert.equal(channels.size, full.channels);
});

test('simulation is deterministic, trace included', () => {
  for (const spec of [
    presetSystem('dgx-h100')!,
    presetSystem('dgx-h100', { nodes: 2 })!,
    presetSystem('pcie-4090x8')!,
  ]) {
    for (const bytes of [8, 1 << 20, 256 << 20]) {
      const a = simulateCollective(spec, { bytes: asBytes(bytes), trace: true });
      const b = simulateCollective(spec, { bytes: asBytes(bytes), trace: true });
      assert.deepEqual(a, b);
    }
  }
});

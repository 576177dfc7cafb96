// Concurrent transfers share a link's bandwidth (max-min fair); a model that let them all run at full speed would
// predict the impossible.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveSystem, simulateCollective, asBytes } from '../../../src/engine/index';
import { runFlows, type FlowSet } from '../../../src/engine/sim/maxmin';
import { runSchedule } from '../../../src/engine/sim/run';
import type { Flow } from '../../../src/engine/sim/schedule';

function flowSet(flows: { bytes: number; resources: number[]; weight?: number; capRate?: number }[]): FlowSet {
  const entries = flows.flatMap((f) => f.resources);
  const start = new Int32Array(flows.length + 1);
  let k = 0;
  flows.forEach((f, i) => {
    start[i] = k;
    k += f.resources.length;
  });
  start[flows.length] = k;
  return {
    count: flows.length,
    bytes: Float64Array.from(flows.map((f) => f.bytes)),
    weight: Float64Array.from(flows.map((f) => f.weight ?? 1)),
    capRate: Float64Array.from(flows.map((f) => f.capRate ?? Infinity)),
    start,
    resource: Int32Array.from(entries),
    coefficient: new Float64Array(entries.length).fill(1),
  };
}

test('two flows on one link each get half of it', () => {
  const capacity = () => 10; // GB/s = 10,000 bytes/µs
  const alone = runFlows(flowSet([{ bytes: 1e6, resources: [0] }]), capacity);
  const together = runFlows(
    flowSet([
      { bytes: 1e6, resources: [0] },
      { bytes: 1e6, resources: [0] },
    ]),
    capacity,
  );
  assert.equal(alone.durationUs, 100);
  assert.equal(together.durationUs, 200);
});

test('max-min fairness: a flow bottlenecked elsewhere leaves its share to the others', () => {
  // Link 0 (10 GB/s) carries A and B; B also crosses link 1 (2 GB/s). B runs at 2, so A gets 8.
  const result = runFlows(
    flowSet([
      { bytes: 8e5, resources: [0] },
      { bytes: 2e5, resources: [0, 1] },
    ]),
    (r) => (r === 0 ? 10 : 2),
  );
  assert.ok(Math.abs(result.finishUs[0] - 100) < 1e-6, `A finished at ${result.finishUs[0]}`);
  assert.ok(Math.abs(result.finishUs[1] - 100) < 1e-6, `B finished at ${result.finishUs[1]}`);
});

test('when one flow finishes, the survivors speed up', () => {
  const result = runFlows(
    flowSet([
      { bytes: 1e5, resources: [0] },
      { bytes: 3e5, resources: [0] },
    ]),
    () => 10,
  );
  // Both at 5 GB/s until the first ends at 20 µs; the second then has 2e5 bytes left at 10 GB/s: 40 µs total.
  assert.ok(Math.abs(result.finishUs[0] - 20) < 1e-9);
  assert.ok(Math.abs(result.finishUs[1] - 40) < 1e-9);
});

test('two GPUs behind one PCIe switch share its uplink when both send across it', () => {
  const system = resolveSystem({
    gpu: 'L40S',
    nodes: 1,
    gpusPerNode: 4,
    intraNode: 'pcie',
    p2p: true,
    gpusPerPcieSwitch: 2,
    gpusPerSocket: 4,
  });
  const flow = (from: number, to: number): Flow => ({
    rank: from,
    peer: to,
    bytes: 24e6,
    resources: system.fabric.route(from, to),
    weight: 1,
    channel: 0,
    channelStride: 1,
    capGBps: Infinity,
    chunk: 0,
    phase: 'exchange',
    reduceBytes: 0,
  });
  const one = runSchedule(
    system,
    { rounds: [{ flows: [flow(0, 2)], latencyUs: 0, repeat: 1, phase: 'exchange', step: 0 }], setupUs: 0, channels: 1 },
    { full: true },
  );
  const two = runSchedule(
    system,
    {
      rounds: [{ flows: [flow(0, 2), flow(1, 3)], latencyUs: 0, repeat: 1, phase: 'exchange', step: 0 }],
      setupUs: 0,
      channels: 1,
    },
    { full: true },
  );
  const hops = system.topology.links;
  assert.ok(
    flow(0, 2).resources.some((r) => hops[r].from === 'pcisw0' && hops[r].to === 'cpu0'),
    'the route climbs through the switch uplink',
  );
  assert.ok(Math.abs(two.timeUs / one.timeUs - 2) < 1e-9, `one flow ${one.timeUs} µs, two flows ${two.timeUs} µs`);
});

test('a ring across a PCIe switch uplink is slower than the same GPUs on private links', () => {
  const shared = resolveSystem({
    gpu: 'L40S',
    nodes: 1,
    gpusPerNode: 8,
    intraNode: 'pcie',
    p2p: true,
    gpusPerPcieSwitch: 8,
    gpusPerSocket: 8,
  });
  const bytes = asBytes(256 * 1024 * 1024);
  const viaSwitch = simulateCollective(shared, { bytes, algorithm: 'direct', protocol: 'Simple' });
  const ring = simulateCollective(shared, { bytes, algorithm: 'ring', protocol: 'Simple' });
  // One-shot sends (n−1)·S from every GPU through its single PCIe port, all at once: it must take far longer than
  // a ring, whose GPUs each send 2(n−1)/n·S.
  assert.ok(viaSwitch.timeUs > 3 * ring.timeUs, `direct ${viaSwitch.timeUs} µs vs ring ${ring.timeUs} µs`);
});

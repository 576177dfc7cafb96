// Scale properties of the network model from 1 to 1024 nodes: what the NICs can carry bounds busbw, busbw grows or
// saturates with nodes as NCCL's rings and trees do, small messages never get faster with more nodes, and more NICs
// never make a collective slower.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveSystem, simulateCollective, type SystemSpec, asBytes, asMicros } from '../../../src/engine/index';
import { searchGraph } from '../../../src/engine/channels';

const NODE_COUNTS = [1, 2, 4, 8, 64, 1024];
const GiB = asBytes(1024 ** 3);

function h100(nodes: number, nicsPerNode = 8, gbps = 400): SystemSpec {
  return { gpu: 'H100-SXM', nodes, gpusPerNode: 8, intraNode: 'nvswitch', nic: { gbps, perNode: nicsPerNode } };
}

/**
 * The most busbw the NICs allow: every node must send 2·S·(N−1)/N of an S-byte AllReduce over N nodes (half for
 * the reduction, half for the broadcast), so algbw ≤ NIC bandwidth · N / (2(N−1)); busbw is algbw · 2(n−1)/n.
 */
function nicBoundBusbwGBps(spec: SystemSpec): number {
  const nicGBps = (spec.nic!.gbps / 8) * spec.nic!.perNode;
  const ranks = spec.nodes * spec.gpusPerNode;
  return ((nicGBps * spec.nodes) / (2 * (spec.nodes - 1))) * ((2 * (ranks - 1)) / ranks);
}

test('busbw never exceeds what the NICs can carry', () => {
  for (const nodes of NODE_COUNTS.filter((n) => n > 1)) {
    for (const bytes of [1024 ** 2, GiB]) {
      const spec = h100(nodes);
      const result = simulateCollective(spec, { bytes: asBytes(bytes) });
      assert.ok(
        result.busbwGBps <= nicBoundBusbwGBps(spec),
        `${nodes} nodes, ${bytes} B: ${result.busbwGBps} > ${nicBoundBusbwGBps(spec)}`,
      );
    }
  }
});

test('busbw at 1 GiB grows or saturates with nodes: no collapse, no super-linear gain', () => {
  const busbw = NODE_COUNTS.filter((n) => n > 1).map(
    (nodes) => simulateCollective(h100(nodes), { bytes: GiB }).busbwGBps,
  );
  for (let i = 1; i < busbw.length; i++) {
    assert.ok(busbw[i] >= 0.5 * busbw[i - 1], `collapse: ${busbw.join(', ')}`);
    assert.ok(busbw[i] <= 1.05 * busbw[i - 1], `super-linear: ${busbw.join(', ')}`);
  }
});

test('8 B takes no less time on more nodes (multi-node)', () => {
  const times = NODE_COUNTS.filter((n) => n > 1).map(
    (nodes) => simulateCollective(h100(nodes), { bytes: asBytes(8) }).timeUs,
  );
  for (let i = 1; i < times.length; i++) assert.ok(times[i] >= times[i - 1], `8 B times: ${times.join(', ')}`);
});

// The launch cost follows the process layout, not the node count, so for one layout 8 B never gets cheaper as
// nodes are added: one process per GPU (the default, as torchrun starts them) and one per node (nccl-tests -g 8).
test('8 B on one node takes no more time than on two', () => {
  assert.ok(
    simulateCollective(h100(1), { bytes: asBytes(8) }).timeUs <=
      simulateCollective(h100(2), { bytes: asBytes(8) }).timeUs,
  );
});

test('8 B takes no less time on more nodes for the same process layout, 1 to 1024 nodes', () => {
  for (const gpusPerProcess of [1, 8]) {
    const times = NODE_COUNTS.map(
      (nodes) => simulateCollective({ ...h100(nodes), gpusPerProcess }, { bytes: asBytes(8) }).timeUs,
    );
    for (let i = 1; i < times.length; i++)
      assert.ok(times[i] >= times[i - 1], `gpusPerProcess ${gpusPerProcess}, 8 B times: ${times.join(', ')}`);
  }
});

test('more NICs are never slower, and 16 × 100G beats 8 × 100G at large sizes', () => {
  for (const nodes of [2, 4, 64]) {
    for (const bytes of [8, 1024 ** 2, GiB]) {
      const fewer = simulateCollective(h100(nodes, 8), { bytes: asBytes(bytes) }).timeUs;
      const more = simulateCollective(h100(nodes, 16), { bytes: asBytes(bytes) }).timeUs;
      assert.ok(more <= fewer * 1.0001, `${nodes} nodes, ${bytes} B: 16 NICs ${more} µs > 8 NICs ${fewer} µs`);
    }
  }
  const a100 = (perNode: number): SystemSpec => ({
    gpu: 'A100-SXM',
    nodes: 2,
    gpusPerNode: 8,
    intraNode: 'nvswitch',
    nic: { gbps: 100, perNode },
  });
  const eight = simulateCollective(a100(8), { bytes: asBytes(10 * GiB) });
  const sixteen = simulateCollective(a100(16), { bytes: asBytes(10 * GiB) });
  // Eight 100G NICs bound the two-node tree at 8 × 12.4 GB/s each way; sixteen double the network channels (16 × 12
  // GB/s, one per NIC), and NCCL's per-channel tree ceiling, not the NICs, then bounds it.
  assert.ok(sixteen.busbwGBps > 1.2 * eight.busbwGBps, `${sixteen.busbwGBps} vs ${eight.busbwGBps}`);
  assert.ok(eight.algbwGBps <= 8 * 12.5, String(eight.algbwGBps));
  // Two 100G NICs per GPU sit behind its one PCIe 4.0 x16 link (24 GB/s as NCCL counts it); a two-node tree moves
  // each byte once each way through it.
  assert.ok(sixteen.algbwGBps <= 8 * 24, String(sixteen.algbwGBps));
});

test('an oversubscribed spine slows only what crosses it', () => {
  const at = (nodes: number, oversubscription: number, bytes: number) =>
    simulateCollective({ ...h100(nodes), network: { oversubscription } }, { bytes: asBytes(bytes), algorithm: 'ring' })
      .timeUs;
  // Two nodes under one leaf per rail: a ring's crossings change rail, so they climb to the spine.
  assert.ok(at(2, 4, GiB) > at(2, 1, GiB) * 1.01);
  const hop = (switchLatencyUs: number) =>
    simulateCollective(
      { ...h100(64), network: { switchLatencyUs: asMicros(switchLatencyUs) } },
      { bytes: asBytes(8), algorithm: 'tree', protocol: 'LL' },
    ).timeUs;
  assert.ok(hop(5) > hop(0.2), 'a slower spine hop costs the tree across leaves');
});

// The network search (net-search.ts): the NICs bound the channels it builds, and more or faster NICs never give
// fewer channels × speed, from one 100G NIC to 32 XDR NICs per node.
test('the network channels never carry more than the NICs, and grow or saturate with their count and rate', () => {
  const rates = [100, 200, 400, 800];
  const counts = [1, 2, 4, 8, 16, 32];
  const capacity = (perNode: number, gbps: number): number => {
    const graph = searchGraph(resolveSystem(h100(4, perNode, gbps)));
    assert.ok(
      graph.channels * graph.bwInter <= (perNode * gbps) / 8 + 1e-9,
      `${perNode} × ${gbps}G: ${graph.channels} × ${graph.bwInter}`,
    );
    return graph.channels * graph.bwInter;
  };
  for (const gbps of rates) {
    const byCount = counts.map((n) => capacity(n, gbps));
    for (let i = 1; i < byCount.length; i++) assert.ok(byCount[i] >= byCount[i - 1], `${gbps}G: ${byCount.join(', ')}`);
  }
  for (const perNode of counts) {
    const byRate = rates.map((g) => capacity(perNode, g));
    for (let i = 1; i < byRate.length; i++)
      assert.ok(byRate[i] >= byRate[i - 1], `${perNode} NICs: ${byRate.join(', ')}`);
  }
});

// NVLSTree moves one chunk per NVLS head per channel loop (nvls-tree-chunks.ts): at 8 MiB on 16 channels × 8 heads
// the whole message is one chunk, so every tree level adds a stage run in series and the time grows with depth.
test('NVLSTree at 8 MiB takes longer on more nodes, 2 to 1024', () => {
  const times = NODE_COUNTS.filter((n) => n > 1).map(
    (nodes) => simulateCollective(h100(nodes), { bytes: asBytes(8 * 1024 ** 2), algorithm: 'nvlstree' }).timeUs,
  );
  for (let i = 1; i < times.length; i++)
    assert.ok(times[i] > times[i - 1], `8 MiB NVLSTree times: ${times.join(', ')}`);
});

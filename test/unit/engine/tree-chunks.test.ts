// NCCL's tree chunking (enqueue.cc calcCollChunking, 2.30.7) and what it does to the simulated tree across nodes:
// chunks follow NCCL's rule, and the tree/LL128 times that the network's whole-chunk forwarding lengthens stay
// monotone in size and in nodes, and never carry more than the NICs can.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simulateCollective, type SystemSpec, asBytes } from '../../../src/engine/index';
import { treeChunkBytes, treeChunks } from '../../../src/engine/algorithms/tree-chunks';

const MiB = 1024 ** 2;

function h100(nodes: number): SystemSpec {
  return {
    gpu: 'H100-SXM',
    nodes,
    gpusPerNode: 8,
    intraNode: 'nvswitch',
    nic: { gbps: 400, perNode: 8 },
    ncclVersion: '2.26.2',
  };
}

test("tree chunks are NCCL's: one buffer step, LL128 halved for deep trees and small messages", () => {
  // LL: 512 KiB / 8 steps, half of it flags. Simple: 4 MiB / 8 steps. LL128: 614,400 B steps, 15 of 16 words data.
  assert.equal(treeChunkBytes('LL', 64 * MiB, 16, 8, 8), 32768);
  assert.equal(treeChunkBytes('Simple', 64 * MiB, 16, 8, 8), 524288);
  assert.equal(treeChunkBytes('LL128', 1024 * MiB, 16, 8, 8), 576000);
  // 8 nodes × 8 GPUs, 16 channels, 4 MiB: 576,000 → 72,000 (first loop) → 18,000 (second), aligned to 1,920 B.
  assert.equal(treeChunkBytes('LL128', 4 * MiB, 16, 8, 8), 17280);
  assert.equal(treeChunks('LL128', 4 * MiB, 16, 8, 8), Math.ceil((4 * MiB) / 16 / 17280));
  // 2 nodes at 512 KiB: two chunks per channel.
  assert.equal(treeChunks('LL128', 512 * 1024, 16, 2, 8), 2);
});

test('LL128 tree chunks grow with the message and shrink with the tree depth', () => {
  for (const nodes of [2, 4, 8, 64, 1024]) {
    let previous = 0;
    for (let bytes = 64 * 1024; bytes <= 4096 * MiB; bytes *= 2) {
      const chunk = treeChunkBytes('LL128', bytes, 16, nodes, 8);
      assert.ok(chunk >= previous, `${nodes} nodes, ${bytes} B: ${chunk} < ${previous}`);
      assert.ok(chunk <= 576000 && chunk % 1920 === 0);
      previous = chunk;
    }
  }
  for (const bytes of [MiB, 16 * MiB, 256 * MiB]) {
    let previous = Infinity;
    for (const nodes of [2, 4, 8, 64, 1024]) {
      const chunk = treeChunkBytes('LL128', bytes, 16, nodes, 8);
      assert.ok(chunk <= previous, `${bytes} B, ${nodes} nodes: ${chunk} > ${previous}`);
      previous = chunk;
    }
  }
});

test('tree/LL128 across nodes: time grows with size and nodes, algbw within the NICs', () => {
  const nodeCounts = [2, 4, 8, 16, 64];
  const times = new Map<number, number[]>();
  for (const nodes of nodeCounts) {
    const spec = h100(nodes);
    const row: number[] = [];
    for (let bytes = 64 * 1024; bytes <= 64 * MiB; bytes *= 2) {
      const r = simulateCollective(spec, { bytes: asBytes(bytes), algorithm: 'tree', protocol: 'LL128' });
      if (row.length > 0) assert.ok(r.timeUs >= row[row.length - 1], `${nodes} nodes, ${bytes} B got faster`);
      // Each node sends the whole message up and receives it down across its NICs (8 × 400 Gb/s).
      assert.ok(r.algbwGBps <= 8 * 50, `${nodes} nodes, ${bytes} B: algbw ${r.algbwGBps}`);
      row.push(r.timeUs);
    }
    times.set(nodes, row);
  }
  for (let i = 1; i < nodeCounts.length; i++) {
    const fewer = times.get(nodeCounts[i - 1])!;
    const more = times.get(nodeCounts[i])!;
    more.forEach((t, j) => assert.ok(t >= fewer[j], `${nodeCounts[i]} nodes faster than ${nodeCounts[i - 1]}`));
  }
});

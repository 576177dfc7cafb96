// PAT (NCCL 2.23+) for reduce-scatter and all-gather with one GPU per node: offered when NCCL offers it, rated with
// NCCL's own formulas, chosen where NCCL's model prefers it, and simulated in log2(n) rounds that send what a ring
// sends and never more than the NICs carry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveSystem, simulateCollective, type SystemSpec, asBytes } from '../../../src/engine/index';
import { algorithmUnavailable, autoCandidates, protocolUnavailable } from '../../../src/engine/select';
import { ncclBusBwGBps, ncclPredictedUs } from '../../../src/engine/nccl-model';
import { searchGraph } from '../../../src/engine/channels';
import { patRoundBlocks } from '../../../src/engine/algorithms/pat';

function onePerNode(nodes: number, ncclVersion?: string, nicsPerNode = 1): SystemSpec {
  return {
    gpu: 'H100-SXM',
    nodes,
    gpusPerNode: 1,
    intraNode: 'nvswitch',
    nic: { gbps: 400, perNode: nicsPerNode },
    ...(ncclVersion ? { ncclVersion } : {}),
  };
}

test('PAT is offered for reduce-scatter and all-gather, one GPU per node, Simple, from NCCL 2.23', () => {
  const system = resolveSystem(onePerNode(8));
  assert.equal(algorithmUnavailable(system, 'pat', 'allgather'), undefined);
  assert.equal(algorithmUnavailable(system, 'pat', 'reducescatter'), undefined);
  assert.match(algorithmUnavailable(system, 'pat', 'allreduce')!, /reduce-scatter and all-gather only/);
  assert.match(protocolUnavailable(system, 'pat', 'LL')!, /Simple/);
  assert.equal(algorithmUnavailable(resolveSystem(onePerNode(8, '2.23.4')), 'pat', 'allgather'), undefined);
  assert.match(algorithmUnavailable(resolveSystem(onePerNode(8, '2.22.3')), 'pat', 'allgather')!, /2\.23/);
  const eightPerNode = resolveSystem({ ...onePerNode(2), gpusPerNode: 8, nic: { gbps: 400, perNode: 8 } });
  assert.match(algorithmUnavailable(eightPerNode, 'pat', 'allgather')!, /one GPU per node/);
  const kinds = autoCandidates(system, 'allgather', 'fp32').filter((c) => c.algorithm === 'pat');
  assert.deepEqual(kinds, [{ algorithm: 'pat', protocol: 'Simple' }]);
  assert.equal(autoCandidates(system, 'allreduce', 'fp32').filter((c) => c.algorithm === 'pat').length, 0);
});

test("NCCL's PAT rating: 8 + log2(N) × interLat / 3.5 + 2.8 × n µs, three quarters of the tree graph's bandwidth", () => {
  for (const nodes of [2, 8, 64, 1024]) {
    const system = resolveSystem(onePerNode(nodes));
    // One GPU per node: the tree's network row (Simple, 14 µs) is the interLat.
    const latencyUs = 8 + (Math.floor(Math.log2(nodes)) * 14) / 3.5 + 2.8 * nodes;
    const graph = searchGraph(system).tree;
    const busBw = 0.75 * graph.channels * (nodes <= 2 ? graph.bwIntra : graph.bwInter);
    assert.ok(Math.abs(ncclBusBwGBps(system, 'allgather', 'pat', 'Simple') - busBw) < 1e-9);
    const bytes = 1 << 20;
    const expected = latencyUs + bytes / (1000 * busBw);
    assert.ok(Math.abs(ncclPredictedUs(system, 'allgather', bytes, 'pat', 'Simple') - expected) < 1e-6);
  }
});

test("auto takes PAT where NCCL's model rates it fastest: small all-gathers across many nodes", () => {
  const system = resolveSystem(onePerNode(64));
  for (const kind of ['allgather', 'reducescatter'] as const) {
    for (let bytes = 1024; bytes <= 1 << 30; bytes *= 16) {
      const candidates = autoCandidates(system, kind, 'fp32');
      let best = candidates[0];
      for (const c of candidates)
        if (
          ncclPredictedUs(system, kind, bytes, c.algorithm, c.protocol) <
          ncclPredictedUs(system, kind, bytes, best.algorithm, best.protocol)
        )
          best = c;
      const r = simulateCollective(system, { bytes: asBytes(bytes), kind });
      assert.equal(`${r.algorithm}/${r.protocol}`, `${best.algorithm}/${best.protocol}`, `${kind} ${bytes} B`);
    }
    assert.equal(simulateCollective(system, { bytes: asBytes(64 * 1024), kind }).algorithm, 'pat');
    assert.equal(simulateCollective(system, { bytes: asBytes(1 << 30), kind }).algorithm, 'ring');
  }
});

test("PAT's rounds send n − 1 blocks per rank, like a ring, in ceil(log2 n) rounds", () => {
  for (let n = 1; n <= 1100; n++) {
    const blocks = patRoundBlocks(n);
    assert.equal(
      blocks.reduce((a, b) => a + b, 0),
      n - 1,
      `${n} ranks`,
    );
    assert.equal(blocks.length, n <= 1 ? 0 : Math.ceil(Math.log2(n)));
  }
});

test('PAT busbw stays within the NIC and its time grows with size and nodes', () => {
  let previousNodes: number[] | undefined;
  for (const nodes of [2, 4, 16, 64, 256, 1024]) {
    const spec = onePerNode(nodes);
    const times: number[] = [];
    for (let bytes = 4096; bytes <= 1 << 28; bytes *= 8) {
      const r = simulateCollective(spec, { bytes: asBytes(bytes), kind: 'allgather', algorithm: 'pat' });
      assert.ok(r.busbwGBps <= 50, `${nodes} nodes, ${bytes} B: busbw ${r.busbwGBps} above one NDR NIC`);
      if (times.length > 0) assert.ok(r.timeUs >= times[times.length - 1], `${nodes} nodes, ${bytes} B got faster`);
      times.push(r.timeUs);
    }
    if (previousNodes) times.forEach((t, i) => assert.ok(t >= previousNodes![i], `${nodes} nodes faster than fewer`));
    previousNodes = times;
  }
});

// CollNet and in-network reduction (network.sharp): NCCL's enablement and cost model for CollNetDirect and
// CollNetChain, and what SHARP does to the network: one stream per node share through its NIC, one per leaf
// through the spine, whatever the node count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asBytes, resolveSystem, simulateCollective, type SystemSpec } from '../../../src/engine/index';
import { ncclAlgBwGBps, ncclPredictedUs } from '../../../src/engine/nccl-model';
import { autoCandidates } from '../../../src/engine/select';
import { channelPlan } from '../../../src/engine/channel-paths';

const GiB = asBytes(1024 ** 3);

function h100(nodes: number, network: SystemSpec['network'] = { sharp: true }): SystemSpec {
  return {
    gpu: 'H100-SXM',
    nodes,
    gpusPerNode: 8,
    intraNode: 'nvswitch',
    nic: { gbps: 400, perNode: 8 },
    network,
  };
}

test('without network.sharp nothing changes and CollNet is refused', () => {
  for (const nodes of [2, 8]) {
    const plain = resolveSystem({ ...h100(nodes), network: undefined });
    const off = resolveSystem(h100(nodes, { sharp: false }));
    for (const bytes of [8, 1024 ** 2, GiB].map(asBytes)) {
      const a = simulateCollective(plain, { bytes });
      const b = simulateCollective(off, { bytes });
      assert.deepEqual([b.algorithm, b.protocol, b.timeUs], [a.algorithm, a.protocol, a.timeUs]);
    }
    assert.throws(() => simulateCollective(off, { bytes: GiB, algorithm: 'collnetdirect' }), /network\.sharp/);
    assert.throws(() => simulateCollective(off, { bytes: GiB, algorithm: 'nvls' }), /network\.sharp/);
    assert.ok(!autoCandidates(off, 'allreduce', 'fp32').some((c) => c.algorithm.startsWith('collnet')));
  }
});

test('CollNet needs several nodes, runs AllReduce only, Simple only, and Direct needs an NVSwitch', () => {
  assert.throws(() => simulateCollective(h100(1), { bytes: GiB, algorithm: 'collnetchain' }), /several nodes/);
  assert.throws(
    () => simulateCollective(h100(2), { kind: 'allgather', bytes: GiB, algorithm: 'collnetdirect' }),
    /AllReduce only/,
  );
  assert.throws(
    () => simulateCollective(h100(2), { bytes: GiB, algorithm: 'collnetdirect', protocol: 'LL128' }),
    /Simple protocol only/,
  );
  const pcie: SystemSpec = { gpu: 'L40S', nodes: 2, gpusPerNode: 4, intraNode: 'pcie', nic: { gbps: 200, perNode: 2 } };
  const sharpPcie = resolveSystem({ ...pcie, network: { sharp: true } });
  assert.throws(() => simulateCollective(sharpPcie, { bytes: GiB, algorithm: 'collnetdirect' }), /NVSwitch/);
  assert.ok(simulateCollective(sharpPcie, { bytes: GiB, algorithm: 'collnetchain' }).timeUs > 0);
});

test("NCCL's cost model for CollNet (tuning.cc 2.30): bandwidth from the intra-node speed, latency from its rows", () => {
  const system = resolveSystem(h100(2));
  // Direct: 8 heads × 48 GB/s, one GPU per head, × 0.85 on Hopper; algbw is half the bus bandwidth.
  assert.ok(Math.abs(ncclAlgBwGBps(system, 'allreduce', 'collnetdirect', 'Simple') - (8 * 48 * 0.85) / 2) < 1e-9);
  assert.equal(ncclAlgBwGBps(system, 'allreduce', 'collnetdirect', 'LL'), 0);
  // Latency: 2 × (1 × 3.7 + 7 × 0.4) + 31 = 44 µs for Direct; 2 × 7 × 2.8 + 30 = 69.2 µs for Chain.
  const bytes = 8;
  const direct = ncclPredictedUs(system, 'allreduce', bytes, 'collnetdirect', 'Simple');
  const directBw = ncclAlgBwGBps(system, 'allreduce', 'collnetdirect', 'Simple');
  assert.ok(Math.abs(direct - (44 + bytes / (1000 * directBw))) < 1e-9, `${direct}`);
  const chain = ncclPredictedUs(system, 'allreduce', bytes, 'collnetchain', 'Simple');
  const chainBw = ncclAlgBwGBps(system, 'allreduce', 'collnetchain', 'Simple');
  assert.ok(Math.abs(chain - (69.2 + bytes / (1000 * chainBw))) < 1e-9, `${chain}`);
  // 2.18 charged 10.7 µs across the network and 8 per intra-node step for Direct.
  const old = resolveSystem({ ...h100(2), ncclVersion: '2.18.3' });
  const oldDirect = ncclPredictedUs(old, 'allreduce', bytes, 'collnetdirect', 'Simple');
  assert.ok(Math.abs(oldDirect - (2 * (8 + 7 * 0.4) + 10.7 + bytes / (1000 * directBw))) < 1e-6, `${oldDirect}`);
});

test('auto weighs CollNet in NCCL order and takes the pair its model rates fastest', () => {
  const system = resolveSystem(h100(8));
  const order = autoCandidates(system, 'allreduce', 'fp32').map((c) => c.algorithm);
  const first = (a: string) => order.indexOf(a as never);
  assert.ok(first('ring') < first('collnetdirect') && first('collnetdirect') < first('collnetchain'));
  assert.ok(first('collnetchain') < first('nvls'));
  for (const bytes of [8, 64 * 1024, 1024 ** 2, 64 * 1024 ** 2, GiB].map(asBytes)) {
    const candidates = autoCandidates(system, 'allreduce', 'fp32');
    const times = candidates.map((c) => ncclPredictedUs(system, 'allreduce', bytes, c.algorithm, c.protocol));
    const best = candidates[times.indexOf(Math.min(...times))];
    const result = simulateCollective(system, { bytes });
    assert.deepEqual([result.algorithm, result.protocol], [best.algorithm, best.protocol], `${bytes} B`);
  }
});

test('with SHARP a large AllReduce takes the same time on 2 to 256 nodes, and never beats what the NICs carry', () => {
  // NVLS's CTAs are held to NCCL's NVLS bandwidth, which NCCL turns into algbw by n / 2(n − 1): from 16 to 2048
  // ranks that costs it up to 1 − (2048/4094)/(16/30) = 6.2 %; CollNet's conversion (one half) does not move.
  const tolerance = { collnetdirect: 0.01, collnetchain: 0.01, nvls: 0.07 };
  for (const algorithm of ['collnetdirect', 'collnetchain', 'nvls'] as const) {
    const times = [2, 4, 16, 64, 256].map((nodes) => {
      const result = simulateCollective(h100(nodes), { bytes: GiB, algorithm });
      // Each node's share crosses its NICs once each way: algbw ≤ 8 NICs × 50 GB/s.
      assert.ok(result.algbwGBps <= 8 * 50, `${algorithm} ${nodes} nodes: ${result.algbwGBps} GB/s`);
      return result.timeUs;
    });
    for (const t of times)
      assert.ok(Math.abs(t / times[0] - 1) < tolerance[algorithm], `${algorithm}: ${times.join(', ')}`);
  }
  // A ring over the same nodes sends 2(N−1)/N of the buffer through every NIC, so it falls behind as N grows.
  const ring = simulateCollective(h100(64), { bytes: GiB, algorithm: 'ring' }).timeUs;
  const direct = simulateCollective(h100(64), { bytes: GiB, algorithm: 'collnetdirect' }).timeUs;
  assert.ok(direct < ring, `CollNetDirect ${direct} µs, ring ${ring} µs`);
});

test('SHARP sends one stream per leaf up an oversubscribed spine, where a ring sends every node', () => {
  const bytes = GiB;
  const time = (network: SystemSpec['network'], algorithm: 'ring' | 'collnetdirect') =>
    simulateCollective(h100(8, network), { bytes, algorithm }).timeUs;
  const open = { sharp: true, nodesPerLeaf: 2 };
  const tight = { sharp: true, nodesPerLeaf: 2, oversubscription: 4 };
  const ringSlowdown = time(tight, 'ring') / time(open, 'ring');
  const sharpSlowdown = time(tight, 'collnetdirect') / time(open, 'collnetdirect');
  assert.ok(ringSlowdown > 2, `ring slowed ${ringSlowdown}×`);
  // Two nodes per leaf at a quarter of their NICs' rate upward: the aggregate needs half a node's NIC rate.
  assert.ok(sharpSlowdown < 1.1, `CollNetDirect slowed ${sharpSlowdown}×`);
});

test('the fast path (one node for all) gives the full simulation, over one leaf and several', () => {
  for (const network of [{ sharp: true }, { sharp: true, nodesPerLeaf: 2, oversubscription: 2 }]) {
    const system = resolveSystem(h100(6, network));
    for (const algorithm of ['collnetdirect', 'collnetchain', 'nvls'] as const)
      for (const bytes of [64 * 1024, 16 * 1024 ** 2].map(asBytes)) {
        const fast = simulateCollective(system, { bytes, algorithm }).timeUs;
        const full = simulateCollective(system, { bytes, algorithm }, { path: 'full' }).timeUs;
        assert.ok(Math.abs(fast - full) < 1e-6 * full, `${algorithm} ${bytes} B: ${fast} vs ${full}`);
      }
  }
});

test("CollNet's channel paths hang each node's head off its leaf switch and the node's GPUs off the head", () => {
  const plan = channelPlan(h100(2), { bytes: GiB, algorithm: 'collnetdirect' });
  assert.equal(plan.algorithm, 'collnetdirect');
  const first = plan.paths[0];
  const leafEdges = first.edges.filter(([parent]) => !parent.includes('gpu'));
  assert.equal(leafEdges.length, 2, 'one head per node under the leaf');
  assert.equal(first.edges.length, 2 + 2 * 7);
  // The leaf switch first, then the two heads, then the GPUs below them.
  assert.equal(first.vertices.length, 17);
  assert.equal(first.vertices[0], leafEdges[0][0]);
});

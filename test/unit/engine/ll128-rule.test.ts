// NCCL enables LL128 by default only on the paths and GPU generations NVIDIA has tested (src/graph/tuning.cc
// ncclTopoTuneModel, read at every tag from v2.12.12-1 to v2.30.7-1): the graph's intra-node path must be NVLink,
// its GPU-to-NIC path PXB or nearer (PXN on SM ≥ 90 from 2.17), and the GPU a generation the release lists.
// NCCL_PROTO overrides the rule. `auto` must never pick a pair NCCL leaves off, a forced one is refused with the
// reason, and a run whose NCCL_PROTO names LL128 is simulated with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  presetSystem,
  resolveSystem,
  simulateCollective,
  sweepAllReduce,
  asBytes,
  type SystemSpec,
} from '../../../src/engine/index';
import { autoCandidates } from '../../../src/engine/select';
import { ncclChoiceUnder, ncclEnvLimits } from '../../../src/engine/nccl-env';
import { ll128DefaultOff } from '../../../src/engine/ll128-rule';

const h100Nodes = (nic: Partial<NonNullable<SystemSpec['nic']>>, ncclVersion = '2.26.2'): SystemSpec => ({
  gpu: 'H100-SXM',
  nodes: 2,
  gpusPerNode: 8,
  intraNode: 'nvswitch',
  pcieGen: 5,
  nic: { gbps: 400, perNode: 8, ...nic },
  ncclVersion,
});

function ll128Candidates(spec: SystemSpec): string[] {
  return autoCandidates(resolveSystem(spec), 'allreduce', 'fp32')
    .filter((c) => c.protocol === 'LL128')
    .map((c) => c.algorithm);
}

test('across nodes LL128 stays on while GPUs reach their NICs through PCIe switches, off through the CPU', () => {
  for (const version of ['2.18.5', '2.26.2', '2.30.7']) {
    for (const path of ['PIX', 'PXB'] as const)
      assert.deepEqual(ll128Candidates(h100Nodes({ path }, version)), ['tree', 'ring'], `H100, ${version}, ${path}`);
    for (const path of ['PHB', 'SYS'] as const)
      assert.deepEqual(ll128Candidates(h100Nodes({ path }, version)), [], `H100, ${version}, ${path}`);
  }
  // One node has no NICs in NCCL's topology (it trims them), so the path never matters there.
  assert.deepEqual(ll128Candidates({ ...h100Nodes({ path: 'SYS' }), nodes: 1 }), ['tree', 'ring']);
});

test('the fixtures-real A100 log (NCCL 2.16.5, one GPU per node, "type LOC/PHB") runs without LL128', () => {
  // nccl-debug-a100-2node-graph-ib.log: "Pattern 4, crossNic 0, nChannels 1, bw 24/24, type LOC/PHB": the GPU is
  // alone in its node (LOC, within NVB) and reaches its HCA through the CPU (PHB, beyond PXB on SM80).
  const spec: SystemSpec = {
    gpu: 'A100-PCIe',
    nodes: 2,
    gpusPerNode: 1,
    intraNode: 'pcie',
    pcieGen: 4,
    nic: { gbps: 200, perNode: 1, path: 'PHB' },
    ncclVersion: '2.16.5',
  };
  assert.deepEqual(ll128Candidates(spec), []);
  // The same GPU with its NIC on its own PCIe switch: a lone GPU has no intra-node path to forbid it.
  assert.deepEqual(ll128Candidates({ ...spec, nic: { gbps: 200, perNode: 1, path: 'PIX' } }), ['tree', 'ring']);
});

test('a NIC beyond NCCL_NET_GDR_LEVEL is reached through host memory, which NCCL counts as PHB', () => {
  // The H100 datasets set NCCL_NET_GDR_LEVEL=1, which paths.cc reads as PIX (levelsOldToNew).
  assert.deepEqual(ll128Candidates(h100Nodes({ path: 'PIX', gdrLevel: 'PIX' })), ['tree', 'ring']);
  assert.deepEqual(ll128Candidates(h100Nodes({ path: 'PXB', gdrLevel: 'PIX' })), []);
  assert.deepEqual(ll128Candidates(h100Nodes({ path: 'PIX', gdrLevel: 'LOC' })), []);
  assert.deepEqual(ll128Candidates(h100Nodes({ path: 'PXB', gdrLevel: 'SYS' })), ['tree', 'ring']);
});

test("the rule follows each release's list of GPU generations and its PXN allowance", () => {
  const on = (ncclMinor: number, smVersion: number, interPath?: 'PIX' | 'PXB' | 'PXN' | 'PHB') =>
    ll128DefaultOff({ ncclMinor, smVersion, intraPath: 'NVL', interPath }) === undefined;
  // SM86 (NVLink-bridged RTX 3090 / A40) and SM89 fall to the switch's default up to 2.26; 2.27 takes any SM ≥ 70.
  assert.equal(on(26, 86), false);
  assert.equal(on(27, 86), true);
  // Hopper joins in 2.15, Blackwell in 2.25.
  assert.equal(on(14, 90), false);
  assert.equal(on(15, 90), true);
  assert.equal(on(24, 100), false);
  assert.equal(on(25, 100), true);
  assert.equal(on(12, 80), true);
  // PXN is close enough on SM ≥ 90 from 2.17, never before Hopper; PHB never.
  assert.equal(on(16, 90, 'PXN'), false);
  assert.equal(on(17, 90, 'PXN'), true);
  assert.equal(on(30, 80, 'PXN'), false);
  assert.equal(on(30, 80, 'PXB'), true);
  assert.equal(on(30, 100, 'PHB'), false);
  // A graph that crosses PCIe inside the node never gets LL128 by default.
  assert.notEqual(ll128DefaultOff({ ncclMinor: 30, smVersion: 90, intraPath: 'PIX' }), undefined);
});

test('systems: NVLink-bridged SM86 pairs get LL128 from 2.27 only, and four bridged cards not at all', () => {
  const pair = presetSystem('bridge-3090x2')!;
  assert.deepEqual(ll128Candidates({ ...pair, ncclVersion: '2.26.2' }), []);
  assert.deepEqual(ll128Candidates({ ...pair, ncclVersion: '2.27.7' }), ['tree', 'ring']);
  // Two bridged pairs: NCCL's ring crosses PCIe between the pairs, so its graph's intra-node type is a PCIe one.
  assert.deepEqual(ll128Candidates({ ...pair, gpusPerNode: 4, ncclVersion: '2.30.7' }), []);
});

test('auto never picks LL128 where NCCL leaves it off, and a forced LL128 is refused with the reason', () => {
  const phb = h100Nodes({ path: 'PHB' });
  const rows = sweepAllReduce(phb, { minBytes: asBytes(8), maxBytes: asBytes(1 << 30), factor: 4 });
  assert.ok(rows.length > 10);
  assert.ok(
    rows.every((r) => r.protocol !== 'LL128'),
    rows.map((r) => `${r.bytes} ${r.protocol}`).join(', '),
  );
  assert.ok(
    sweepAllReduce(h100Nodes({ path: 'PIX' }), { minBytes: asBytes(8), maxBytes: asBytes(1 << 30), factor: 4 }).some(
      (r) => r.protocol === 'LL128',
    ),
  );
  assert.throws(
    () => simulateCollective(phb, { bytes: asBytes(1 << 20), algorithm: 'tree', protocol: 'LL128' }),
    /NCCL 2\.26 enables LL128 across nodes only when .*PHB.*NCCL_PROTO/,
  );
});

test('NCCL_PROTO overrides the rule as NCCL does: a named LL128 runs whatever the paths', () => {
  const phb = resolveSystem(h100Nodes({ path: 'PHB' }));
  const forced = simulateCollective(phb, {
    bytes: asBytes(1 << 20),
    algorithm: 'tree',
    protocol: 'LL128',
    ncclProtoSet: true,
  });
  assert.equal(forced.protocol, 'LL128');
  assert.ok(forced.timeUs > 0);
  const pick = ncclChoiceUnder(
    phb,
    'allreduce',
    1 << 20,
    'fp32',
    ncclEnvLimits({ NCCL_ALGO: 'tree', NCCL_PROTO: 'LL128' }),
  );
  assert.deepEqual(pick, { algorithm: 'tree', protocol: 'LL128' });
  // Without NCCL_PROTO, NCCL_ALGO=tree on the same system keeps to the protocols the rule leaves on.
  const tree = ncclChoiceUnder(phb, 'allreduce', 1 << 20, 'fp32', ncclEnvLimits({ NCCL_ALGO: 'tree' }));
  assert.notEqual(tree?.protocol, 'LL128');
});

// The NCCL_DEBUG topology dump read as links, not as printed lines (issue 14): NCCL prints a GPU–GPU or CPU–CPU
// link once from each end and every rank prints the whole dump again, and a SYS link at LOC_BW (5000 GB/s) is
// NCCL's placeholder for an inter-CPU link it has no figure for. The lines below are those of
// ../shared/fixtures-real/nccl-debug-a100-2node-graph-ib.log (NCCL 2.16.5, two AMD sockets) and of
// nccl-debug-a100-2gpu-graph-tuning.log (two ranks of one process, two A100s on an NVLink bridge).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseNcclLogFacts } from '../../../src/native/import/index';
import { logSections } from '../../../src/extension/glue/measurement-view';

const AMD_TWO_SOCKETS = `n013:101855:101885 [0] NCCL INFO === System : maxBw 24.0 totalBw 24.0 ===
n013:101855:101885 [0] NCCL INFO CPU/1 (1/2/-1)
n013:101855:101885 [0] NCCL INFO + SYS[5000.0] - CPU/0
n013:101855:101885 [0] NCCL INFO + PCI[24.0] - GPU/81000 (0)
n013:101855:101885 [0] NCCL INFO + PCI[24.0] - NIC/D1000
n013:101855:101885 [0] NCCL INFO               + NET[25.0] - NET/1 (7a852d0003f6ceb8/1/25.000000)
n013:101855:101885 [0] NCCL INFO CPU/0 (1/2/-1)
n013:101855:101885 [0] NCCL INFO + SYS[5000.0] - CPU/1
n013:101855:101885 [0] NCCL INFO + PCI[6.0] - NIC/21000
n013:101855:101885 [0] NCCL INFO              + NET[3.1] - NET/0 (b8e2ce0003f6ceb8/1/3.125000)
n013:101855:101885 [0] NCCL INFO ==========================================
`;

const rankDump = (
  rank: number,
) => `mew0:64904:6492${rank} [${rank}] NCCL INFO === System : maxBw 240.0 totalBw 240.0 ===
mew0:64904:6492${rank} [${rank}] NCCL INFO CPU/0-0 (1/1/2)
mew0:64904:6492${rank} [${rank}] NCCL INFO + PCI[24.0] - GPU/0-17000 (0)
mew0:64904:6492${rank} [${rank}] NCCL INFO               + NVL[240.0] - GPU/0-65000
mew0:64904:6492${rank} [${rank}] NCCL INFO + PCI[24.0] - NIC/0-4b000
mew0:64904:6492${rank} [${rank}] NCCL INFO + PCI[24.0] - GPU/0-65000 (1)
mew0:64904:6492${rank} [${rank}] NCCL INFO               + NVL[240.0] - GPU/0-17000
mew0:64904:6492${rank} [${rank}] NCCL INFO ==========================================
`;

test('a link printed from both of its ends, and by every rank, is one link', () => {
  const facts = parseNcclLogFacts(rankDump(0) + rankDump(1));
  assert.deepEqual(
    facts.topologyLinks.map((l) => `${l.kind} ${l.GBps} ${l.from} ${l.to}`),
    [
      'PCI 24 CPU/0-0 GPU/0-17000',
      'NVL 240 GPU/0-17000 GPU/0-65000',
      'PCI 24 CPU/0-0 NIC/0-4b000',
      'PCI 24 CPU/0-0 GPU/0-65000',
    ],
  );
  const topology = logSections(facts).find((s) => s.title === 'Topology')!;
  assert.ok(
    topology.lines.includes('links in the topology dump (one node, each link once): 3 × PCI 24 GB/s, 1 × NVL 240 GB/s'),
    topology.lines.join('\n'),
  );
});

test('the inter-CPU SYS link at 5000 GB/s is one link, shown as NCCL placeholder and not as a bandwidth', () => {
  const facts = parseNcclLogFacts(AMD_TWO_SOCKETS);
  assert.deepEqual(
    facts.topologyLinks.filter((l) => l.kind === 'SYS').map((l) => `${l.from} ${l.to}`),
    ['CPU/1 CPU/0'],
  );
  const lines = logSections(facts).find((s) => s.title === 'Topology')!.lines;
  const links = lines.find((l) => l.startsWith('links in the topology dump'));
  assert.equal(
    links,
    'links in the topology dump (one node, each link once): 1 × SYS (5000 GB/s placeholder), 2 × PCI 24 GB/s, ' +
      '1 × NET 25 GB/s, 1 × PCI 6 GB/s, 1 × NET 3.1 GB/s',
  );
  assert.doesNotMatch(links!, /SYS 5000 GB\/s/);
  assert.ok(
    lines.some((l) => /^SYS CPU\/1 – CPU\/0: NCCL printed 5000 GB\/s, its placeholder \(LOC_BW\)/.test(l)),
    lines.join('\n'),
  );
});

test('a SYS link with a real inter-socket figure (Intel QPI, 6 GB/s) is shown as the bandwidth it is', () => {
  const facts = parseNcclLogFacts(AMD_TWO_SOCKETS.replaceAll('SYS[5000.0]', 'SYS[6.0]'));
  const lines = logSections(facts).find((s) => s.title === 'Topology')!.lines;
  assert.ok(
    lines.some((l) => l.includes('1 × SYS 6 GB/s')),
    lines.join('\n'),
  );
  assert.ok(!lines.some((l) => /placeholder/.test(l)), lines.join('\n'));
});

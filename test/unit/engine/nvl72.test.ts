// NVLS on large NVLink domains: GB200 NVL72 (72 GPUs behind NVLink switches, one NCCL node under MNNVL) and the
// GPU counts from which NCCL takes NVLS on one HGX board.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  presetSystem,
  sweepAllReduce,
  systemFromDescription,
  type SystemSpec,
  asBytes,
} from '../../../src/engine/index';

const withRelease = (spec: SystemSpec, ncclVersion: string): SystemSpec => ({ ...spec, ncclVersion });

test('GB200 NVL72 under NCCL 2.26: NVLS at every size, as the NVLS search fits 32 heads (33 × 20 GB/s ≤ 721.8 per GPU)', () => {
  const rows = sweepAllReduce(withRelease(presetSystem('gb200-nvl72')!, '2.26.2'), {
    minBytes: asBytes(8),
    maxBytes: asBytes(16 * 2 ** 30),
    factor: 4,
  });
  for (const row of rows) assert.equal(`${row.algorithm}/${row.protocol}`, 'nvls/Simple', `${row.bytes} B`);
  // Multimem moves about S per GPU port each way where a ring over 72 GPUs moves 2S·71/72, so the busbw passes
  // what any ring can reach (NCCL's ring bus bandwidth on 18 NVLink 5 ports is 720 GB/s).
  assert.ok(rows.at(-1)!.busbwGBps > 720, `${rows.at(-1)!.busbwGBps} GB/s`);
  // And stays below what the ports carry for multimem at Blackwell's NVLS efficiency: 2 × 721.8 × 0.74.
  assert.ok(rows.at(-1)!.busbwGBps < 2 * 721.8 * 0.74, `${rows.at(-1)!.busbwGBps} GB/s`);
});

test('NVLS GPU-count thresholds on one board (8 GiB): H200 ring at 4, NVLS from 5; B200 ring to 5, NVLS from 6', () => {
  const pick = (preset: string, gpusPerNode: number): string => {
    const spec = withRelease(presetSystem(preset, { gpusPerNode })!, '2.27.7');
    const [row] = sweepAllReduce(spec, { minBytes: asBytes(8 * 2 ** 30), maxBytes: asBytes(8 * 2 ** 30), factor: 2 });
    return row.algorithm;
  };
  assert.deepEqual(
    [4, 5, 8].map((g) => pick('hgx-h200', g)),
    ['ring', 'nvls', 'nvls'],
  );
  assert.deepEqual(
    [4, 5, 6, 8].map((g) => pick('dgx-b200', g)),
    ['ring', 'ring', 'nvls', 'nvls'],
  );
});

test('a run over the trays of one NVL72 rack is one NVLink domain of all its GPUs, not nodes joined by NICs', () => {
  const spec = systemFromDescription({
    gpu: 'GB200',
    gpus_per_node: 4,
    nodes: 18,
    interconnect: 'NVLink 5 (GB200 NVL72 rack, multi-node NVLink)',
    nic: '4x ConnectX-7 400 Gb/s',
  });
  assert.equal(spec?.nodes, 1);
  assert.equal(spec?.gpusPerNode, 72);
  assert.equal(spec?.intraNode, 'nvswitch');
  const ib = systemFromDescription({
    gpu: 'H100 SXM',
    gpus_per_node: 8,
    nodes: 2,
    interconnect: 'NVSwitch + InfiniBand NDR',
    nic: '8x 400 Gb/s',
  });
  assert.equal(ib?.nodes, 2);
});

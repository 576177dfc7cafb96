// NCCL's ring search inside one node (search.cc ncclTopoCompute) on NVLink-bridged pairs: NCCL reads the bridge's
// active links from NVML (xml.cc) at its per-link figure (topo.cc), so the graph, the runtime channels and NCCL's
// modelled bandwidth follow from the link count; what the bridge delivers is the simulator's link capacity.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { presetSystem, resolveSystem, type SystemSpec } from '../../../src/engine/index';
import { searchChannels, searchGraph } from '../../../src/engine/channels';
import { needSharedDir, SHARED_ROOT } from '../requirements';

const pair = (gpu: string, nvlinkLinks?: number): SystemSpec => ({
  gpu,
  nodes: 1,
  gpusPerNode: 2,
  intraNode: 'nvlink-bridge',
  ...(nvlinkLinks === undefined ? {} : { overrides: { nvlinkLinks } }),
});

test("an H100 PCIe pair's graph follows from its 12 links at 20.6 GB/s, whatever share the bridge delivers", () => {
  // 12 × 20.6 = 247.2 GB/s: 4 channels × 60, duplicated to 8 × 30 (ncclTopoDupChannels: 60 ≥ 50), 16 at runtime.
  const system = resolveSystem(presetSystem('bridge-h100pciex2')!);
  assert.deepEqual([searchGraph(system).channels, searchGraph(system).bwIntra], [8, 30]);
  assert.equal(searchChannels(system), 16);
  // 18 links (370.8 GB/s) give 6 × 60 → 12 × 30, 24 at runtime: the channel count nccl-tests 194's log shows.
  assert.equal(searchChannels(resolveSystem(pair('H100-PCIe', 18))), 24);
});

test('the graph speed times its channels never exceeds the links NCCL counts', () => {
  for (const gpu of ['H100-PCIe', 'A100-PCIe', 'RTX3090']) {
    for (let links = 1; links <= 18; links++) {
      const system = resolveSystem(pair(gpu, links));
      const graph = searchGraph(system);
      const ncclGBps = system.gpu.nvlinkGBpsPerLink * links;
      assert.ok(
        graph.channels * graph.bwIntra <= ncclGBps + 1e-9,
        `${gpu} × ${links} links: ${graph.channels} × ${graph.bwIntra}`,
      );
    }
  }
});

const fixtures = needSharedDir('fixtures-real');

test(
  "the A100 PCIe pair's NCCL_DEBUG log (NCCL 2.27.7) shows the ring graph and channels the search gives",
  { skip: fixtures },
  () => {
    const log = readFileSync(join(SHARED_ROOT, 'fixtures-real', 'nccl-debug-a100-2gpu-graph-tuning.log'), 'utf8');
    const ring = /Pattern 4, crossNic 0, nChannels (\d+), bw ([\d.]+)\//.exec(log);
    const runtime = /(\d+) coll channels/.exec(log);
    const link = /NVL\[([\d.]+)\]/.exec(log);
    assert.ok(ring && runtime && link, 'the log has its ring graph, runtime channels and NVLink figure');
    const system = resolveSystem(pair('A100-PCIe'));
    assert.equal(system.gpu.nvlinkGBpsPerLink * system.gpu.nvlinkLinks, Number(link[1]));
    assert.equal(searchGraph(system).channels, Number(ring[1]));
    assert.equal(searchGraph(system).bwIntra, Number(ring[2]));
    assert.equal(searchChannels(system), Number(runtime[1]));
  },
);

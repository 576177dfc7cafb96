// What the panel must show for each real measurement file in ../shared/fixtures-real, read by the unit test of the
// panel model (test/unit/extension/measurement-view.test.ts) and by the end-to-end import of every file in real
// VS Code (test/e2e/imports.test.ts), so that both check one list and a new file cannot slip past either.
import { existsSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';

export const FIXTURES_REAL = resolve(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures-real');

/** The measurement files (not their .source.md notes or the README), sorted; empty where ../shared is absent. */
export function fixtureFiles(): string[] {
  return existsSync(FIXTURES_REAL)
    ? readdirSync(FIXTURES_REAL)
        .filter((f) => !f.endsWith('.md'))
        .sort()
    : [];
}

/** What each file's own text names as its hardware (undefined: the file names none), from its .source.md. */
export const HARDWARE: Readonly<Record<string, RegExp | undefined>> = {
  'deepspeed-commslogger-summary-2022.txt': undefined,
  'deepspeed-commslogger-summary-debug-2022.txt': undefined,
  'deepspeed-commslogger-verbose-2022.log': undefined,
  'kineto-128rank-sendrecv-sampled-rank0.json.gz': undefined,
  'kineto-a100-2rank-nccl2.17-cpu-excerpt.json': /^2 × NVIDIA A100-PG509-200$/,
  'kineto-a100-2rank-nccl2.17-full.json.gz': /^2 × NVIDIA A100-PG509-200$/,
  'kineto-a100-2rank-nccl2.17-gpu-excerpt.json': /^2 × NVIDIA A100-PG509-200$/,
  'kineto-a100-8rank-2022-ncclworkelem-gpu-excerpt.json': /^8 × NVIDIA A100-PG509-200$/,
  'kineto-b200-8rank-nccl2.27-allgather-excerpt.json': /^8 × NVIDIA B200$/,
  'kineto-mi300-8rank-rccl-generic-excerpt.json': /^8 × AMD Instinct MI300X$/,
  'nccl-debug-a100-2gpu-graph-tuning.log': /^2 × NVIDIA A100 80GB PCIe on 1 node$/,
  'nccl-debug-a100-2node-graph-ib.log': /^2 × NVIDIA A100-PCIE-40GB on 2 nodes$/,
  'nccl-debug-a100-8gpu-multinode-ofi.log': undefined,
  'nccl-debug-rtx5090-2rank-tuning.log': undefined,
  'nccl-tests-a100-16gpu-2024-all_gather.txt': /^16 × NVIDIA A100-SXM4-40GB on 2 nodes$/,
  'nccl-tests-a100-2160gpu-2024.txt': /^2160 × NVIDIA A100-SXM4-40GB on 540 nodes$/,
  'nccl-tests-a100-8gpu-2021.txt': /^8 × A100-SXM4-40GB on 1 node$/,
  'nccl-tests-a100-8gpu-2024.txt': /^8 × NVIDIA A100-SXM4-40GB on 2 nodes$/,
  'nccl-tests-gh200-16gpu-2026-wrong-truncated.txt': /^16 × NVIDIA GH200 120GB on 4 nodes$/,
  'nccl-tests-gh200-8gpu-2026.txt': /^8 × NVIDIA GH200 120GB on 2 nodes$/,
  'nccl-tests-h100-16gpu-2025.txt': /^16 × NVIDIA H100 80GB HBM3 on 2 nodes$/,
  'nccl-tests-h100-2gpu-2026.txt': /^2 × NVIDIA H100 80GB HBM3 on 2 nodes$/,
  'nccl-tests-k80-4gpu-2022.txt': /^4 × Tesla K80 on 1 node$/,
  'nccl-tests-rtx5090-2rank-2026-broadcast.txt': /^2 × NVIDIA GeForce RTX 5090 on 1 node$/,
  'nccl-tests-t4-2gpu-2023.txt': /^2 × Tesla T4 on 2 nodes$/,
  'nccl-tests-v100-12gpu-2020-all_gather.txt': /^12 × Tesla V100-SXM3-32GB on 1 node$/,
  'nccl-tests-v100-12gpu-2020-reduce_scatter.txt': /^12 × Tesla V100-SXM3-32GB on 1 node$/,
  'nccl-tests-v100-12gpu-2020.txt': /^12 × Tesla V100-SXM3-32GB on 1 node$/,
};

/**
 * NCCL_DEBUG content each file with NCCL INFO lines must show: a section (card) title and a line in it. Every such
 * file has its Topology; the two logs with NCCL's tuning table (NCCL_DEBUG_SUBSYS=TUNING) have it too.
 */
export const LOG_CONTENT: Readonly<Record<string, readonly [section: RegExp, line: RegExp][]>> = {
  'nccl-debug-a100-2gpu-graph-tuning.log': [
    [/^Topology$/, /: 3 × PCI 24 GB\/s, 1 × NVL 240 GB\/s$/],
    [/^Channels$/, /graph pattern/],
    [/^Rings \(48\)$/, /0 -> 1 -> 0/],
    [/^Trees/, /./],
    [/^Tuning table/, /^AllReduce: .*Ring\/LL [\d.]+ µs, [\d.]+ GB\/s/],
  ],
  'nccl-debug-a100-2node-graph-ib.log': [
    [/^Topology$/, /network: IB with GPUDirect RDMA/],
    // NCCL 2.16 prints the AMD sockets' SYS link at LOC_BW (5000 GB/s): one link, a placeholder, not a bandwidth.
    [/^Topology$/, /^links in the topology dump \(one node, each link once\): 1 × SYS \(5000 GB\/s placeholder\)/],
    [/^Channels$/, /^2 channels/],
    [/^Rings \(2\)$/, /1 -> 0 -> 1/],
    [/^Trees \(1\)$/, /->0->/],
  ],
  'nccl-debug-a100-8gpu-multinode-ofi.log': [
    [/^Topology$/, /^8 ranks on 2 nodes, 4 per node$/],
    [/^Channels$/, /NVLS: not available, 0 NVLS channels/],
    [/^Trees \(8\)$/, /->/],
  ],
  'nccl-debug-rtx5090-2rank-tuning.log': [
    [/^Topology$/, /NCCL_P2P_DISABLE=1/],
    [/^Tuning table/, /^Broadcast: Ring\/LL 9\.3 µs, 1\.2 GB\/s/],
    [/^NCCL's choices per call$/, /^Broadcast: RING\/LL for 1 KiB to 16 KiB, RING\/SIMPLE for 32 KiB to /],
  ],
  'nccl-tests-t4-2gpu-2023.txt': [
    [/^Topology$/, /network: AWS Libfabric/],
    [/^Trees \(2\)$/, /->/],
  ],
};

// Every constant of the engine's time model, in one place, with where it comes from. Hardware numbers come from
// ../shared/reference/hardware-facts.md and NCCL's own tables (../shared/reference/nccl-cost-model.md); the few
// fitted ones say so and say what they stand for. docs/calibration.md shows the errors these give.
import type { Protocol } from './collective-types';

/** PCIe x16 one-direction bandwidth as NCCL models it (topo.cc: width × per-lane value / 80), by generation. */
export const PCIE_X16_GBPS: Readonly<Record<3 | 4 | 5 | 6, number>> = { 3: 12, 4: 24, 5: 48, 6: 96 };

/**
 * GPU-to-GPU bandwidth across the inter-socket link (UPI / Infinity Fabric) when nothing else is known: measured
 * 21–22 GB/s between RTX 4090s on two EPYC sockets (p2pBandwidthLatencyTest, chlc blog); NCCL assumes 22 for
 * Sapphire Rapids (16 for AMD is its conservative default). A system file can override it.
 */
export const DEFAULT_INTER_SOCKET_GBPS = 22;

/**
 * Host DRAM bandwidth one socket gives to GPU traffic staged through it, reads and writes together (8 DDR4-3200
 * channels ≈ 205 GB/s peak; DMA-heavy mixes reach about 60 %). Fitted with the no-P2P RTX 4090 run, whose ring
 * settles at 15 GB/s: four GPUs per socket each write and read back every byte. One dataset supports it and six
 * searches found no published figure for DRAM's share under this DMA mix, nor for the PCIe packet sizes that would
 * decide the other candidate, read requests on the reader's outbound link (docs/calibration.md, "Sixth search"), so
 * `validate --leave-one-out` judges that run with the DRAM peak and reports it failing.
 */
export const HOST_MEMORY_GBPS = 120;

/**
 * One-way latency of one hop, µs: wire, SerDes and switch traversal only. NCCL's per-step costs (its hwLat table,
 * nccl-versions.ts) already carry the software side of each hop, so these stay small; the uniform ring uses its own
 * latency. A GPU's port to an NVSwitch is one NVLink hop each way, and the switch's traversal is counted in it, so
 * a GPU-to-GPU route through the switch costs two NVLink hops.
 */
export const NVLINK_HOP_US = 0.1;
export const PCIE_HOP_US = 0.25;
export const INTER_SOCKET_HOP_US = 0.2;
/**
 * Staging through host memory (no P2P, NCCL's SHM transport): the sender posts writes into pinned host memory and
 * the receiver polls it across PCIe; a DRAM access on top of the PCIe hops.
 */
export const HOST_STAGING_HOP_US = 0.25;
/** NIC send + receive processing (HCA) and one switch traversal (IB port latency 0.5–0.6 µs). */
export const NIC_HOP_US = 1;
export const NETWORK_SWITCH_HOP_US = 0.2;

/**
 * A NIC's usable share of its line rate: ib_send_bw reaches 396 of 400 Gb/s (nccl-tests 309) and maintainers
 * quote 46–49 GB/s per NDR NIC under NCCL.
 */
export const NIC_EFFICIENCY = 0.99;

/**
 * Share of NCCL's per-link NVLink figure that SM-driven copies reach: "total effective bandwidth should therefore
 * be 240GB/s on A100, but some other bottlenecks on the GPUs limits it to ~230GB/s" (NCCL maintainer,
 * nccl-tests 149). Applied to every NVLink and NVSwitch port.
 */
export const NVLINK_EFFICIENCY = 230 / 240;

/** Payload bytes per wire byte. LL: 8 data bytes per 16-byte line; LL128: 120 of 128; Simple: all. */
export const PROTOCOL_EFFICIENCY: Readonly<Record<Protocol, number>> = { LL: 0.5, LL128: 120 / 128, Simple: 1 };

/** NCCL's three latency classes (tuning.cc): NVLink, PCIe and the network. */
export type { LatencyClass } from './nccl-versions';
export { PROTOCOL_INDEX } from './nccl-versions';

/**
 * Inside a node, Simple ring steps take longer than NCCL's figure: a Simple step writes its slice, fences
 * (fence.acq_rel.sys), then stores the step counter the peer polls, and that round trip is slower than NCCL's
 * selection model assumes, so rings reach their bandwidth far later than that model predicts. Fitted on rings only:
 * ×2 from Ada/Hopper on (GB200, H100, RTX 4090), ×3.8 before (the A100 set, NCCL 2.18). A second A100 run
 * (SuperBench, A100 40GB, -g 8) supports the pre-Ada value in the leave-one-out refit: Ampere rings vary between hosts.
 * LL and LL128 keep NCCL's figure: they flag every line and have no per-step fence; what their steps cost beyond it
 * is that they move whole trips of the CTA (algorithms/ring-chunks.ts). Until session 9 the scale covered LL128 too
 * and stood in for that. Trees and NVLS, simulated as pipelines, keep NCCL's figure (context.ts syncUs).
 *
 * On a PCIe path (peer to peer or through host memory) a Simple step runs the same code as on NVLink (prims_simple.h:
 * store the slice, fence.acq_rel.sys, store the step counter; the peer polls it), and NCCL's own PCIe figure (5.7 µs
 * per ring/Simple step against 3.4 on NVLink, tuning.cc) already carries the slower fabric. From Ada on the ×2 was
 * fitted on a PCIe run too (the RTX 4090 through host memory) and holds there; before Ada it was fitted on NVSwitch
 * A100s only, and no pre-Ada PCIe ring is in ../shared, so PCIe steps keep NCCL's figure (the same fallback
 * `validate --leave-one-out` takes for this constant).
 */
export function intraStepLatencyScale(smVersion: number, linkClass: 'nvlink' | 'pcie'): number {
  if (smVersion >= 89) return 2;
  return linkClass === 'nvlink' ? 3.8 : 1;
}

/**
 * Host time to launch one collective on one GPU, µs: a CUDA kernel launch (2–5 µs) plus NCCL's enqueue. nccl-tests
 * launches back to back, so the host overlaps the GPUs and a collective takes about max(host, device). A process that
 * drives N GPUs (nccl-tests `-g N`, a system's `gpusPerProcess`) launches N kernels per collective, one after another;
 * training jobs start one process per GPU. Fitted on the flat small-message floors of the single-process runs
 * (RTX 4090 -g 8, GB200 -g 4, A100 -g 8): 39, 15.4 and 44.8 µs.
 */
export const LAUNCH_PER_GPU_US = 4.8;

/**
 * Host time per work slot NCCL ≤ 2.12 fills for each channel beyond the first, per GPU the process drives, µs
 * (nccl-versions.ts hostWorkFifo). The slot's cache lines were last written by the GPU across PCIe (it clears the
 * slot's flag once it has read the work), so the host's flag read and its 512-byte memset and fill miss the cache:
 * the order of two DRAM accesses, 0.1 µs each. Fitted on the one run of such a release in ../shared (SuperBench, 8×
 * A100, -g 8; its log prints "Launch mode", which enqueue.cc prints up to 2.12): from 32 KiB to 1 MiB NCCL keeps
 * ring/LL at 4–5.5 KiB per channel and step while it raises the channels from 1 to 24, and the time grows by
 * 0.21–0.23 µs per channel and GPU (34.7 µs at one channel, 47.5 at 8, 60.3 at 16, 74.8 at 24), where the Azure
 * A100 run (NCCL 2.18, the same -g 8) grows by under 0.05. One dataset supports it: leave-one-out takes 0.
 */
export const HOST_WORK_SLOT_US = 0.2;

/**
 * How sharply host and device time combine (a p-norm; ∞ would be a plain maximum). Iteration-to-iteration jitter
 * makes the mean of max(host, device) exceed the larger mean when the two are close. Fitted on the single-process runs near their floor (A100 at 1 MiB, GB200 at 2–4 MiB).
 */
export const OVERLAP_SHARPNESS = 4;

/**
 * Per-channel throughput ceilings NCCL measured per architecture (tuning.cc), GB/s, by node-count column
 * [1 node, 2 nodes, ≥3 nodes] and architecture [Volta, Ampere, Hopper, Blackwell]. The simulator uses them as the
 * ceiling of what one CTA (channel) can push, i.e. SM-side limits, not link limits.
 */
type ArchTable = readonly (readonly [number, number, number])[];
export const LL_MAX_GBPS: ArchTable = [
  [39, 39, 20.4],
  [87.7, 22.5, 19],
  [141, 45, 35],
  [282, 90, 70],
];
export const RING_LL128_PER_CHANNEL_GBPS: ArchTable = [
  [20, 20, 20],
  [20, 20, 20],
  [36.7, 36.7, 36.7],
  [40, 40, 40],
];
export const TREE_LL128_PER_CHANNEL_GBPS: ArchTable = [
  [20, 20, 20],
  [20, 20, 20],
  [36.7, 36.7, 29],
  [55.6, 31.67, 20],
];
export const TREE_PER_CHANNEL_GBPS: ArchTable = [
  [26.5, 18.5, 10],
  [24, 23.6, 17.8],
  [38.7, 41.4, 36],
  [70, 42.8, 24],
];
export const NVLS_TREE_PER_CHANNEL_GBPS: ArchTable = [
  [26.5, 18.5, 10],
  [24, 23.6, 17.8],
  [0, 57.7, 45.5],
  [0, 96, 80],
];

/**
 * NCCL's tree correction by message size (index log2(bytes/64), 64 B … 256 MiB): tree pipelines reach their
 * bandwidth late, measured by NVIDIA. Applied to tree and NVLSTree throughput ceilings.
 */
export const TREE_CORRECTION: Readonly<Record<Protocol, readonly number[]>> = {
  LL: [1, 1, 1, 1, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1, 1, 1, 1],
  LL128: [1, 1, 1, 1, 1, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.9, 0.9, 0.9, 1, 1, 1],
  Simple: [
    0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7, 0.7, 0.8, 0.9, 0.9,
    0.9,
  ],
};

export function treeCorrection(protocol: Protocol, bytes: number): number {
  const index = Math.floor(Math.log2(Math.max(1, bytes / 64)));
  return index >= 0 && index < 23 ? TREE_CORRECTION[protocol][index] : 1;
}

/**
 * NCCL's cost model (tuning.cc, ../shared/reference/nccl-cost-model.md §3–4) scales its graph bandwidth per
 * algorithm and protocol with these factors. They rank the candidates as NCCL does (nccl-model.ts); they are NCCL's
 * numbers, not ours, and the simulator times its choice from the links instead.
 */
export const NCCL_MODEL = {
  /** Ring/LL: 8 bytes of payload per 16-byte line. */
  ringLlShare: 0.5,
  /** LL128 rings, and every tree before its protocol's own factor: NCCL's 0.92 (about 120 of 128 bytes). */
  ll128Share: 0.92,
  /** A tree's algbw is half its bus bandwidth: every byte goes up the tree and comes back down. */
  treeAlgBwShare: 0.5,
  /** Tree/LL: the tree's bus bandwidth divided by 3.8. */
  treeLlDivisor: 3.8,
  /** Tree/LL128 after the 0.92: × 7/9 on one node, × 120/128 across nodes. */
  treeLl128SingleNodeShare: 7 / 9,
  treeLl128MultiNodeShare: 120 / 128,
  /** NVLS AllReduce "pipelines two operations" (from 2.28): twice the per-channel bandwidth. */
  nvlsAllReducePipelining: 2,
  /** NVLSTree on ≤ 2 nodes: twice the network bandwidth per channel. */
  nvlsTreeTwoNodeInterShare: 2,
  /** Before 2.28, NVLSTree over more than two nodes had half the network bandwidth per channel. */
  nvlsTreeLegacyInterShare: 0.5,
  /** Before 2.28, NVLS and NVLSTree bus bandwidth became algbw by a fixed 5/6, not n / (2(n − 1)). */
  nvlsLegacyAlgBwShare: 5 / 6,
  /**
   * Across nodes a ring's intra-node step costs at least the network post overhead (NCCL_NET_OVERHEAD: 1 µs on
   * Intel x86, which the engine assumes; 2 on AMD), three times for Simple.
   */
  netOverheadUs: 1,
  netOverheadSimpleMultiplier: 3,
  /**
   * Ring/Simple AllReduce across nodes with at least 64 bytes per channel per rank: latency × 1.4 from Ampere, × 1.9 before
   * (NCCL's "plateau effect").
   */
  ringSimplePlateauMinBytes: 64,
  ringSimplePlateauFactorAmpere: 1.4,
  ringSimplePlateauFactorPreAmpere: 1.9,
  /** Up to 2.17 the plateau began at nRanks / 16 × 65536 bytes and cost × 1.9 on every GPU (tuning.cc v2.17.1-1). */
  ringSimplePlateauLegacyBytes: 65536,
  /** 2.17's NVLS converted bus to algorithm bandwidth by 0.75 (tuning.cc v2.17.1-1 `ratio = .75`). */
  nvls217AlgBwShare: 0.75,
  /**
   * CollNetDirect AllReduce (tuning.cc): "requires all GPUs to have a local NIC to work at full speed": bus
   * bandwidth ÷ (f − (f − 1)/2) with f the GPUs per head, then × 0.85 from Hopper on.
   */
  collNetDirectHopperShare: 0.85,
  /** CollNetDirect's "arity serialization": 0.4 µs per local rank beyond the first, twice (up and down). */
  collNetDirectArityUs: 0.4,
  /** Most heads (channels) of a CollNetDirect graph: NCCL_MAX_DIRECT_ARITY + 1 (device.h). */
  collNetDirectMaxHeads: 8,
  /** CollNet's channel reduction for small messages: 512 bytes per thread (tuning.cc threadThresholds). */
  collNetThresholdBytes: 512,
  /** PAT's bus bandwidth is the tree graph's × 0.75 (tuning.cc), stored without conversion to algbw. */
  patBusBwShare: 0.75,
  /** PAT latency: base + log2(nodes) × interLat / 3.5 + 2.8 µs × ranks ("still a linear part", tuning.cc). */
  patLogLatencyDivisor: 3.5,
  patLinearUsPerRank: 2.8,
} as const;

/** NVLS (NVLink SHARP) multimem efficiency, NCCL tuning.cc nvlsEfficiency: Hopper 0.85, Blackwell 0.74. */
export function nvlsEfficiency(smVersion: number): number {
  return smVersion >= 100 ? 0.74 : 0.85;
}

/** Simple's per-channel ceiling: NCCL's top per-channel search speed halved by its channel duplication. */
export const SIMPLE_PER_CHANNEL_GBPS: readonly number[] = [20, 20, 30, 45];

/**
 * Network transfers are posted and polled by one CPU proxy thread per GPU, channel after channel; each channel's
 * send/receive pair costs it about this much per network step, µs (ibv_post_send + completion polling). A ring
 * pays it on every network step; a pipelined tree once, at its first network stage. Fitted on the 2- and 4-node
 * H100 runs.
 */
export const PROXY_OP_US = 0.25;

/**
 * Smallest pipeline chunk per channel by protocol: LL and LL128 forward each line as its flag arrives (cut-through,
 * so chunks are small); Simple moves whole slices (NCCL keeps tree/NVLS chunks ≥ 128 KiB).
 */
export const MIN_PIPELINE_CHUNK_BYTES: Readonly<Record<Protocol, number>> = {
  LL: 4096,
  LL128: 16384,
  Simple: 128 * 1024,
};

/** Chunks per pipeline stage that stand in for LL/LL128's line-by-line forwarding. */
export const CUT_THROUGH_DEPTH = 8;

/** Architecture row of NCCL's tables: 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell. */
export function archIndex(smVersion: number): number {
  return smVersion >= 100 ? 3 : smVersion >= 90 ? 2 : smVersion >= 80 ? 1 : 0;
}

/** Largest chunk one channel moves per pipeline step, bytes (NCCL buffers: Simple 4 MiB / 8 steps × 4; LL128 ≈ 4.7 MB / 8 × 4; LL 512 KiB / 8 × 4). */
export const CHUNK_BYTES: Readonly<Record<Protocol, number>> = {
  LL: 256 * 1024,
  LL128: 2457600,
  Simple: 2 * 1024 * 1024,
};
/** Tree and NVLS pipeline chunk (NCCL_NVLS_CHUNKSIZE 128 KiB; tree chunks are cut to keep the pipeline deep). */
export const PIPELINE_CHUNK_BYTES = 128 * 1024;

/** Channel-reduction thresholds (NCCL comm.h): a channel needs this many bytes per thread to be worth it. */
export const CHANNEL_THRESHOLD_BYTES: Readonly<Record<Protocol, number>> = { LL: 8, LL128: 8, Simple: 64 };
export const THREADS_PER_CHANNEL = 512;

/** Reading two inputs and writing one result: bytes of GPU memory traffic per byte reduced. */
export const REDUCE_MEMORY_FACTOR = 3;

/** Above this many flows per round, spans are not produced unless a trace was asked for. */
export const MAX_TRACE_SPANS = 200_000;

/**
 * Share of NCCL's per-link NVLink figure that an NVLink 4 bridge between two PCIe cards (H100 PCIe) delivers. The
 * one public measurement (nccl-tests 194: 2× H100 PCIe, 115–116 GB/s busbw, i.e. per direction, from 1 to 4 GB)
 * is half of 12 links × 20.6 GB/s. Fitted on that run alone; GA102/Ampere bridges keep NCCL's own (already
 * derated) per-link figures. NCCL writes across the bridge (it reads over NVLink only between SM80 GPUs), and the
 * run's 24 channels are what 12 links give under NCCL ≤ 2.15's search, so neither the transfer mode nor the channel
 * count explains the half; no published per-direction figure for an NVLink 4 bridge exists in ../shared. The fit
 * equals 6 of the 12 links, or all 12 at half the lane rate; NVIDIA's driver source leaves both to the GPU's
 * firmware (docs/calibration.md, "Sixth search").
 */
export function nvlinkBridgeEfficiency(nvlinkGen: number): number {
  return nvlinkGen >= 4 ? 0.5 : 1;
}

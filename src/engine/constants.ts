// Every constant of the engine's time model, in one place, with where it comes from. Hardware numbers come from
// ../shared/reference/hardware-facts.md and NCCL's own tables (../shared/reference/nccl-cost-model.md); the few
// fitted ones say so and say what they stand for. docs/calibration.md shows the errors these give.
import type { Protocol } from './collective-types';

/** PCIe x16 one-direction bandwidth as NCCL models it (topo.cc: width × per-lane value / 80), by generation. */
export const PCIE_X16_GBPS: Readonly<Record<3 | 4 | 5 | 6, number>> = { 3: 12, 4: 24, 5: 48, 6: 96 };

/**
 * Inter-socket (UPI / Infinity Fabric) bandwidth NCCL assumes when nothing else is known (topo.h: AMD 16,
 * Intel Sapphire Rapids 22). A system file can override it.
 */
export const DEFAULT_INTER_SOCKET_GBPS = 16;

/** Host DRAM bandwidth one socket gives to staged GPU traffic (8 DDR4-3200 channels ≈ 205 GB/s peak, ~60 % usable). */
export const HOST_MEMORY_GBPS = 120;

/**
 * One-way latency of one hop, µs: wire, SerDes and switch traversal only. NCCL's per-step costs (STEP_SYNC_US)
 * already carry the software side of each hop, so these stay small; the uniform ring uses its own latency.
 */
export const NVLINK_HOP_US = 0.1;
export const NVSWITCH_HOP_US = 0.1;
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

/** Payload bytes per wire byte. LL: 8 data bytes per 16-byte line; LL128: 120 of 128; Simple: all. */
export const PROTOCOL_EFFICIENCY: Readonly<Record<Protocol, number>> = { LL: 0.5, LL128: 120 / 128, Simple: 1 };

/**
 * Per-step synchronisation cost of each protocol by link class, µs: NCCL's hardware latency table for Ring
 * (tuning.cc hwLat: NVLINK 0.6/1.9/3.4, PCI 1.0/2.5/5.7, NET 2.7/4.0/14.0), scaled by STEP_LATENCY_SCALE.
 */
export const STEP_SYNC_US: Readonly<Record<'nvlink' | 'pcie' | 'net', Readonly<Record<Protocol, number>>>> = {
  nvlink: { LL: 0.6, LL128: 1.9, Simple: 3.4 },
  pcie: { LL: 1.0, LL128: 2.5, Simple: 5.7 },
  net: { LL: 2.7, LL128: 4.0, Simple: 14.0 },
};

/**
 * NCCL's latencies leave out what nccl-tests measures on top (host-side progress, flag polling under load); its
 * own notes say the model predicts about half the measured time below 1 MiB. Fitted on the calibration sets.
 */
export const STEP_LATENCY_SCALE = 1;

/** Base cost of one collective on the device (NCCL baseLat: Ring 6.6/14/8.4 µs for LL/LL128/Simple). */
export const BASE_LATENCY_US: Readonly<Record<Protocol, number>> = { LL: 6.6, LL128: 14, Simple: 8.4 };

/** Kernel launch and nccl-tests' host loop per collective, µs (CUDA launch ≈ 4–6 µs plus stream sync). Fitted. */
export const LAUNCH_US = 5;

/** NVLS (NVLink SHARP) multimem efficiency, NCCL tuning.cc nvlsEfficiency: Hopper 0.85, Blackwell 0.74. */
export function nvlsEfficiency(smVersion: number): number {
  return smVersion >= 100 ? 0.74 : 0.85;
}
/** NVLS latency through the switch (NCCL hwLat NVLINK NVLS: 25 µs, NET NVLS 18 / NVLSTree 20.9). */
export const NVLS_SYNC_US = 25;

/**
 * Per-channel (one CTA) throughput ceiling, GB/s of payload: what one SM's threads can copy and reduce. Simple
 * uses NCCL's top per-channel search speed after its duplication (40/2 pre-Hopper, 60/2 Hopper, 90/2 Blackwell);
 * LL128 uses perChMaxRingLL128Bws (20 / 36.7 / 40).
 */
export function perChannelCapGBps(smVersion: number, protocol: Protocol): number {
  const arch = smVersion >= 100 ? 3 : smVersion >= 90 ? 2 : smVersion >= 80 ? 1 : 0;
  if (protocol === 'LL128') return [20, 20, 36.7, 40][arch];
  if (protocol === 'LL') return [39, 87.7, 141, 282][arch] / 8;
  return [20, 20, 30, 45][arch];
}

/** LL's total payload ceiling per GPU (NCCL llMaxBws, single node column): SMs poll 8-byte flags. */
export function llMaxGBps(smVersion: number, nodes: number): number {
  const arch = smVersion >= 100 ? 3 : smVersion >= 90 ? 2 : smVersion >= 80 ? 1 : 0;
  const single = [39, 87.7, 141, 282][arch];
  const multi = [[39, 20.4], [22.5, 19], [45, 35], [90, 70]][arch];
  return nodes <= 1 ? single : nodes === 2 ? multi[0] : multi[1];
}

/** Largest chunk one channel moves per pipeline step, bytes (NCCL buffers: Simple 4 MiB / 8 steps × 4; LL128 ≈ 4.7 MB / 8 × 4; LL 512 KiB / 8 × 4). */
export const CHUNK_BYTES: Readonly<Record<Protocol, number>> = { LL: 256 * 1024, LL128: 2457600, Simple: 2 * 1024 * 1024 };
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
 * Share of the NCCL per-link NVLink rate a bridge between two PCIe cards delivers. Bridged cards route NVLink
 * through an edge connector and SM-driven copies at PCIe-card clocks; see docs/calibration.md for the one public
 * measurement (2× H100 PCIe, nccl-tests 194).
 */
export const NVLINK_BRIDGE_EFFICIENCY = 1;

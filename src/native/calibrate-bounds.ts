// The physical box every value `calibrate` fits must stay inside: line rates above, a healthy fraction of them
// below, published minimum latencies. One table, every number from ../shared/reference/hardware-facts.md, so the
// bounds come from the hardware a system file names and never from the run being fitted.
import type { System, SystemOverrides } from '../engine/index';

export type FittedParam = keyof SystemOverrides;

/** One fitted value's allowed range, in the override's own units, with the part it describes and the facts behind it. */
export interface ParamBound {
  readonly min: number;
  readonly max: number;
  /** The hardware part as a user would name it: "NIC", "GPU-to-NIC PCIe path", "NVLink". */
  readonly part: string;
  /** The line rate (GB/s) the bandwidth bounds are drawn from; absent for latencies and launch. */
  readonly lineRateGBps?: number;
  /** Where the numbers come from, one short phrase. */
  readonly source: string;
}

/**
 * The lowest share of its line rate a healthy link reaches in the published measurements (hardware-facts.md):
 * NCCL on A100 NVLink gets about 230 of 300 GB/s (0.77, nccl-tests 149); H100/H200 NVLink copies 0.84–0.88;
 * PCIe host transfers 0.83–0.88 (H200, Azure ND H200 v5 and ND A100 v4); NDR NICs 46–49 of 50 GB/s; RTX 4090
 * PCIe P2P 0.81. A fitted bandwidth below 0.7 of line rate, about the model's 10 % uncertainty under the lowest of
 * those, describes a broken or misconfigured part, not a slower healthy one.
 */
export const HEALTHY_LINE_RATE_FRACTION = 0.7;

/**
 * NVLink line rate of one link, one direction, GB/s, by generation (hardware-facts §1.1): 25 for NVLink 2–4,
 * 50 for NVLink 5. GA102 bridges (SM 8.6: RTX 3090, A40, RTX A6000) run four x4 links at 14.0625 GB/s.
 */
export const NVLINK_LINE_GBPS_PER_LINK: Readonly<Record<number, number>> = { 1: 20, 2: 25, 3: 25, 4: 25, 5: 50 };
export const GA102_BRIDGE_LINE_GBPS_PER_LINK = 14.0625;

/** PCIe x16 line rate, one direction, GB/s, after 128b/130b encoding (hardware-facts §3). */
export const PCIE_X16_LINE_GBPS: Readonly<Record<3 | 4 | 5 | 6, number>> = { 3: 15.75, 4: 31.5, 5: 63, 6: 121 };

/** InfiniBand generations by 4x port rate (Gb/s), for naming the NIC a system file describes (hardware-facts §4.1). */
export const INFINIBAND_GENERATION: Readonly<Record<number, string>> = {
  100: 'EDR',
  200: 'HDR',
  400: 'NDR',
  800: 'XDR',
};

/** Published InfiniBand port latency: 0.5 µs for EDR, 0.6 µs for HDR (hardware-facts §4.1); no NIC hop is faster. */
export const MIN_NIC_LATENCY_US = 0.5;

/**
 * NVLink and PCIe publish no hop latency; the floors are the wire-and-switch-only hop times the engine itself uses
 * (src/engine/constants.ts NVLINK_HOP_US, PCIE_HOP_US), so a fit may add latency to a hop but never remove the wire.
 */
export const MIN_NVLINK_LATENCY_US = 0.1;
export const MIN_PCIE_LATENCY_US = 0.25;

/**
 * GPU-to-GPU traffic across the CPU sockets: measured 21–22 GB/s between RTX 4090s on two EPYC sockets (chlc blog),
 * NCCL assumes 22 for Sapphire Rapids and 16 for AMD. No line rate is published, so the ceiling is the GPU's own PCIe
 * line rate (the traffic leaves through it) and the floor the healthy fraction of NCCL's conservative 16.
 */
const NCCL_AMD_INTER_SOCKET_GBPS = 16;

/** The bound for one fittable parameter of this system; undefined where no hardware constrains it (a uniform ring). */
export function boundFor(system: System, name: FittedParam): ParamBound | undefined {
  const healthy = (line: number, part: string, source: string): ParamBound => ({
    min: HEALTHY_LINE_RATE_FRACTION * line,
    max: line,
    part,
    lineRateGBps: line,
    source,
  });
  const pcieGen = system.spec.pcieGen ?? system.gpu.pcieGen;
  const pcieLine = PCIE_X16_LINE_GBPS[pcieGen];
  const multiNode = system.nodes > 1;
  switch (name) {
    case 'nvlinkGBpsPerLink': {
      const line =
        system.gpu.smVersion === 86 ? GA102_BRIDGE_LINE_GBPS_PER_LINK : NVLINK_LINE_GBPS_PER_LINK[system.gpu.nvlinkGen];
      return line
        ? healthy(line, 'NVLink', `NVLink ${system.gpu.nvlinkGen} line rate per link, one direction`)
        : undefined;
    }
    case 'pcieGBps':
      return healthy(
        pcieLine,
        multiNode ? 'GPU-to-NIC PCIe path' : 'PCIe path',
        `PCIe Gen${pcieGen} x16 line rate, one direction`,
      );
    case 'nicGBps': {
      const gbps = system.spec.nic?.gbps;
      if (!gbps) return undefined;
      const generation = INFINIBAND_GENERATION[gbps];
      return healthy(gbps / 8, 'NIC', `${gbps} Gb/s${generation ? ` (${generation})` : ''} NIC line rate`);
    }
    case 'interSocketGBps':
      return {
        min: HEALTHY_LINE_RATE_FRACTION * NCCL_AMD_INTER_SOCKET_GBPS,
        max: pcieLine,
        part: 'inter-socket link',
        lineRateGBps: pcieLine,
        source: `GPU PCIe Gen${pcieGen} x16 line rate above, NCCL's AMD figure below`,
      };
    case 'nicLatencyUs':
      return {
        min: MIN_NIC_LATENCY_US,
        max: Infinity,
        part: 'NIC latency',
        source: 'InfiniBand port latency (EDR 0.5 µs)',
      };
    case 'nvlinkLatencyUs':
      return {
        min: MIN_NVLINK_LATENCY_US,
        max: Infinity,
        part: 'NVLink latency',
        source: 'NVLink wire and switch hop',
      };
    case 'pcieLatencyUs':
      return { min: MIN_PCIE_LATENCY_US, max: Infinity, part: 'PCIe latency', source: 'PCIe wire and switch hop' };
    case 'launchUs':
      return {
        min: 0,
        max: Infinity,
        part: 'launch cost',
        source: 'no published minimum; fitted only where the sizes depend on it',
      };
    default:
      // A uniform ring's link and the HBM figure describe no particular hardware here.
      return undefined;
  }
}

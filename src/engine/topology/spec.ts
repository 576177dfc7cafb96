// The system file's shape: what a user writes (YAML or JSON) to describe any machine.
// src/config parses and validates text into this; the engine resolves it into a topology.
import type { GBps, Micros } from '../units';

export type IntraNodeFabric = 'nvswitch' | 'nvlink-mesh' | 'nvlink-bridge' | 'pcie' | 'uniform-ring';

/** NCCL_P2P_LEVEL's PCIe values: the farthest GPU-to-GPU path NCCL still crosses peer to peer (LOC: none). */
export type P2pLevel = 'LOC' | 'PIX' | 'PXB' | 'PHB' | 'SYS';

/**
 * NCCL's path type from a GPU to its nearest NIC, as `nvidia-smi topo -m` prints it: PIX (one PCIe switch), PXB
 * (several switches, no CPU), PHB (through the CPU's host bridge), SYS (across sockets).
 */
export type NicPath = 'PIX' | 'PXB' | 'PHB' | 'SYS';

/** The host CPU's maker, which NCCL's default P2P level depends on (paths.cc). */
export type CpuVendor = 'intel' | 'amd' | 'arm';

export interface NicSpec {
  /** Line rate of one NIC in Gb/s (400 for NDR). */
  readonly gbps: number;
  readonly perNode: number;
  /** One-way latency added per network hop. */
  readonly latencyUs?: Micros;
  /**
   * The PCIe path from each GPU to its nearest NIC (default PIX: the NIC sits on the GPU's PCIe switch, as on DGX and
   * HGX baseboards). NCCL enables LL128 across nodes only up to PXB (ll128-rule.ts).
   */
  readonly path?: NicPath;
  /**
   * NCCL_NET_GDR_LEVEL: the farthest GPU-to-NIC path over which NCCL uses GPUDirect RDMA (default PXB). A nearer NIC
   * beyond it is reached through host memory, which NCCL's topology then counts as a PHB path.
   */
  readonly gdrLevel?: P2pLevel;
}

/**
 * The switches between the NICs: a rail-optimised leaf/spine fat tree. Each rail (NIC index) has its own leaf
 * switches; traffic between rails or between leaves climbs to the spine.
 */
export interface NetworkSpec {
  /** Nodes under one leaf switch of a rail (32 for a 64-port switch with half its ports up). */
  readonly nodesPerLeaf?: number;
  /** Leaf downlink bandwidth over uplink bandwidth: 1 is non-blocking, 2 gives the spine half the NICs' rate. */
  readonly oversubscription?: number;
  /** One-way latency of one leaf↔spine hop (switch traversal and cable), µs. */
  readonly switchLatencyUs?: Micros;
  /**
   * In-network reduction (InfiniBand SHARP) in the leaf and spine switches, used by NCCL through the CollNet plugin
   * with NCCL_COLLNET_ENABLE=1: CollNetDirect, CollNetChain and NVLS across nodes become candidates. Default false.
   */
  readonly sharp?: boolean;
}

/** Optional overrides of any bandwidth or latency the catalogue and fabric would otherwise give. */
export interface SystemOverrides {
  readonly nvlinkGBpsPerLink?: GBps;
  readonly nvlinkLinks?: number;
  readonly pcieGBps?: GBps;
  readonly interSocketGBps?: GBps;
  readonly nicGBps?: GBps;
  readonly hbmGBps?: GBps;
  readonly linkGBps?: GBps;
  readonly nvlinkLatencyUs?: Micros;
  readonly pcieLatencyUs?: Micros;
  readonly nicLatencyUs?: Micros;
  readonly linkLatencyUs?: Micros;
  readonly launchUs?: Micros;
}

export interface SystemSpec {
  readonly name?: string;
  /** Catalogue name, case-insensitive: V100-SXM, A100-SXM, H100-SXM, H200, B200, GB200, L40S, RTX4090, ... */
  readonly gpu: string;
  readonly nodes: number;
  readonly gpusPerNode: number;
  /**
   * GPUs each process drives (nccl-tests `-g N`), default 1 as torchrun and srun start one process per GPU. A
   * process launches its GPUs' kernels one after another, so the launch cost of a collective grows with it.
   */
  readonly gpusPerProcess?: number;
  readonly intraNode: IntraNodeFabric;
  /** In-switch reduction (NVLink SHARP). Defaults to what the GPU and fabric support. */
  readonly nvls?: boolean;
  /**
   * GPU peer-to-peer over PCIe: false when the driver refuses it (or NCCL_P2P_DISABLE=1), so all traffic is staged
   * through host memory. When true (the default) NCCL still stages pairs farther apart than its P2P level.
   */
  readonly p2p?: boolean;
  /** NCCL_P2P_LEVEL: overrides NCCL's default level (PXB from NCCL 2.23; see topology/p2p-level.ts). */
  readonly p2pLevel?: P2pLevel;
  /** The host CPU's maker (default intel): NCCL allows P2P through AMD CPUs on hosts of at most two GPUs. */
  readonly cpuVendor?: CpuVendor;
  readonly pcieGen?: 3 | 4 | 5 | 6;
  /** PCIe boxes: GPUs per CPU socket (the rest cross the inter-socket link). */
  readonly gpusPerSocket?: number;
  /** PCIe boxes: GPUs behind one PCIe switch. */
  readonly gpusPerPcieSwitch?: number;
  readonly nic?: NicSpec;
  readonly network?: NetworkSpec;
  /** The NCCL release that runs here, e.g. "2.26.2"; its tuner picks the algorithm. Defaults to the newest known. */
  readonly ncclVersion?: string;
  readonly overrides?: SystemOverrides;
}

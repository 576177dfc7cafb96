// The resolved topology: vertices and directed links with ids, plus the routes the algorithms send data along.
import type { GpuSpec } from '../hardware/gpus';
import type { GBps, Micros } from '../units';
import type { SystemSpec } from './spec';
import type { NcclTuner } from '../nccl-versions';

export type VertexKind = 'gpu' | 'switch' | 'nic' | 'cpu' | 'pcie-switch' | 'host';
export type LinkKind = 'nvlink' | 'nvswitch' | 'pcie' | 'inter-socket' | 'network' | 'host';

export interface Vertex {
  readonly id: string;
  readonly kind: VertexKind;
  readonly label: string;
  readonly node: number;
}

/** One direction of a physical link; full-duplex links are two of these. */
export interface Link {
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly GBps: GBps;
  readonly latencyUs: Micros;
  readonly kind: LinkKind;
}

export interface Topology {
  readonly vertices: readonly Vertex[];
  readonly links: readonly Link[];
}

/** A route between nodes split where it leaves the sender's node and where it enters the receiver's. */
export interface NetRouteParts {
  readonly send: readonly number[];
  readonly shared: readonly number[];
  readonly receive: readonly number[];
}

/** Which NCCL latency class a path belongs to. */
export type LinkClass = 'nvlink' | 'pcie' | 'net';

/** What the algorithms need beyond the public picture: routes as link indices, and capabilities. */
export interface Fabric {
  /**
   * Links (indices into topology.links) from one rank's GPU to another's. Across nodes each end uses the NIC in
   * position `nicSlot` (default 0, wrapping) among those on its GPU's PCIe switch (see gpuNics); the route climbs to
   * the spine when the two NICs are on different rails or under different leaves.
   */
  route(fromRank: number, toRank: number, nicSlot?: number): readonly number[];
  /**
   * A route between nodes split into the sender's links, the shared leaf and spine links and the receiver's links,
   * with the most nodes one shared link serves: what folding every node onto one needs (absent on one node).
   */
  readonly network?: {
    routeParts(fromRank: number, toRank: number, nicSlot: number): NetRouteParts;
    readonly nodesPerLeaf: number;
  };
  /** NIC indices on each local GPU's PCIe switch (one or more per GPU, or one shared by several GPUs). */
  readonly gpuNics: readonly (readonly number[])[];
  /** The local GPU a NIC's traffic enters and leaves by: the first GPU on the NIC's PCIe switch. */
  readonly nicGpu: readonly number[];
  /** The link from a rank's GPU into the NVSwitch and back, when the node has one. */
  switchUplink(rank: number): number;
  switchDownlink(rank: number): number;
  /** Latency class of intra-node paths (NVLink or PCIe) and whether LL128 may run on them. */
  readonly intraClass: LinkClass;
  readonly nvlsCapable: boolean;
  readonly hasSwitch: boolean;
  /** NICs per node (0 on a single node), and whether traffic between GPUs is staged through host memory. */
  readonly nicsPerNode: number;
  readonly hostStaged: boolean;
  /** No launch, protocol or memory overheads: the textbook uniform ring. */
  readonly idealised: boolean;
  /** Ring orders for single-node rings, one per channel class (meshes pick NVLink-only cycles). */
  readonly ringOrders: readonly (readonly number[])[];
}

export interface System {
  readonly spec: SystemSpec;
  readonly gpu: GpuSpec;
  readonly ranks: number;
  readonly nodes: number;
  readonly gpusPerNode: number;
  /** E.g. "8× H100 NVSwitch" or "2×8 H100 NVSwitch + 8×400G IB". */
  readonly label: string;
  readonly topology: Topology;
  readonly fabric: Fabric;
  /** GPU memory bandwidth used by reductions, GB/s. */
  readonly hbmGBps: GBps;
  /** Host time to launch one collective (all GPUs one process drives); it overlaps the device's work. */
  readonly launchUs: Micros;
  /**
   * Host time the process adds per channel beyond the first, per collective: NCCL up to 2.12 writes each further
   * channel's work element into a FIFO in host memory that the GPU reads and clears (hostWorkFifo in
   * nccl-versions.ts). Absent or 0 for later releases.
   */
  readonly hostWorkSlotUs?: Micros;
  /** The NCCL release whose cost model picks algorithms and whose per-step latencies the simulator charges. */
  readonly tuner: NcclTuner;
}

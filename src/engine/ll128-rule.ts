// When NCCL enables LL128 without being told to: src/graph/tuning.cc ncclTopoTuneModel, read at every tag from
// v2.12.12-1 to v2.30.7-1. LL128 relies on 128-byte stores arriving whole, which NVIDIA has tested on NVLink and on
// GPUDirect RDMA through PCIe switches only, so NCCL turns it on by default per graph (ring, tree) when:
//   (a) the graph's intra-node path type is NVLink (≤ PATH_NVL up to 2.18.1, ≤ PATH_NVB from 2.18.3),
//   (b) its GPU-to-NIC path type is ≤ PATH_PXB, or ≤ PATH_PXN on SM ≥ 90 from 2.17 (2.27+: with NCCL_LL128_C2C=1,
//       the default),
//   (c) every GPU has the same compute capability (from 2.30 also any mix of SM ≥ 90), and
//   (d) the GPU generation is one the release lists: SM70/80 up to 2.14, SM90 from 2.15, SM100/120 from 2.25, any
//       SM ≥ 70 from 2.27 (so SM86 and SM89 are off up to 2.26),
// and not for a 2-rank ring AllReduce on SM90 built with CUDA 11.8 (the engine does not know the CUDA version).
// NCCL_PROTO overrides all of it: a protocol it names (or does not negate) is enabled whatever the paths.
import type { System } from './topology/model';
import { ncclNetPathType } from './topology/nic-path';
import { ncclMinor } from './topology/p2p-level';

/** NCCL's path types in its order (graph.h): only the ones the rule compares. */
export type NcclPathType = 'LOC' | 'NVL' | 'NVB' | 'PIX' | 'PXB' | 'PXN' | 'PHB' | 'SYS';
const PATH_RANK: Readonly<Record<NcclPathType, number>> = {
  LOC: 0,
  NVL: 1,
  NVB: 2,
  PIX: 4,
  PXB: 5,
  PXN: 7,
  PHB: 8,
  SYS: 9,
};

export interface Ll128Inputs {
  /** The release's minor number (2.26.2 → 26). */
  readonly ncclMinor: number;
  readonly smVersion: number;
  /** The graph's intra-node path type: LOC with one GPU per node, NVL on NVLink, a PCIe type when it crosses PCIe. */
  readonly intraPath: NcclPathType;
  /** The graph's GPU-to-NIC path type; undefined on one node, where NCCL removes the NICs from its topology. */
  readonly interPath?: NcclPathType;
}

function generationListed(minor: number, sm: number): boolean {
  if (minor >= 27) return sm >= 70;
  if (minor >= 25) return [70, 80, 90, 100, 120].includes(sm);
  if (minor >= 15) return [70, 80, 90].includes(sm);
  return sm === 70 || sm === 80;
}

/** Why NCCL leaves LL128 off by default for these inputs, or undefined when it enables it. */
export function ll128DefaultOff(inputs: Ll128Inputs): string | undefined {
  const { ncclMinor: minor, smVersion: sm, intraPath, interPath } = inputs;
  const release = `NCCL 2.${minor}`;
  if (PATH_RANK[intraPath] > PATH_RANK.NVB)
    return 'LL128 needs NVLink between GPUs (128-byte stores are not atomic over PCIe)';
  if (!generationListed(minor, sm))
    return `${release} enables LL128 by default only on ${listedText(minor)} GPUs (SM${sm} here)`;
  if (interPath !== undefined) {
    const pxnAllowed = sm >= 90 && minor >= 17;
    const limit = pxnAllowed ? 'PXN' : 'PXB';
    if (PATH_RANK[interPath] > PATH_RANK[limit]) {
      const near = pxnAllowed
        ? 'through PCIe switches or an NVLink peer beside the NIC (PXN)'
        : 'through PCIe switches (PXB)';
      return `${release} enables LL128 across nodes only when each GPU reaches its NIC ${near}; this system's GPU-to-NIC path is ${interPath}`;
    }
  }
  return undefined;
}

function listedText(minor: number): string {
  if (minor >= 27) return 'Volta or newer';
  if (minor >= 25) return 'Volta, Ampere SM80, Hopper and Blackwell';
  if (minor >= 15) return 'Volta, Ampere SM80 and Hopper';
  return 'Volta and Ampere SM80';
}

/** The intra-node path type of the ring and tree graphs on this system's nodes. */
function intraPathType(system: System): NcclPathType {
  if (system.gpusPerNode === 1) return 'LOC';
  if (system.fabric.intraClass !== 'nvlink') return 'PIX';
  // Bridged pairs of PCIe cards: a ring over more than one pair crosses PCIe between the pairs.
  if (system.spec.intraNode === 'nvlink-bridge' && system.gpusPerNode > 2) return 'PIX';
  return 'NVL';
}

/**
 * Why NCCL leaves LL128 off by default on this system, or undefined when it enables it. NCCL asks per graph; the
 * ring's and the tree's cross the same paths here (NVLS, CollNet and PAT run Simple only).
 */
export function ll128DefaultOffOn(system: System): string | undefined {
  if (system.fabric.idealised) return undefined;
  return ll128DefaultOff({
    ncclMinor: ncclMinor(system.tuner.version),
    smVersion: system.gpu.smVersion,
    intraPath: intraPathType(system),
    interPath: system.nodes > 1 && system.fabric.nicsPerNode > 0 ? ncclNetPathType(system.spec) : undefined,
  });
}

// Where NCCL lets two GPUs of a node talk peer to peer over PCIe, and where it stages their traffic through host
// memory (its SHM transport) instead: NCCL's rule, ncclTopoCheckP2p in src/graph/paths.cc.
import type { CpuVendor, P2pLevel, SystemSpec } from './spec';

/**
 * NCCL's path types between two GPUs, in its order (src/graph/topo.h): the farther apart, the larger. Only the
 * PCIe ones this topology builds are listed: PIX behind one PCIe switch, PXB across switches without a CPU, PHB
 * through one CPU's host bridge, SYS across the inter-socket link. LOC is the GPU itself; as a level it disables P2P.
 */
export const PATH_TYPE_RANK: Readonly<Record<P2pLevel, number>> = { LOC: 0, PIX: 4, PXB: 5, PHB: 8, SYS: 9 };

/** The first release whose default P2P level is PATH_PXB whatever the CPU (paths.cc, tag v2.23.4-1). */
const PXB_DEFAULT_MINOR = 23;

export function ncclMinor(version: string | undefined): number {
  // No release named means the newest tables (nccl-versions.ts), which have the PXB default.
  const m = /^2\.(\d+)/.exec((version ?? '').trim());
  return m ? Number(m[1]) : Number.POSITIVE_INFINITY;
}

/**
 * The farthest path over which NCCL uses P2P on this system. A system file's `p2pLevel` (NCCL_P2P_LEVEL) is
 * authoritative. Otherwise NCCL's default for the release: from 2.23 (v2.23.4-1 to v2.30.7-1) PATH_PXB, "don't use
 * P2P across CPU Host Bridges and further apart", except PATH_SYS on AMD x86 hosts with at most two GPUs; up to
 * 2.22 (v2.12.12-1 to v2.22.3-1) PATH_SYS, lowered to PATH_PXB on Intel and ARM CPUs. `cpuVendor` defaults to Intel.
 */
export function ncclP2pLevel(
  spec: Pick<SystemSpec, 'p2pLevel' | 'cpuVendor' | 'ncclVersion' | 'gpusPerNode'>,
): P2pLevel {
  if (spec.p2pLevel !== undefined) return spec.p2pLevel;
  const vendor: CpuVendor = spec.cpuVendor ?? 'intel';
  if (ncclMinor(spec.ncclVersion) >= PXB_DEFAULT_MINOR)
    return vendor === 'amd' && spec.gpusPerNode <= 2 ? 'SYS' : 'PXB';
  return vendor === 'amd' ? 'SYS' : 'PXB';
}

/**
 * Whether NCCL stages traffic between two GPUs through host memory: always when P2P is off (`p2p: false`: the
 * driver refuses it or NCCL_P2P_DISABLE=1), else when the GPUs' PCIe path is farther than NCCL's P2P level.
 */
export function stagedThroughHost(spec: SystemSpec, level: P2pLevel, pathType: P2pLevel): boolean {
  if (spec.p2p === false) return true;
  return PATH_TYPE_RANK[pathType] > PATH_TYPE_RANK[level];
}

// The path type NCCL's topology gives the way from a GPU to its NIC (src/graph/paths.cc ncclTopoComputePaths, read
// at tags v2.18.5-1, v2.26.2-1 and v2.30.7-1), which its LL128 rule reads (ll128-rule.ts).
import { EngineError } from '../errors';
import { PATH_TYPE_RANK } from './p2p-level';
import type { NicPath, P2pLevel, SystemSpec } from './spec';

const NIC_PATHS: readonly NicPath[] = ['PIX', 'PXB', 'PHB', 'SYS'];
const LEVELS: readonly P2pLevel[] = ['LOC', 'PIX', 'PXB', 'PHB', 'SYS'];

/** NCCL_NET_GDR_LEVEL's default: GPUDirect RDMA through PCIe switches, not through a CPU (paths.cc netGdrLevel). */
const DEFAULT_GDR_LEVEL: P2pLevel = 'PXB';

/**
 * The GPU-to-NIC path type of NCCL's graphs on this system. It starts from the PCIe path the system file describes
 * (`nic.path`, default PIX). When that path is nearer than PHB but farther than NCCL_NET_GDR_LEVEL (`nic.gdrLevel`,
 * default PXB), NCCL cannot use GPUDirect RDMA and routes the NIC's traffic through the GPU's CPU (addInterStep),
 * which makes the path PHB. PXN (a GPU reaching a NIC through an NVLink peer that sits next to it) needs some GPUs
 * nearer to a NIC than others, which a system file's single path does not describe.
 */
export function ncclNetPathType(spec: Pick<SystemSpec, 'nic'>): NicPath {
  const path = spec.nic?.path ?? 'PIX';
  if (!NIC_PATHS.includes(path)) throw new EngineError(`nic.path must be one of ${NIC_PATHS.join(', ')}, got ${path}`);
  const gdrLevel = spec.nic?.gdrLevel ?? DEFAULT_GDR_LEVEL;
  if (!LEVELS.includes(gdrLevel))
    throw new EngineError(`nic.gdrLevel must be one of ${LEVELS.join(', ')}, got ${gdrLevel}`);
  const rank = PATH_TYPE_RANK[path];
  return rank < PATH_TYPE_RANK.PHB && rank > PATH_TYPE_RANK[gdrLevel] ? 'PHB' : path;
}

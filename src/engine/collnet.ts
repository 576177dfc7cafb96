// CollNet: NCCL's algorithms for in-network reduction (InfiniBand SHARP through the CollNet plugin). Only a fabric
// whose system file says `network.sharp: true` has it, and only across nodes. NCCL searches two graphs for it
// (init.cc): CollNetChain uses the tree pattern with the ring's channel count, so the tree's graph stands for it;
// CollNetDirect puts one head per channel (at most NCCL_MAX_DIRECT_ARITY + 1 = 8, and at most one per GPU), each
// head pushing its channel's share through one NIC.
import { NCCL_MODEL as M } from './constants';
import type { System } from './topology/model';
import { searchGraph } from './channels';
import { interSpeeds, type NetGraph } from './net-search';

export { hasSharp } from './channels';

/** CollNetChain's graph: the tree pattern with the ring's channels, i.e. the tree's graph. */
export function collNetChainGraph(system: System): NetGraph {
  return searchGraph(system).tree;
}

/**
 * CollNetDirect's graph: one head per channel, as many as the node's GPUs allow up to 8; the network capacity the
 * ring search found (its channels × speed) is shared by the heads, each at the fastest of NCCL's inter-node speeds
 * that fits its share. Inside the node a head exchanges with every other GPU through the NVSwitch, which carries it.
 */
export function collNetDirectGraph(system: System): NetGraph {
  const ring = searchGraph(system);
  const heads = Math.max(1, Math.min(M.collNetDirectMaxHeads, system.gpusPerNode));
  const share = (ring.channels * ring.bwInter) / heads;
  const speeds = interSpeeds(system.gpu.smVersion, system.tuner.search);
  const speed = speeds.find((s) => s <= share + 1e-9) ?? speeds[speeds.length - 1];
  return { channels: heads, bwIntra: speed, bwInter: speed };
}

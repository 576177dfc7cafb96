// Which (algorithm, protocol) pairs NCCL would consider on a system, in NCCL's enumeration order, so that `auto`
// takes the same candidates NCCL does and breaks ties the same way.
import type { Algorithm, CollectiveKind, Dtype, Protocol } from './collective-types';
import type { System } from './topology/model';
import { hasSharp } from './channels';
import { NCCL_MODEL } from './constants';
import { ll128DefaultOffOn } from './ll128-rule';

/** How NCCL was told to pick protocols. */
export interface ProtocolOptions {
  /**
   * NCCL_PROTO is set: NCCL then enables exactly the protocols it names (or does not negate), LL128 included where
   * its default rule would leave LL128 off (tuning.cc skips the rule for a protocol the variable enables).
   */
  readonly ncclProtoSet?: boolean;
}

/** NCCL's order: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT × LL, LL128, Simple. Hierarchical and direct are ours. */
const NCCL_ORDER: readonly Algorithm[] = ['tree', 'ring', 'collnetdirect', 'collnetchain', 'nvls', 'nvlstree', 'pat'];

/** CollNet's conditions (tuning.cc, connect.cc): SHARP across nodes, AllReduce, at most 8 GPUs per node. */
function collNetUnavailable(system: System, kind: CollectiveKind): string | undefined {
  if (!hasSharp(system)) return 'CollNet needs in-network reduction (network.sharp) across several nodes with NICs';
  if (kind !== 'allreduce') return 'CollNet runs AllReduce only here (the SHARP plugin reduces, it does not gather)';
  if (system.gpusPerNode > NCCL_MODEL.collNetDirectMaxHeads) return 'CollNet takes at most 8 GPUs per node';
  return undefined;
}
const PROTOCOL_ORDER: readonly Protocol[] = ['LL', 'LL128', 'Simple'];

/** Why an algorithm cannot run here, or undefined when it can. */
export function algorithmUnavailable(system: System, algorithm: Algorithm, kind: CollectiveKind): string | undefined {
  switch (algorithm) {
    case 'ring':
      return undefined;
    case 'tree':
      return kind === 'allreduce' ? undefined : 'tree runs AllReduce only';
    case 'collnetdirect':
      if (!system.fabric.hasSwitch) return 'CollNetDirect needs an NVSwitch inside the node';
      return collNetUnavailable(system, kind);
    case 'collnetchain':
      return collNetUnavailable(system, kind);
    case 'nvls':
      if (!system.fabric.nvlsCapable)
        return 'NVLS needs an NVSwitch with in-switch reduction and a Hopper or newer GPU';
      if (!system.tuner.nvls) return `NVLS arrived in NCCL 2.17 (this system names ${system.tuner.version})`;
      // Across nodes NVLS reduces in the NVSwitch, then in the network's switches (SHARP): it needs CollNet.
      if (system.nodes > 1 && !hasSharp(system))
        return 'NVLS across nodes needs in-network reduction (network.sharp); use nvlstree';
      return system.nodes > 1 && kind !== 'allreduce' ? 'NVLS across nodes runs AllReduce only' : undefined;
    case 'nvlstree':
      if (!system.fabric.nvlsCapable)
        return 'NVLSTree needs an NVSwitch with in-switch reduction and a Hopper or newer GPU';
      if (!system.tuner.nvlsTree) return `NVLSTree arrived in NCCL 2.18 (this system names ${system.tuner.version})`;
      if (system.nodes < 2) return 'NVLSTree runs across nodes only';
      return kind === 'allreduce' ? undefined : 'NVLSTree runs AllReduce only';
    case 'pat':
      // tuning.cc ncclPatEnable: from 2.23, SM60 or newer, one GPU per node, the host driving the network.
      if (kind === 'allreduce') return 'PAT runs reduce-scatter and all-gather only';
      if (!system.tuner.pat) return `PAT arrived in NCCL 2.23 (this system names ${system.tuner.version})`;
      if (system.gpu.smVersion < 60) return 'PAT needs SM60 or newer (CUDA atomics)';
      return system.ranks === system.nodes ? undefined : 'PAT runs with one GPU per node only';
    case 'hierarchical':
      return system.nodes > 1 ? undefined : 'hierarchical needs more than one node';
    case 'direct':
      return system.ranks <= 64 ? undefined : 'one-shot (direct) needs 64 GPUs or fewer';
  }
}

/** Why a protocol cannot run with an algorithm here, or undefined when it can. */
export function protocolUnavailable(
  system: System,
  algorithm: Algorithm,
  protocol: Protocol,
  options: ProtocolOptions = {},
): string | undefined {
  if ((algorithm === 'nvls' || algorithm === 'nvlstree') && protocol !== 'Simple')
    return 'NVLS runs the Simple protocol only';
  if (algorithm === 'pat' && protocol !== 'Simple') return 'PAT runs the Simple protocol only';
  if ((algorithm === 'collnetdirect' || algorithm === 'collnetchain') && protocol !== 'Simple')
    return 'CollNet runs the Simple protocol only';
  if (protocol === 'LL128' && !options.ncclProtoSet) {
    const off = ll128DefaultOffOn(system);
    if (off) return `${off} (NCCL runs it there only when NCCL_PROTO names it)`;
  }
  return undefined;
}

/** The pairs `auto` compares, in NCCL's order. */
export function autoCandidates(
  system: System,
  kind: CollectiveKind,
  dtype: Dtype,
  options: ProtocolOptions = {},
): { algorithm: Algorithm; protocol: Protocol }[] {
  const out: { algorithm: Algorithm; protocol: Protocol }[] = [];
  for (const algorithm of NCCL_ORDER) {
    if (algorithmUnavailable(system, algorithm, kind)) continue;
    // NCCL makes FP8 rings over more than 8 ranks 1024× dearer, so it never picks them when anything else runs.
    if (algorithm === 'ring' && dtype.startsWith('fp8') && system.ranks > 8 && kind === 'allreduce') continue;
    for (const protocol of PROTOCOL_ORDER)
      if (!protocolUnavailable(system, algorithm, protocol, options)) out.push({ algorithm, protocol });
  }
  if (out.length === 0)
    for (const protocol of PROTOCOL_ORDER)
      if (!protocolUnavailable(system, 'ring', protocol, options)) out.push({ algorithm: 'ring', protocol });
  return out;
}

export function protocolsFor(system: System, algorithm: Algorithm, options: ProtocolOptions = {}): Protocol[] {
  return PROTOCOL_ORDER.filter((p) => !protocolUnavailable(system, algorithm, p, options));
}

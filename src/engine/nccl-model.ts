// NCCL's own cost model (src/graph/tuning.cc, as described in ../shared/reference/nccl-cost-model.md), with the
// constants of the release the system names (nccl-versions.ts; 2.30 when it names none).
// NCCL uses it to choose an algorithm and protocol, and so does `auto`; the simulator then times the choice. Its
// bandwidth side (per-channel ceilings measured by NVIDIA) also bounds what the simulator lets one GPU's CTAs push.
import * as K from './constants';
import { NCCL_MODEL as M } from './constants';
import type { Algorithm, CollectiveKind, Protocol } from './collective-types';
import { searchGraph } from './channels';
import { collNetChainGraph, collNetDirectGraph } from './collnet';
import { baseLatencyUs, hwLatencyUs, type NcclTuner, type TunedAlgorithm } from './nccl-versions';
import type { System } from './topology/model';

/** LL128's per-channel ceiling: before 2.18 one figure per table row for rings and trees (ll128MaxBwPerCh). */
function ll128PerChannel(
  legacy: NcclTuner['legacy'],
  row: number,
  arch: number,
  col: number,
  algorithm: 'ring' | 'tree',
): number {
  if (legacy) return legacy.ll128PerChannelGBps[row];
  return (algorithm === 'ring' ? K.RING_LL128_PER_CHANNEL_GBPS : K.TREE_LL128_PER_CHANNEL_GBPS)[arch][col];
}

function isNccl(algorithm: Algorithm): algorithm is TunedAlgorithm {
  return algorithm !== 'hierarchical' && algorithm !== 'direct';
}

function isCollNet(algorithm: Algorithm): boolean {
  return algorithm === 'collnetdirect' || algorithm === 'collnetchain';
}

/**
 * CollNet's bus bandwidth (Simple only): its graph's channels × intra-node speed at any node count, since the
 * switches reduce; CollNetDirect loses speed when several GPUs share a head, and 15 % from Hopper on.
 */
function collNetBusBwGBps(system: System, algorithm: Algorithm, protocol: Protocol): number {
  if (protocol !== 'Simple') return 0;
  const graph = algorithm === 'collnetdirect' ? collNetDirectGraph(system) : collNetChainGraph(system);
  let busBw = graph.channels * graph.bwIntra;
  if (algorithm === 'collnetdirect') {
    const gpusPerHead = system.gpusPerNode / graph.channels;
    busBw /= gpusPerHead - (gpusPerHead - 1) / 2;
    if (system.gpu.smVersion >= 90) busBw *= M.collNetDirectHopperShare;
  }
  return busBw;
}

/**
 * NCCL's modelled bus bandwidth for an (algorithm, protocol), GB/s, before its conversion to algbw; 0 if none. The
 * tuner defaults to the system's release; the simulator's throughput ceilings pass the newest, whose NVLS formula
 * (multimem efficiency, two pipelined operations) describes the hardware better than older releases' did.
 */
export function ncclBusBwGBps(
  system: System,
  kind: CollectiveKind,
  algorithm: Algorithm,
  protocol: Protocol,
  tuner: NcclTuner = system.tuner,
): number {
  if (isCollNet(algorithm)) return kind === 'allreduce' ? collNetBusBwGBps(system, algorithm, protocol) : 0;
  const { nodes } = system;
  const ppn = system.gpusPerNode;
  const arch = K.archIndex(system.gpu.smVersion);
  const col = nodes <= 2 ? nodes - 1 : 2;
  // The search of the release whose model this is: the simulator's ceilings (the newest tuner) take the newest's.
  const search = searchGraph(system, tuner.search);
  const legacy = tuner.legacy;
  const row = legacy ? legacy.tableArch(system.gpu.smVersion) : arch;
  // Trees (and PAT, which NCCL runs on the tree's graph) have their own graph (the ring's channel count, possibly a
  // faster intra-node speed across nodes).
  const graph = algorithm === 'tree' || algorithm === 'pat' ? search.tree : search;
  const nCh = graph.channels;
  let busBw = nCh * (nodes <= 2 ? graph.bwIntra : graph.bwInter);
  if (legacy) busBw = Math.min(busBw, legacy.busBwCapGBps[row]);
  const llRow = row === 2 && tuner.hopperLlAsAmpere ? 1 : row;
  const llMax = nodes === 1 ? K.LL_MAX_GBPS[llRow][0] : K.LL_MAX_GBPS[arch > 1 ? 0 : arch][col];
  if (algorithm === 'ring' || algorithm === 'hierarchical' || algorithm === 'direct') {
    if (protocol === 'LL') busBw = Math.min(llMax, M.ringLlShare * busBw);
    else if (protocol === 'LL128')
      busBw = Math.min(M.ll128Share * busBw, nCh * ll128PerChannel(legacy, row, arch, col, 'ring'));
    return busBw;
  }
  // PAT runs on the tree's graph (init.cc) and keeps three quarters of its bandwidth.
  if (algorithm === 'pat') return protocol === 'Simple' ? busBw * M.patBusBwShare : 0;
  if (algorithm === 'tree') {
    const treeRows = legacy ? legacy.treePerChannelGBps : K.TREE_PER_CHANNEL_GBPS;
    busBw = Math.min(M.ll128Share * busBw, nCh * treeRows[row][col]);
    if (protocol === 'LL') return Math.min(busBw / M.treeLlDivisor, llMax);
    if (protocol === 'LL128') {
      const share = nodes === 1 ? M.treeLl128SingleNodeShare : M.treeLl128MultiNodeShare;
      return Math.min(busBw * share, nCh * ll128PerChannel(legacy, row, arch, col, 'tree'));
    }
    return busBw;
  }
  const nvls = search.nvls;
  if (nvls.channels < 2 || protocol !== 'Simple') return 0;
  // 2.17's NVLS took the ring graph's channels and speed ("we only need the NVSwitch speed for NVLS").
  if (legacy) return busBw;
  if (!tuner.nvlsPipelined) {
    const inter = nodes > 2 && algorithm === 'nvlstree' ? nvls.bwInter * M.nvlsTreeLegacyInterShare : nvls.bwInter;
    return nvls.channels * (nodes > 1 ? Math.min(nvls.bwIntra, inter) : nvls.bwIntra);
  }
  let perChannel = nvls.bwIntra * K.nvlsEfficiency(system.gpu.smVersion) * ((nvls.channels - 1) / nvls.channels);
  perChannel *= kind === 'allreduce' ? M.nvlsAllReducePipelining : (ppn - 1) / ppn;
  if (nodes > 1) {
    const interShare = algorithm === 'nvlstree' && nodes <= 2 ? M.nvlsTreeTwoNodeInterShare : 1;
    perChannel = Math.min(perChannel, nvls.bwInter * interShare);
    if (algorithm === 'nvlstree') perChannel = Math.min(perChannel, K.NVLS_TREE_PER_CHANNEL_GBPS[arch][col]);
  }
  return nvls.channels * perChannel;
}

/** NCCL's algbw from its bus bandwidth: Ring/NVLS × n/nSteps, Tree × 1/2. */
export function ncclAlgBwGBps(
  system: System,
  kind: CollectiveKind,
  algorithm: Algorithm,
  protocol: Protocol,
  tuner: NcclTuner = system.tuner,
): number {
  const busBw = ncclBusBwGBps(system, kind, algorithm, protocol, tuner);
  const n = system.ranks;
  const nSteps = kind === 'allreduce' ? 2 * (n - 1) : n - 1;
  // tuning.cc converts only rings (and every algorithm's AllReduce) from bus to algorithm bandwidth: PAT, NVLS and
  // CollNet reduce-scatter and all-gather keep their bus bandwidth (NVLS's already carries (ppn − 1)/ppn).
  if (kind !== 'allreduce' && algorithm !== 'ring') return busBw;
  if (algorithm === 'tree' || isCollNet(algorithm)) return busBw * M.treeAlgBwShare;
  if (algorithm === 'nvls' && tuner.legacy) return busBw * M.nvls217AlgBwShare;
  if ((algorithm === 'nvls' || algorithm === 'nvlstree') && !tuner.nvlsPipelined) return busBw * M.nvlsLegacyAlgBwShare;
  return (busBw * n) / Math.max(1, nSteps);
}

/**
 * NCCL's NVLS bus bandwidth as buffer bytes per second, converted like a ring's (n / nSteps) whatever the collective:
 * the multimem rate the simulator's NVLS engine ceiling stands for. NCCL's selection (ncclAlgBwGBps) keeps NVLS
 * reduce-scatter and all-gather unconverted; the ceiling describes the hardware and keeps the conversion.
 */
export function nvlsBufferRateGBps(
  system: System,
  kind: CollectiveKind,
  algorithm: Algorithm,
  tuner: NcclTuner,
): number {
  if (kind === 'allreduce') return ncclAlgBwGBps(system, kind, algorithm, 'Simple', tuner);
  const n = system.ranks;
  return (ncclBusBwGBps(system, kind, algorithm, 'Simple', tuner) * n) / Math.max(1, n - 1);
}

/** NCCL's predicted time for one (algorithm, protocol), µs, or Infinity when its model gives no bandwidth. */
export function ncclPredictedUs(
  system: System,
  kind: CollectiveKind,
  bytes: number,
  algorithm: Algorithm,
  protocol: Protocol,
): number {
  if (!isNccl(algorithm)) return Infinity;
  const { nodes, ranks } = system;
  const ppn = system.gpusPerNode;
  let algBw = ncclAlgBwGBps(system, kind, algorithm, protocol);
  if (!(algBw > 0)) return Infinity;
  const nSteps = kind === 'allreduce' ? 2 * (ranks - 1) : ranks - 1;
  const tuner = system.tuner;
  let intraLat = hwLatencyUs(tuner, system.fabric.intraClass === 'pcie' ? 'pcie' : 'nvlink', algorithm, protocol);
  if (tuner.legacy && nodes > 1 && protocol === 'LL') intraLat *= tuner.legacy.llMultiNodeIntraFactor;
  const interLat = hwLatencyUs(tuner, 'net', ppn === 1 ? 'tree' : algorithm, protocol);
  const base = baseLatencyUs(tuner, algorithm, protocol);
  let latency: number;
  if (algorithm === 'ring') {
    const netOverheadUs = M.netOverheadUs * (protocol === 'Simple' ? M.netOverheadSimpleMultiplier : 1);
    // The network post overhead arrived in 2.18.
    const ringIntra = nodes > 1 && !tuner.legacy ? Math.max(intraLat, netOverheadUs) : intraLat;
    // A reduce-scatter or all-gather ring crosses the network N − 1 times, an AllReduce ring twice that.
    const interSteps = nodes > 1 ? (kind === 'allreduce' ? 2 : 1) * (nodes - 1) : 0;
    latency = base + (nSteps - interSteps) * ringIntra + interSteps * interLat;
    const channels = searchGraph(system).channels;
    // Before 2.18 the plateau began at nRanks / 16 × 64 KiB, and cost × 1.9 on every GPU.
    const plateau = tuner.legacy
      ? bytes >= (ranks / 16) * M.ringSimplePlateauLegacyBytes
      : bytes / channels / ranks >= M.ringSimplePlateauMinBytes;
    if (kind === 'allreduce' && protocol === 'Simple' && nodes > 1 && plateau)
      latency *=
        system.gpu.smVersion >= 80 && !tuner.legacy
          ? M.ringSimplePlateauFactorAmpere
          : M.ringSimplePlateauFactorPreAmpere;
  } else if (algorithm === 'tree') {
    latency = base + 2 * ((ppn - 1) * intraLat + Math.log2(nodes) * interLat);
    algBw *= K.treeCorrection(protocol, bytes);
  } else if (algorithm === 'collnetdirect') {
    const arity = 2 * (Math.min(1, ppn - 1) * intraLat + (ppn - 1) * M.collNetDirectArityUs);
    latency = base + arity + interLat;
  } else if (algorithm === 'collnetchain') {
    latency = base + 2 * (ppn - 1) * intraLat + interLat;
  } else if (algorithm === 'pat') {
    // "Log latency" plus "still a linear part" (tuning.cc); log2i is an integer log.
    const logNodes = Math.floor(Math.log2(Math.max(1, nodes)));
    latency = base + (logNodes * interLat) / M.patLogLatencyDivisor + M.patLinearUsPerRank * ranks;
  } else if (algorithm === 'nvls') {
    // 2.17's NVLS row charged its 40 µs base latency; the engine's later tables leave NVLS's base out.
    latency = (tuner.legacy ? base : 0) + intraLat + (nodes > 1 ? interLat : 0);
  } else {
    latency = base + intraLat + 2 * Math.log2(nodes) * interLat;
  }
  // FP8 on rings over more than 8 ranks is made 1024× dearer so NCCL avoids it; select.ts drops those candidates.
  return latency + bytes / (1000 * algBw);
}

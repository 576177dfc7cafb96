// How many channels (CTAs) NCCL runs: its topology search result, duplicated as connect.cc does, then reduced
// for small messages as enqueue.cc does (topoGetAlgoInfo).
import * as K from './constants';
import type { Algorithm, Protocol } from './collective-types';
import type { System } from './topology/model';
import { ncclNvlinkGBps, pcieGBps } from './topology/node-fabric';
import { searchNetGraph, type NetGraph, type NetSearchInput } from './net-search';
import type { NcclSearchRelease } from './nccl-search-releases';

const SPEEDS_PRE_HOPPER = [40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3];
const SPEEDS_HOPPER = [60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3];
const SPEEDS_BLACKWELL = [90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18];
/** Most NVLS heads (channels) NCCL's search builds (device.h NCCL_MAX_NVLS_ARITY). */
const NCCL_MAX_NVLS_ARITY = 32;

/**
 * A GPU's NVLink bandwidth as the release's search counts it: its links at the release's per-link figure (topo.h;
 * 22 GB/s on Volta to Hopper up to 2.17), or the catalogue's where the release has the newest figure or the system
 * file sets the per-link rate.
 */
function releaseNvlinkGBps(system: System, release: NcclSearchRelease): number {
  const perLink = release.nvlinkGBpsPerLink(system.gpu.smVersion);
  if (perLink === undefined || system.spec.overrides?.nvlinkGBpsPerLink !== undefined)
    return ncclNvlinkGBps(system.spec, system.gpu);
  return perLink * (system.spec.overrides?.nvlinkLinks ?? system.gpu.nvlinkLinks);
}

/** Per-GPU bandwidth the ring search can use inside a node, GB/s: the narrowest link a ring must cross. */
function intraGBps(system: System, release: NcclSearchRelease): number {
  const spec = system.spec;
  if (spec.intraNode === 'uniform-ring') return spec.overrides?.linkGBps ?? 1;
  if (spec.intraNode === 'nvswitch' || spec.intraNode === 'nvlink-mesh') return releaseNvlinkGBps(system, release);
  // NCCL counts a bridge's active links at its per-link figure (xml.cc, topo.cc): what the bridge delivers is the
  // simulator's link capacity, not a smaller graph.
  if (spec.intraNode === 'nvlink-bridge' && system.gpusPerNode <= 2) return releaseNvlinkGBps(system, release);
  let bw = pcieGBps(spec, system.gpu);
  const perSocket =
    spec.gpusPerSocket ?? (system.gpusPerNode >= 4 ? Math.ceil(system.gpusPerNode / 2) : system.gpusPerNode);
  if (perSocket < system.gpusPerNode) bw = Math.min(bw, spec.overrides?.interSocketGBps ?? K.DEFAULT_INTER_SOCKET_GBPS);
  return bw;
}

function speedsFor(sm: number, release: NcclSearchRelease): readonly number[] {
  if (release.intraSpeeds) return release.intraSpeeds(sm);
  return sm >= 100 ? SPEEDS_BLACKWELL : sm >= 90 ? SPEEDS_HOPPER : SPEEDS_PRE_HOPPER;
}

export interface SearchResult {
  /** Ring graph after NCCL's first duplication: channels × per-channel GB/s is the modelled bus bandwidth. */
  readonly channels: number;
  readonly bwIntra: number;
  readonly bwInter: number;
  /** The tree graph: the ring's channel count; across nodes its intra-node speed may exceed the network's. */
  readonly tree: NetGraph;
  readonly nvls: { readonly channels: number; readonly bwIntra: number; readonly bwInter: number };
}

const SEARCHES = new WeakMap<System, Map<string, SearchResult>>();

/**
 * NCCL's topology search, reduced to its outcome: as many channels as fit at the fastest listed speed. The release
 * is the system's unless a caller asks for another's (the simulator's ceilings take the newest).
 */
export function searchGraph(system: System, release: NcclSearchRelease = system.tuner.search): SearchResult {
  let byRelease = SEARCHES.get(system);
  if (!byRelease) {
    byRelease = new Map();
    SEARCHES.set(system, byRelease);
  }
  let result = byRelease.get(release.id);
  if (!result) {
    result = runSearch(system, release);
    byRelease.set(release.id, result);
  }
  return result;
}

/** What the network search needs to know of one node: its NICs, their PCIe switches and the GPUs' bandwidth. */
function netSearchInput(system: System, release: NcclSearchRelease): NetSearchInput {
  const groups = new Map<string, { gpus: number; nics: number }>();
  for (const nics of system.fabric.gpuNics) {
    const key = nics.join(',');
    const group = groups.get(key) ?? { gpus: 0, nics: nics.length };
    group.gpus++;
    groups.set(key, group);
  }
  // NCCL reads the NIC's port speed and the PCIe link's width and generation, not what they deliver: an override
  // of the effective rate (a congested NIC, a slow path found by calibrate) slows the links but leaves the graph.
  const spec = system.spec;
  return {
    smVersion: system.gpu.smVersion,
    gpusPerNode: system.gpusPerNode,
    intraGBps: intraGBps(system, release),
    nicGBps: (spec.nic?.gbps ?? 0) / 8,
    pcieGBps: K.PCIE_X16_GBPS[spec.pcieGen ?? system.gpu.pcieGen],
    nicGroups: [...groups.values()],
    release,
  };
}

function runSearch(system: System, release: NcclSearchRelease): SearchResult {
  const sm = system.gpu.smVersion;
  const speeds = speedsFor(sm, release);
  const total = intraGBps(system, release);
  const nvls = nvlsGraph(system, speeds);
  if (system.nodes > 1 && system.fabric.nicsPerNode > 0) {
    // Across nodes NCCL searches with its network speeds: the NICs and their PCIe paths set the channels.
    const input = netSearchInput(system, release);
    const ring = searchNetGraph(input, 'ring');
    return { ...ring, tree: searchNetGraph(input, 'tree', ring.channels), nvls };
  }
  let bestChannels = 1;
  let bestSpeed = speeds.find((s) => s <= total) ?? speeds[speeds.length - 1];
  for (const speed of speeds) {
    if (speed > total) continue;
    const channels = Math.min(16, Math.floor(total / speed));
    if (channels * speed > bestChannels * bestSpeed) {
      bestChannels = channels;
      bestSpeed = speed;
    }
  }
  let channels = bestChannels;
  let bw = bestSpeed;
  if (release.duplicates(sm, bw, channels)) {
    // search.cc: min(2 × channels, maxChannels) channels at the speed over DIVUP(that, channels).
    const doubled = Math.min(2 * channels, release.maxGraphChannels ?? Infinity);
    bw /= Math.ceil(doubled / channels);
    channels = doubled;
  }
  return { channels, bwIntra: bw, bwInter: bw, tree: { channels, bwIntra: bw, bwInter: bw }, nvls };
}

/**
 * NVLS. NCCL's NVLS search (search.cc ncclTopoSearchTryNvls) adds one channel per head GPU, up to
 * NCCL_MAX_NVLS_ARITY (32) heads, and on one node insists on all of them (minChannels = maxChannels). Every channel
 * takes its speed on every GPU's NVSwitch port, and twice on its head's, so a GPU's port carries (channels + 1) ×
 * speed. On a 72-GPU NVLink domain (GB200 NVL72) that is 33 channels' worth, not 73.
 */
function nvlsGraph(system: System, speeds: readonly number[]): SearchResult['nvls'] {
  if (!system.fabric.nvlsCapable) return { channels: 0, bwIntra: 0, bwInter: 0 };
  const port = ncclNvlinkGBps(system.spec, system.gpu);
  const nvlsChannels = Math.min(NCCL_MAX_NVLS_ARITY, system.gpusPerNode);
  const speed = speeds.find((s) => (nvlsChannels + 1) * s <= port) ?? 0;
  const nicTotal = system.fabric.nicsPerNode * nicGBps(system);
  return { channels: nvlsChannels, bwIntra: speed, bwInter: system.nodes > 1 ? nicTotal / nvlsChannels : speed };
}

function nicGBps(system: System): number {
  const nic = system.spec.nic;
  return system.spec.overrides?.nicGBps ?? (nic ? nic.gbps / 8 : 0);
}

/**
 * Whether NCCL could run CollNet here: in-network reduction (SHARP) in the fabric, more than one node, and NICs.
 * CollNet also changes the runtime channel count of every algorithm (searchChannels).
 */
export function hasSharp(system: System): boolean {
  return system.spec.network?.sharp === true && system.nodes > 1 && system.fabric.nicsPerNode > 0;
}

/** NCCL's ring/tree channel count at runtime (search, duplication, connect.cc doubling). */
export function searchChannels(system: System): number {
  if (system.fabric.idealised) return 1;
  const sm = system.gpu.smVersion;
  const graph = searchGraph(system);
  const maxChannels = system.tuner.search.maxRuntimeChannels ?? 64;
  let channels = Math.min(maxChannels, graph.channels * 2);
  // connect.cc: with CollNet enabled, "add more channels to saturate intra-node bandwidth, except the 1 PPN case"
  // when the chain's (tree's) graph is faster inside the node than across it. Every algorithm runs on them.
  if (hasSharp(system) && graph.tree.bwIntra > graph.tree.bwInter && system.ranks > system.nodes)
    channels = Math.min(maxChannels, channels + Math.floor(channels / 2));
  // connect.cc: "use 4 compute channels per search channel to reach peak BW on <8 PPN".
  if (system.tuner.search.fourChannelsPerSearchChannel && sm >= 90 && system.nodes > 1 && graph.bwIntra > 45)
    if (channels < 16) channels *= 2;
  return Math.min(channels, system.gpu.sms);
}

/** NVLS runs its own CTA count: 16 on Hopper, 24 (one node) or 32 (several) on Blackwell. */
export function nvlsChannels(system: System): number {
  if (system.gpu.smVersion >= 100) return system.nodes > 1 ? 32 : 24;
  return 16;
}

/** Channels actually used for a message: NCCL drops channels while each would get too few bytes per thread. */
export function channelsFor(system: System, algorithm: Algorithm, protocol: Protocol, bytes: number): number {
  if (system.fabric.idealised) return 1;
  if (algorithm === 'nvls' || algorithm === 'nvlstree') return nvlsChannels(system);
  let channels = searchChannels(system);
  if (algorithm === 'direct') return channels;
  let threshold =
    algorithm === 'collnetdirect' || algorithm === 'collnetchain'
      ? K.NCCL_MODEL.collNetThresholdBytes
      : K.CHANNEL_THRESHOLD_BYTES[protocol];
  if (algorithm === 'ring' && protocol === 'LL') threshold *= system.ranks;
  while (channels > 1 && bytes < channels * K.THREADS_PER_CHANNEL * threshold) channels--;
  return channels;
}

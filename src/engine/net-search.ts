// NCCL's channel search across nodes (src/graph/search.cc ncclTopoCompute, ncclTopoSearchRecNet), reduced to its
// outcome: how many ring and tree channels the NICs, the GPU-to-NIC PCIe paths and NVLink can carry at one of NCCL's
// per-channel speeds. A channel enters a node through one NIC and leaves through one; the search subtracts the
// channel's speed from that NIC and from every link on its path, so the NIC count and rate (any number per node,
// one per GPU or shared) decide how many network channels exist and what each gets.

import { NEWEST_SEARCH, type NcclSearchRelease } from './nccl-search-releases';

/** NCCL's inter-node per-channel speeds (search.cc speedArrayInter, sm90SpeedArrayInter, sm100SpeedArrayInter). */
const INTER_SPEEDS_PRE_HOPPER = [48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12];
const INTER_SPEEDS_HOPPER = [48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12];
const INTER_SPEEDS_BLACKWELL = [96, 86, 80, 48, 45.1, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12];

/** The ring search may build at most MAXCHANNELS / 2 channels (init.cc). */
const MAX_SEARCH_CHANNELS = 32;

/** What a node offers the network search, in NCCL's own units (GB/s as topo.cc counts them). */
export interface NetSearchInput {
  readonly smVersion: number;
  readonly gpusPerNode: number;
  /** A GPU's intra-node bandwidth as NCCL counts it (NVLink links × per-link figure, or its PCIe link). */
  readonly intraGBps: number;
  /** One NIC's rate (speed in Mb/s / 8000: NDR 50). */
  readonly nicGBps: number;
  /** One PCIe x16 link between a GPU or NIC and its PCIe switch (Gen5 48). */
  readonly pcieGBps: number;
  /** For each PCIe switch: the GPUs and the NICs behind it. */
  readonly nicGroups: readonly { readonly gpus: number; readonly nics: number }[];
  /** The release whose search this is; the newest when absent. */
  readonly release?: NcclSearchRelease;
}

/** One graph: channels × per-channel bandwidth inside the node and across the network. */
export interface NetGraph {
  readonly channels: number;
  readonly bwIntra: number;
  readonly bwInter: number;
}

export function interSpeeds(smVersion: number, release: NcclSearchRelease = NEWEST_SEARCH): readonly number[] {
  if (release.interSpeeds) return release.interSpeeds(smVersion);
  return smVersion >= 100 ? INTER_SPEEDS_BLACKWELL : smVersion >= 90 ? INTER_SPEEDS_HOPPER : INTER_SPEEDS_PRE_HOPPER;
}

/**
 * Channels the network side carries at a speed: each channel takes `speed` from one NIC (NCCL subtracts it from the
 * NIC's bandwidth) and from the PCIe links between that NIC and the GPU it enters by. A PCIe switch with one NIC per
 * GPU or more routes each GPU's channels over the GPU's own x16 link; a NIC shared by several GPUs carries all of
 * theirs over its own link.
 */
function networkChannels(input: NetSearchInput, speed: number): number {
  let channels = 0;
  for (const group of input.nicGroups) {
    const byNics = group.nics * Math.floor(input.nicGBps / speed + 1e-9);
    const byPcie = Math.min(group.gpus, group.nics) * Math.floor(input.pcieGBps / speed + 1e-9);
    channels += Math.min(byNics, byPcie);
  }
  return channels;
}

/**
 * Channels NVLink (or the GPU's PCIe link) carries inside a node at an intra-node speed: a channel crosses every GPU
 * but leaves the node from one of them, so each GPU sends on (g − 1)/g of the channels (NCCL scales its total the
 * same way for trees, search.cc "algo other than RING do not need to close to the starting NET").
 */
function intraChannels(input: NetSearchInput, speed: number): number {
  const g = input.gpusPerNode;
  if (g <= 1) return MAX_SEARCH_CHANNELS;
  return Math.floor((input.intraGBps * g) / ((g - 1) * speed) + 1e-9);
}

function channelsAt(input: NetSearchInput, intraSpeed: number, interSpeed: number, maxChannels: number): number {
  return Math.min(maxChannels, networkChannels(input, interSpeed), intraChannels(input, intraSpeed));
}

/**
 * The ring graph (pattern RING) or the tree graph (BALANCED_TREE, which must match the ring's channel count).
 * Pass 1 starts at the fastest speed the GPU-to-NIC path allows and keeps the largest channels × speed among the
 * speeds above half of the best; NCCL then doubles channels at half the speed when the speed is at least 25 GB/s
 * (not on SM > 80 below 50 GB/s with more than 4 channels); pass 2 raises the ring's speed, or a tree's intra-node
 * speed up to twice the network speed, while the same channel count still fits.
 */
export function searchNetGraph(input: NetSearchInput, pattern: 'ring' | 'tree', minChannels = 1): NetGraph {
  const release = input.release ?? NEWEST_SEARCH;
  const speeds = interSpeeds(input.smVersion, release);
  const maxChannels = pattern === 'tree' ? Math.max(1, minChannels) : (release.maxGraphChannels ?? MAX_SEARCH_CHANNELS);
  const maxBw = Math.min(input.pcieGBps, input.nicGBps);
  const g = input.gpusPerNode;
  const totalBw = pattern === 'tree' && g > 1 ? (input.intraGBps * g) / (g - 1) : input.intraGBps;
  // Before 2.18 the first speed tried was bounded by the GPU-to-NIC path alone.
  const minFit = release.startWithinTotal ? minChannels : 0;
  let index = speeds.findIndex((s) => s <= maxBw && s * minFit <= totalBw);
  if (index < 0) index = speeds.length - 1;
  let best: NetGraph = { channels: 0, bwIntra: 0, bwInter: 0 };
  for (let i = index; i < speeds.length; i++) {
    const speed = speeds[i];
    if (best.channels > 0 && speed / best.bwInter <= 0.49) break;
    const channels = channelsAt(input, speed, speed, maxChannels);
    if (channels >= minChannels && channels * speed > best.channels * best.bwIntra)
      best = { channels, bwIntra: speed, bwInter: speed };
    // NCCL stops at a solution that fills every channel or carries the node's whole intra-node bandwidth.
    if (best.channels > 0 && (best.channels === maxChannels || best.channels * best.bwInter >= input.intraGBps)) break;
  }
  if (best.channels === 0)
    return { channels: 1, bwIntra: speeds[speeds.length - 1], bwInter: speeds[speeds.length - 1] };
  if (release.duplicates(input.smVersion, best.bwIntra, best.channels)) {
    const doubled = Math.min(best.channels * 2, maxChannels);
    const factor = Math.ceil(doubled / best.channels);
    best = { channels: doubled, bwIntra: best.bwIntra / factor, bwInter: best.bwInter / factor };
  }
  let at = speeds.findIndex((s) => s <= best.bwInter);
  if (pattern === 'ring') {
    while (
      release.ringSpeedRaise &&
      at > 0 &&
      channelsAt(input, speeds[at - 1], speeds[at - 1], maxChannels) >= best.channels
    ) {
      at--;
      best = { channels: best.channels, bwIntra: speeds[at], bwInter: speeds[at] };
    }
  } else {
    while (at > 0 && best.bwIntra < 2 * best.bwInter && intraChannels(input, speeds[at - 1]) >= best.channels) {
      at--;
      best = { ...best, bwIntra: speeds[at] };
    }
  }
  return best;
}

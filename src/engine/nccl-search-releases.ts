// What NCCL's topology search (src/graph/search.cc ncclTopoCompute, topo.h) looked like per release, read at the
// tags named beside each fact in NVIDIA/nccl. Only what changes the outcome is kept: the per-channel speeds the
// search tries, NCCL's per-link NVLink figure (which sets the bandwidth it searches), when it duplicates a graph at
// half the speed, whether pass 2 raises a ring's speed, and whether the first speed tried must fit the GPU's
// bandwidth over minChannels. From 2.18 on the engine uses its newest lists (channels.ts, net-search.ts) unchanged.

export interface NcclSearchRelease {
  /** Names the release range, and keys the search cache. */
  readonly id: string;
  /** NCCL's per-link NVLink figure for an SM (topo.h ncclTopoNVLinkBw), or undefined for the GPU catalogue's. */
  readonly nvlinkGBpsPerLink: (sm: number) => number | undefined;
  /** The intra-node speeds (speedArrayIntra, sm90SpeedArrayIntra), or undefined for the newest. */
  readonly intraSpeeds?: (sm: number) => readonly number[];
  /** The inter-node speeds (speedArrayInter, sm90SpeedArrayInter), or undefined for the newest. */
  readonly interSpeeds?: (sm: number) => readonly number[];
  /** Whether a graph of this speed and channel count is duplicated to twice the channels at half the speed. */
  readonly duplicates: (sm: number, bwIntra: number, channels: number) => boolean;
  /** Pass 2 raises a ring's speed while its channels still fit (search.cc "increase bw for Ring", from 2.19). */
  readonly ringSpeedRaise: boolean;
  /** Pass 1 starts at a speed × minChannels within the GPU's bandwidth (search.cc, from 2.18). */
  readonly startWithinTotal: boolean;
  /**
   * The ring graph's channel limit that also caps its duplication (init.cc maxChannels = MAXCHANNELS / 2), and the
   * runtime limit after connect.cc doubles the channels (MAXCHANNELS); undefined keeps the engine's newest (16
   * channels before duplication, 64 at runtime).
   */
  readonly maxGraphChannels?: number;
  readonly maxRuntimeChannels?: number;
  /** connect.cc's "4 compute channels per search channel to reach peak BW on <8 PPN" on SM90 (from 2.18). */
  readonly fourChannelsPerSearchChannel: boolean;
}

// From v2.18.1-1 on: ncclTopoDupChannels (or its inline form in 2.18) skips SM > 80 below 50 GB/s with more than
// 4 channels.
const NEWEST: NcclSearchRelease = {
  id: '2.18+',
  nvlinkGBpsPerLink: () => undefined,
  duplicates: (sm, bw, channels) => bw >= 25 && !(sm > 80 && bw < 50 && channels > 4),
  ringSpeedRaise: true,
  startWithinTotal: true,
  fourChannelsPerSearchChannel: true,
};

// v2.10.3-1 to v2.17.1-1, topo.h: SM70_NVLINK_BW and SM80_NVLINK_BW 22.0 (no SM90 entry: Hopper takes SM80's),
// SM86 12.0, SM60 18.0. v2.8.4-1 and v2.9.9-1: 21.0 for SM70 and SM80. From v2.18.1-1: 20.0 (SM90 20.6 from 2.20).
function nvlinkBefore218(perLink: number): (sm: number) => number | undefined {
  return (sm) => (sm >= 70 && sm !== 86 ? perLink : undefined);
}

// v2.10.3-1 to v2.17.1-1: speedArrayIntra, for every GPU up to 2.15 and for SM < 90 in 2.16–2.17.
const INTRA_2_10 = [44, 30, 22, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3];
// v2.10.3-1 to v2.14.3-1: speedArrayInter; v2.15.1-1 added 28.
const INTER_2_10 = [48, 30, 24, 22, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12];
const INTER_2_15 = [48, 30, 28, 24, 22, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12];
// v2.16.2-1 to v2.17.1-1: the first Hopper lists (sm90SpeedArrayIntra / Inter, chosen when ccMin >= 90).
const INTRA_SM90_2_16 = [66, 33, 24, 20, 15, 12, 6, 3];
const INTER_SM90_2_16 = [48, 45, 30, 24, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12];
// v2.8.4-1 and v2.9.9-1: one list for both searches.
const SPEEDS_2_8 = [42, 30, 24, 21, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12];

// Up to v2.15.5-1 every graph at ≥ 25 GB/s is duplicated (search.cc `if (graph->bwIntra >= 25.0)`).
const duplicateAt25 = (_sm: number, bw: number): boolean => bw >= 25;

// devcomm.h MAXCHANNELS is 32 from v2.8.4-1 to v2.17.1-1, and init.cc gives the ring graph MAXCHANNELS / 2.
const V2_10: NcclSearchRelease = {
  id: '2.10-2.14',
  nvlinkGBpsPerLink: nvlinkBefore218(22),
  intraSpeeds: () => INTRA_2_10,
  interSpeeds: () => INTER_2_10,
  duplicates: duplicateAt25,
  ringSpeedRaise: false,
  startWithinTotal: false,
  maxGraphChannels: 16,
  maxRuntimeChannels: 32,
  fourChannelsPerSearchChannel: false,
};

const BEFORE_2_10: NcclSearchRelease = {
  ...V2_10,
  id: '2.8-2.9',
  nvlinkGBpsPerLink: nvlinkBefore218(21),
  intraSpeeds: () => SPEEDS_2_8,
  interSpeeds: () => SPEEDS_2_8,
};

const V2_15: NcclSearchRelease = { ...V2_10, id: '2.15', interSpeeds: () => INTER_2_15 };

// v2.16.2-1 and v2.17.1-1: `(ccMin <= 80 && bwIntra >= 25.0) || (ccMin <= 90 && bwIntra >= 50.0)`.
const V2_16: NcclSearchRelease = {
  ...V2_15,
  id: '2.16-2.17',
  intraSpeeds: (sm) => (sm >= 90 ? INTRA_SM90_2_16 : INTRA_2_10),
  interSpeeds: (sm) => (sm >= 90 ? INTER_SM90_2_16 : INTER_2_15),
  duplicates: (sm, bw) => (sm <= 80 && bw >= 25) || (sm <= 90 && bw >= 50),
};

/**
 * The search of an NCCL release by its minor number; releases before 2.8 are taken as 2.8 (their lists differ:
 * v2.7.8-1 {42, 24, 21, …}, v2.6.4-1 {24, 21, …}). 2.18 keeps the newest lists although its SM90 lists and its
 * 20.0 GB/s per Hopper link differ from 2.20+'s, and 2.18 had no pass-2 ring raise: the engine's figures for 2.18
 * and later are left as they were (calibration.md, "NCCL releases").
 */
export function ncclSearchRelease(minor: number): NcclSearchRelease {
  if (minor >= 18) return NEWEST;
  if (minor >= 16) return V2_16;
  if (minor >= 15) return V2_15;
  if (minor >= 10) return V2_10;
  return BEFORE_2_10;
}

export const NEWEST_SEARCH = NEWEST;

// How many channels (CTAs) NCCL runs: its topology search result, duplicated as connect.cc does, then reduced
// for small messages as enqueue.cc does (topoGetAlgoInfo).
import * as K from './constants';
import type { Algorithm, Protocol } from './collective-types';
import type { System } from './topology/model';
import { ncclNvlinkGBps, pcieGBps } from './topology/node-fabric';

const SPEEDS_PRE_HOPPER = [40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3];
const SPEEDS_HOPPER = [60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3];
const SPEEDS_BLACKWELL = [90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18];
/** Most NVLS heads (channels) NCCL's search builds (device.h NCCL_MAX_NVLS_ARITY). */
const NCCL_MAX_NVLS_ARITY = 32;

/** Per-GPU bandwidth the ring search can use inside a node, GB/s: the narrowest link a ring must cross. */
function intraGBps(system: System): number {
  const spec = system.spec;
  if (spec.intraNode === 'uniform-ring') return spec.overrides?.linkGBps ?? 1;
  if (spec.intraNode === 'nvswitch' || spec.intraNode === 'nvlink-mesh') return ncclNvlinkGBps(spec, system.gpu);
  if (spec.intraNode === 'nvlink-bridge' && system.gpusPerNode <= 2) return ncclNvlinkGBps(spec, system.gpu) * K.nvlinkBridgeEfficiency(system.gpu.nvlinkGen);
  let bw = pcieGBps(spec, system.gpu);
  const perSocket = spec.gpusPerSocket ?? (system.gpusPerNode >= 4 ? Math.ceil(system.gpusPerNode / 2) : system.gpusPerNode);
  if (perSocket < system.gpusPerNode) bw = Math.min(bw, spec.overrides?.interSocketGBps ?? K.DEFAULT_INTER_SOCKET_GBPS);
  return bw;
}

function speedsFor(sm: number): readonly number[] {
  return sm >= 100 ? SPEEDS_BLACKWELL : sm >= 90 ? SPEEDS_HOPPER : SPEEDS_PRE_HOPPER;
}

export interface SearchResult {
  /** Ring/tree graph after NCCL's first duplication: channels × per-channel GB/s is the modelled bus bandwidth. */
  readonly channels: number;
  readonly bwIntra: number;
  readonly bwInter: number;
  readonly nvls: { readonly channels: number; readonly bwIntra: number; readonly bwInter: number };
}

const SEARCHES = new WeakMap<System, SearchResult>();

/** NCCL's topology search, reduced to its outcome: as many channels as fit at the fastest listed speed. */
export function searchGraph(system: System): SearchResult {
  let result = SEARCHES.get(system);
  if (!result) {
    result = runSearch(system);
    SEARCHES.set(system, result);
  }
  return result;
}

function runSearch(system: System): SearchResult {
  const sm = system.gpu.smVersion;
  const speeds = speedsFor(sm);
  const total = intraGBps(system);
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
  if (bw >= 25 && !(sm > 80 && bw < 50 && channels > 4)) {
    channels *= 2;
    bw /= 2;
  }
  const nicTotal = system.fabric.nicsPerNode * nicGBps(system);
  const bwInter = system.nodes > 1 ? Math.min(bw, nicTotal / channels) : bw;
  let nvls = { channels: 0, bwIntra: 0, bwInter: 0 };
  if (system.fabric.nvlsCapable) {
    // NCCL's NVLS search (search.cc ncclTopoSearchTryNvls) adds one channel per head GPU, up to
    // NCCL_MAX_NVLS_ARITY (32) heads, and on one node insists on all of them (minChannels = maxChannels). Every
    // channel takes its speed on every GPU's NVSwitch port, and twice on its head's, so a GPU's port carries
    // (channels + 1) × speed. On a 72-GPU NVLink domain (GB200 NVL72) that is 33 channels' worth, not 73.
    const port = ncclNvlinkGBps(system.spec, system.gpu);
    const nvlsChannels = Math.min(NCCL_MAX_NVLS_ARITY, system.gpusPerNode);
    const speed = speeds.find((s) => (nvlsChannels + 1) * s <= port) ?? 0;
    nvls = { channels: nvlsChannels, bwIntra: speed, bwInter: system.nodes > 1 ? nicTotal / nvlsChannels : speed };
  }
  return { channels, bwIntra: bw, bwInter, nvls };
}

function nicGBps(system: System): number {
  const nic = system.spec.nic;
  return system.spec.overrides?.nicGBps ?? (nic ? nic.gbps / 8 : 0);
}

/** NCCL's ring/tree channel count at runtime (search, duplication, connect.cc doubling). */
export function searchChannels(system: System): number {
  if (system.fabric.idealised) return 1;
  const sm = system.gpu.smVersion;
  let channels = Math.min(64, searchGraph(system).channels * 2);
  if (sm >= 90 && system.nodes > 1 && channels < 16) channels *= 2;
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
  let threshold = K.CHANNEL_THRESHOLD_BYTES[protocol];
  if (algorithm === 'ring' && protocol === 'LL') threshold *= system.ranks;
  while (channels > 1 && bytes < channels * K.THREADS_PER_CHANNEL * threshold) channels--;
  return channels;
}

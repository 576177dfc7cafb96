// How many channels (CTAs) NCCL runs: its topology search result, duplicated as connect.cc does, then reduced
// for small messages as enqueue.cc does (topoGetAlgoInfo).
import * as K from './constants';
import type { Algorithm, Protocol } from './collective-types';
import type { System } from './topology/model';
import { nvlinkPortGBps, pcieGBps } from './topology/node-fabric';

const SPEEDS_PRE_HOPPER = [40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3];
const SPEEDS_HOPPER = [60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3];
const SPEEDS_BLACKWELL = [90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18];

/** Per-GPU bandwidth the ring search can use inside a node, GB/s. */
function intraGBps(system: System): number {
  const spec = system.spec;
  if (spec.intraNode === 'nvswitch' || spec.intraNode === 'nvlink-mesh') return nvlinkPortGBps(spec, system.gpu);
  if (spec.intraNode === 'nvlink-bridge') return system.gpusPerNode <= 2 ? nvlinkPortGBps(spec, system.gpu) * K.NVLINK_BRIDGE_EFFICIENCY : pcieGBps(spec, system.gpu);
  return pcieGBps(spec, system.gpu);
}

/** NCCL's ring/tree channel count at runtime (search, duplication, connect.cc doubling). */
export function searchChannels(system: System): number {
  if (system.fabric.idealised) return 1;
  const sm = system.gpu.smVersion;
  const speeds = sm >= 100 ? SPEEDS_BLACKWELL : sm >= 90 ? SPEEDS_HOPPER : SPEEDS_PRE_HOPPER;
  const total = intraGBps(system);
  let bestChannels = 1;
  let bestSpeed = speeds[speeds.length - 1];
  for (const speed of speeds) {
    if (speed > total) continue;
    const channels = Math.min(16, Math.floor(total / speed));
    if (channels * speed > bestChannels * bestSpeed) {
      bestChannels = channels;
      bestSpeed = speed;
    }
  }
  let channels = bestChannels;
  if (bestSpeed >= 25 && !(sm > 80 && bestSpeed < 50 && channels > 4)) channels *= 2;
  channels = Math.min(64, channels * 2);
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

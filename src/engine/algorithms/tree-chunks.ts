// How NCCL cuts a tree AllReduce into pipeline chunks (enqueue.cc calcCollChunking, read at 2.30.7): a tree moves
// one chunk per loop of a channel, and a chunk is one buffer step (chunkSteps is 1 for trees): the protocol's buffer
// over NCCL_STEPS, halved for LL (half of each line is flags) and cut to the data lines for LL128. For LL128 the
// chunk then shrinks while the message would give each channel too few chunks for the tree's depth. Across nodes the
// CPU proxy sends a step only once the GPU has written all of it (net.cc sendProxyProgress waits for the step's
// flags or its size), so every network level forwards whole chunks.
import type { Protocol } from '../collective-types';

/** NCCL_STEPS: buffer slots per connection (device.h). */
const NCCL_STEPS = 8;
/**
 * Each protocol's buffer per connection, bytes (init.cc defaults): LL 8 lines per thread × 512 threads × 8 steps ×
 * 16 B; LL128 120 elements per thread × 640 threads × 8 steps × 8 B; Simple NCCL_BUFFSIZE 4 MiB.
 */
const BUFFER_BYTES: Readonly<Record<Protocol, number>> = { LL: 524_288, LL128: 4_915_200, Simple: 4_194_304 };
/** ncclProtoGrainSize (device.h): LL 16 B, LL128 a warp's 8 lines of 120 data bytes, Simple 512 B. */
const GRAIN_BYTES: Readonly<Record<Protocol, number>> = { LL: 16, LL128: 1920, Simple: 512 };

/**
 * Payload bytes of one tree chunk for a message of `bytes` on `channels` channels over `nodes` nodes of
 * `ranksPerNode` GPUs each, as NCCL computes it.
 */
export function treeChunkBytes(
  protocol: Protocol,
  bytes: number,
  channels: number,
  nodes: number,
  ranksPerNode: number,
): number {
  const step = BUFFER_BYTES[protocol] / NCCL_STEPS;
  let chunk = protocol === 'LL' ? step / 2 : protocol === 'LL128' ? (step / 16) * 15 : step;
  if (protocol === 'LL128') {
    // "nstepsLL128 = 1 + log2i(nNodes) + 0.1 * ppn"; the left side of each test is an integer division in NCCL.
    const depth = 1 + Math.floor(Math.log2(Math.max(1, nodes))) + 0.1 * ranksPerNode;
    const perChunk = (): number => Math.floor(bytes / (Math.max(1, channels) * chunk));
    while (perChunk() < (depth * 64) / ranksPerNode && chunk > 131072) chunk /= 2;
    while (perChunk() < (depth * 16) / ranksPerNode && chunk > 32768) chunk /= 2;
  }
  const grain = GRAIN_BYTES[protocol];
  return Math.max(grain, Math.floor(chunk / grain) * grain);
}

/** Chunks one channel's share of a tree AllReduce goes through in NCCL (at least one). */
export function treeChunks(
  protocol: Protocol,
  bytes: number,
  channels: number,
  nodes: number,
  ranksPerNode: number,
): number {
  const perChannel = bytes / Math.max(1, channels);
  return Math.max(1, Math.ceil(perChannel / treeChunkBytes(protocol, bytes, channels, nodes, ranksPerNode)));
}

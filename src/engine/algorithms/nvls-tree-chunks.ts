// How NCCL cuts an NVLSTree AllReduce into pipeline chunks (enqueue.cc calcCollChunking, the NVLS_TREE branch, the
// same from 2.18 to 2.30; the 64 KiB ceiling from four nodes on since 2.23, nvls.cc treeMaxChunkSize). Each loop of a
// channel moves one chunk per NVLS head, so a channel's pipeline holds bytes / (channels × heads × chunk) chunks: on
// many nodes and mid sizes that is one or two, and the stages (NVLS reduce, every tree level up and down, NVLS
// multicast) then run one after another instead of overlapping.

/** NCCL_NVLS_CHUNKSIZE's default, bytes. */
const NVLS_CHUNK_BYTES = 128 * 1024;
/** treeMaxChunkSize from four nodes on (NCCL_NVLS_TREE_MAX_CHUNKSIZE's default there). */
const NVLS_TREE_MAX_CHUNK_BYTES_FROM_4_NODES = 64 * 1024;

/**
 * Bytes one NVLS head moves per channel per pipeline step. `concurrentOps` is channels × heads: NCCL shrinks the
 * chunk while the message would give each of them fewer than 32, 16, 4 or 1 chunks.
 */
export function nvlsTreeHeadChunkBytes(bytes: number, nodes: number, channels: number, heads: number): number {
  let chunk = nodes >= 4 ? Math.min(NVLS_CHUNK_BYTES, NVLS_TREE_MAX_CHUNK_BYTES_FROM_4_NODES) : NVLS_CHUNK_BYTES;
  const concurrentOps = Math.max(1, channels * heads);
  if (bytes < 32 * concurrentOps * chunk && chunk > 262144) chunk = 262144;
  if (bytes < 16 * concurrentOps * chunk && chunk > 131072) chunk = 131072;
  if (bytes < 4 * concurrentOps * chunk && chunk > 65536) chunk = 65536;
  if (bytes < 1 * concurrentOps * chunk && chunk > 32768) chunk = 32768;
  return chunk;
}

/** Pipeline chunks one channel's share of an NVLSTree AllReduce goes through (at least one). */
export function nvlsTreeChunks(bytes: number, nodes: number, channels: number, heads: number): number {
  const perChannel = bytes / Math.max(1, channels);
  return Math.max(1, Math.ceil(perChannel / (heads * nvlsTreeHeadChunkBytes(bytes, nodes, channels, heads))));
}

// NCCL's tree: inside each node a chain of GPUs, across nodes a double binary tree (two trees, each carrying half
// the channels, so a node that is inner in one is a leaf in the other). AllReduce reduces up and broadcasts down,
// pipelined in chunks.
import * as K from '../constants';
import type { Flow, Schedule } from '../sim/schedule';
import { linkTable } from '../topology/link-table';
import {
  channelClasses,
  pathClass,
  pipelineStageLatenciesUs,
  wireBytes,
  symmetricRails,
  transfer,
  type BuildContext,
} from './context';
import { pipelineRounds, type Stage } from './pipeline';
import { setupUs } from './setup';
import { treeChunkBytes } from './tree-chunks';

/** Parent of rank r in NCCL's binary tree over n ranks (ncclGetBtree): the root 0 has one child. */
function btreeParent(r: number, n: number): number {
  if (r === 0) return -1;
  let bit = 1;
  while (bit < n && (bit & r) === 0) bit <<= 1;
  const up = (r ^ bit) | (bit << 1);
  return up >= n ? r ^ bit : up;
}

/**
 * Parent of node i in tree t of NCCL's double binary tree (ncclGetDtree): tree 1 mirrors tree 0 when n is even and
 * shifts it by one when n is odd, so most nodes that are inner in one tree are leaves in the other.
 */
export function binaryTreeParent(i: number, n: number, t: number): number {
  if (t === 0) return btreeParent(i, n);
  if (n % 2 === 0) {
    const p = btreeParent(n - 1 - i, n);
    return p < 0 ? -1 : n - 1 - p;
  }
  const p = btreeParent((i - 1 + n) % n, n);
  return p < 0 ? -1 : (p + 1) % n;
}

/** Parent of every rank for tree t whose node chains start at local GPU `head`. */
export function treeParents(ctx: BuildContext, t: number, head: number): Int32Array {
  const { ranks, nodes, gpusPerNode: g } = ctx.system;
  const parent = new Int32Array(ranks);
  for (let node = 0; node < nodes; node++) {
    for (let j = 0; j < g; j++) {
      const rank = node * g + ((head + j) % g);
      if (j > 0) parent[rank] = node * g + ((head + j - 1) % g);
      else {
        const up = binaryTreeParent(node, nodes, t);
        parent[rank] = up < 0 ? -1 : up * g + head;
      }
    }
  }
  return parent;
}

function depths(parent: Int32Array): Int32Array {
  const depth = new Int32Array(parent.length).fill(-1);
  const walk = (r: number): number => {
    if (depth[r] >= 0) return depth[r];
    depth[r] = parent[r] < 0 ? 0 : walk(parent[r]) + 1;
    return depth[r];
  };
  for (let r = 0; r < parent.length; r++) walk(r);
  return depth;
}

/** One node for every distinct pair of depths in the two trees. */
function representativeNodes(nodes: number, trees: number): Set<number> {
  const depthOf = (node: number, t: number): number => {
    let d = 0;
    for (let x = node; binaryTreeParent(x, nodes, t) >= 0; x = binaryTreeParent(x, nodes, t)) d++;
    return d;
  };
  const seen = new Map<string, number>();
  for (let node = 0; node < nodes; node++) {
    const key = `${depthOf(node, 0)}:${trees > 1 ? depthOf(node, 1) : 0}`;
    if (!seen.has(key)) seen.set(key, node);
  }
  return new Set(seen.values());
}

/**
 * Tree rotations across nodes: each rotation's node chains start at the GPU of a different NIC and cross the
 * network on that NIC, so as many rotations as NICs (channel pairs permitting) use them all.
 */
export function treeRotations(ctx: BuildContext): number {
  const { system } = ctx;
  return system.nodes > 1
    ? Math.min(Math.max(1, Math.floor(ctx.channels / 2)), Math.max(1, system.fabric.nicsPerNode))
    : 1;
}

/**
 * A rotation's chain head and NIC: rotation k crosses the network on NIC k (the same rail on every node, as the
 * heads are the same local GPU), and its head is the GPU on that NIC's PCIe switch; `slot` is the NIC's position
 * among that GPU's NICs.
 */
export function treeRail(ctx: BuildContext, rotation: number): { slot: number; head: number } {
  const { fabric, gpusPerNode: g } = ctx.system;
  if (ctx.system.nodes === 1 || fabric.nicGpu.length === 0) return { slot: 0, head: rotation % g };
  const nic = rotation % fabric.nicGpu.length;
  const head = fabric.nicGpu[nic];
  return { slot: fabric.gpuNics[head].indexOf(nic), head };
}

/**
 * What a network level adds to the pipeline's fill because NCCL's proxy forwards whole chunks: it sends a chunk
 * only once the GPU has written all of it (net.cc sendProxyProgress waits for the step's size or flags), so the
 * next level starts one of NCCL's chunks later than the simulator's finer cut-through chunk would let it. The chunk
 * crosses at the wire's pace, its NIC shared by the channels that cross it (NCCL's measured tree correction, in the
 * channels' ceilings, already stands for the pipeline's slow ramp and is not charged again here). Simple trees
 * move whole chunks everywhere already.
 */
function networkStoreAndForwardUs(
  ctx: BuildContext,
  rotations: number,
  perChannel: number,
  granule: number,
  stagePaths: readonly (readonly (readonly number[])[])[],
): number {
  const { system } = ctx;
  if (system.nodes < 2 || ctx.protocol === 'Simple' || system.fabric.idealised) return 0;
  const chunk = Math.min(
    treeChunkBytes(ctx.protocol, ctx.bytes, ctx.channels, system.nodes, system.gpusPerNode),
    perChannel,
  );
  if (chunk <= granule) return 0;
  const links = linkTable(system.topology);
  let slowestGBps = Infinity;
  for (const paths of stagePaths)
    for (const path of paths)
      if (pathClass(ctx, path) === 'net')
        for (const r of path)
          if (r < links.count && links.kind(r) === 'network') slowestGBps = Math.min(slowestGBps, links.GBps(r));
  if (!Number.isFinite(slowestGBps)) return 0;
  const channelsPerNic = Math.max(1, ctx.channels / rotations);
  return wireBytes(ctx, chunk - granule) / ((1000 * slowestGBps) / channelsPerNic);
}

export function buildTree(ctx: BuildContext): Schedule {
  const { system } = ctx;
  const rotations = treeRotations(ctx);
  const trees = system.ranks > 2 ? 2 : 1;
  const weights = channelClasses(ctx.channels, trees * rotations);
  const perChannel = ctx.bytes / ctx.channels;
  const chunkBytes = K.MIN_PIPELINE_CHUNK_BYTES[ctx.protocol];
  let chunks = Math.max(1, Math.ceil(perChannel / chunkBytes));
  const up: Flow[][] = [];
  const down: Flow[][] = [];
  const upPaths: (readonly number[])[][] = [];
  const g = system.gpusPerNode;
  // Fast path on many identical nodes with a NIC per GPU: a node's chain traffic depends only on its depth in the
  // two trees, and each rail's network tree is the same, so one node per depth pair and one rail stand for all.
  // Reductions are left off HBM there (it never binds next to NVLink and NICs) so nodes and rails stay independent.
  const representative = symmetricRails(ctx) && system.nodes > 16;
  const chosenNodes = representative ? representativeNodes(system.nodes, trees) : undefined;
  let maxDepth = 0;
  for (let c = 0; c < weights.length; c++) {
    const rotation = Math.floor(c / trees);
    const { slot, head } = treeRail(ctx, rotation);
    const parent = treeParents(ctx, c % trees, head);
    const depth = depths(parent);
    for (let r = 0; r < parent.length; r++) {
      if (parent[r] < 0) continue;
      const interNode = Math.floor(r / g) !== Math.floor(parent[r] / g);
      if (chosenNodes && (interNode ? rotation !== 0 : !chosenNodes.has(Math.floor(r / g)))) continue;
      const d = depth[r];
      maxDepth = Math.max(maxDepth, d);
      while (up.length < d) {
        up.push([]);
        down.push([]);
        upPaths.push([]);
      }
      const opts = { weight: weights[c], channel: c, channelStride: weights.length, chunk: 0 };
      const upPath = system.fabric.route(r, parent[r], slot);
      up[d - 1].push(
        transfer(ctx, r, parent[r], 1, {
          ...opts,
          phase: 'exchange',
          reduce: true,
          chargeMemory: !representative,
          path: upPath,
        }),
      );
      down[d - 1].push(
        transfer(ctx, parent[r], r, 1, {
          ...opts,
          phase: 'broadcast',
          reduce: false,
          path: system.fabric.route(parent[r], r, slot),
        }),
      );
      // One path per kind (inside a node, across nodes) is enough to price a stage's latency.
      if (upPaths[d - 1].length < 2 && !upPaths[d - 1].some((p) => p.length > 2 === interNode))
        upPaths[d - 1].push(upPath);
    }
  }
  const stages: Stage[] = [];
  // LL and LL128 forward line by line (cut-through): model them as a pipeline deep enough that its fill is small.
  if (ctx.protocol !== 'Simple') chunks = Math.max(chunks, K.CUT_THROUGH_DEPTH * 2 * maxDepth);
  const payload = perChannel / chunks;
  const storeAndForwardUs = networkStoreAndForwardUs(ctx, rotations, perChannel, payload, upPaths);
  for (const list of [...up, ...down])
    for (let i = 0; i < list.length; i++)
      list[i] = { ...list[i], bytes: list[i].bytes * payload, reduceBytes: list[i].reduceBytes * payload };
  const order = [
    ...Array.from({ length: maxDepth }, (_, i) => maxDepth - i),
    ...Array.from({ length: maxDepth }, (_, i) => i + 1),
  ];
  const latencies = pipelineStageLatenciesUs(
    ctx,
    order.map((d) => upPaths[d - 1]),
  );
  order.forEach((d, i) => {
    const reducing = i < maxDepth;
    stages.push({
      flows: reducing ? up[d - 1] : down[d - 1],
      phase: reducing ? 'exchange' : 'broadcast',
      latencyUs: latencies[i] + (upPaths[d - 1].some((p) => pathClass(ctx, p) === 'net') ? storeAndForwardUs : 0),
    });
  });
  return { rounds: pipelineRounds(stages, chunks), setupUs: setupUs(ctx), channels: ctx.channels };
}

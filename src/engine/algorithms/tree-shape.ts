// The geometry of NCCL's tree (which rank sends to which, on which rail, at which depth) and its edges grouped by
// depth, kept per system and channel count. The geometry depends on neither the size nor the protocol, so a sweep
// over sizes walks the ranks once per channel count instead of once per size; each size only prices the edges.
import type { System } from '../topology/model';
import { channelClasses, symmetricRails, type BuildContext } from './context';

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

/** The tree edges of one depth (child at that depth, its parent one up), in the order the flows are built. */
export interface DepthEdges {
  readonly child: readonly number[];
  readonly parent: readonly number[];
  /** Channel class of each edge (index into TreeShape.weights). */
  readonly channelClass: readonly number[];
  /** Link routes child → parent (the reduction) and parent → child (the broadcast). */
  readonly upRoutes: readonly (readonly number[])[];
  readonly downRoutes: readonly (readonly number[])[];
  /** At most one route inside a node and one across nodes: enough to price the stage's latency. */
  readonly samplePaths: readonly (readonly number[])[];
  /**
   * The byte terms of every edge of this depth in order (equal weights in one run), when the edges above are only
   * the ones simulated (an edited system, see tree-edited.ts); else each edge above counts once.
   */
  readonly termRuns?: readonly { readonly weight: number; readonly count: number }[];
}

export interface TreeShape {
  readonly rotations: number;
  /** Channels in each class: classes alternate trees, then rotations. */
  readonly weights: readonly number[];
  /**
   * One node per depth pair and rail 0 stand for all (see buildTree); reductions then leave memory out. An edited
   * system's reduced shape (tree-edited.ts) is not representative in this sense: its byte terms count every edge.
   */
  readonly representative: boolean;
  /** Edges by depth: byDepth[d − 1] holds the edges whose child is at depth d. */
  readonly byDepth: readonly DepthEdges[];
}

const SHAPES = new WeakMap<System, Map<string, TreeShape>>();

/**
 * The tree's edges for this system and channel count, built on the first call and then shared: a System is not
 * changed after resolution (an edited system is a new object), and the edges depend on nothing else in `ctx` but
 * the channel count and whether identical nodes may be represented.
 */
export function treeShape(ctx: BuildContext): TreeShape {
  const { system } = ctx;
  // Fast path on many identical nodes with a NIC per GPU: a node's chain traffic depends only on its depth in the
  // two trees, and each rail's network tree is the same, so one node per depth pair and one rail stand for all.
  const representative = symmetricRails(ctx) && system.nodes > 16;
  const key = `${ctx.channels}:${representative}`;
  let shapes = SHAPES.get(system);
  if (!shapes) SHAPES.set(system, (shapes = new Map()));
  let shape = shapes.get(key);
  if (!shape) {
    shape = buildShape(ctx, representative);
    shapes.set(key, shape);
  }
  return shape;
}

export interface MutableDepth {
  child: number[];
  parent: number[];
  channelClass: number[];
  upRoutes: (readonly number[])[];
  downRoutes: (readonly number[])[];
  samplePaths: (readonly number[])[];
}

function buildShape(ctx: BuildContext, representative: boolean): TreeShape {
  const { system } = ctx;
  const rotations = treeRotations(ctx);
  const trees = system.ranks > 2 ? 2 : 1;
  const weights = channelClasses(ctx.channels, trees * rotations);
  const g = system.gpusPerNode;
  const chosenNodes = representative ? representativeNodes(system.nodes, trees) : undefined;
  const byDepth: MutableDepth[] = [];
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
      while (byDepth.length < d)
        byDepth.push({ child: [], parent: [], channelClass: [], upRoutes: [], downRoutes: [], samplePaths: [] });
      const edges = byDepth[d - 1];
      const upPath = system.fabric.route(r, parent[r], slot);
      edges.child.push(r);
      edges.parent.push(parent[r]);
      edges.channelClass.push(c);
      edges.upRoutes.push(upPath);
      edges.downRoutes.push(system.fabric.route(parent[r], r, slot));
      if (edges.samplePaths.length < 2 && !edges.samplePaths.some((p) => p.length > 2 === interNode))
        edges.samplePaths.push(upPath);
    }
  }
  return { rotations, weights, representative, byDepth };
}

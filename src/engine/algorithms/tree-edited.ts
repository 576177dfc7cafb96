// NCCL's tree on an edited system (a degraded cable, a slow node, a different rail), reduced as NVLSTree's is
// (edited-classes.ts): the groups of flows an edit touches are simulated, and one stand-in for each kind of the
// unchanged ones.
//
// Why the tree's rounds split. Without the reductions' memories, a tree round's flows fall into groups that share
// no resource: each node's chain flows (its NVSwitch uplinks and downlinks) and each rail's flows between nodes
// (rail l's NIC-side links on every node and its leaf and spine links). A reduction also charges the parent's
// memory, and a chain head's memory takes both its chain child's flow and its network children's, which joins
// every node's chain flows with every rail's tree into one large group. A memory that cannot bind can be left out
// without changing a rate of the filling: see tree-memory.ts for the proof and its check.
//
// Which groups are alike. A node's chain flows at depth d are those of its chain members d − a₀ (tree 0) and
// d − a₁ (tree 1), where a₀ and a₁ are the node's depths in the two binary trees; the edges of one depth are built
// class by class and node by node, so an unchanged node's groups, in every round, equal those of any other
// unchanged node with the same pair (a₀, a₁), flow for flow and in the same order. A rail's flows are its rotation's
// edges between chain heads, alike on every unchanged rail whose rotation's channel classes weigh the same. The
// solver gives identical groups identical results (its cache compares their canonical forms), and a round lasts as
// long as its slowest group: one stand-in per kind gives every round's duration exactly.
//
// The byte terms of each depth still count every edge, class by class (a depth's edges all move one size), so the
// phase split adds the same numbers in the same order.
import type { System } from '../topology/model';
import { channelClasses, type BuildContext } from './context';
import type { EditedClasses } from './edited-classes';
import { binaryTreeParent, treeRail, treeRotations, type MutableDepth, type TreeShape } from './tree-shape';

/** Parent and depth of every node in binary tree t. */
function nodeTree(nodes: number, t: number): { parent: Int32Array; depth: Int32Array } {
  const parent = new Int32Array(nodes);
  for (let node = 0; node < nodes; node++) parent[node] = binaryTreeParent(node, nodes, t);
  const depth = new Int32Array(nodes).fill(-1);
  for (let node = 0; node < nodes; node++) {
    // Walk up to the first node whose depth is known (or the root), then fill in the nodes passed.
    let steps = 0;
    let x = node;
    while (depth[x] < 0 && parent[x] >= 0) {
      x = parent[x];
      steps++;
    }
    const top = depth[x] < 0 ? 0 : depth[x];
    if (depth[x] < 0) depth[x] = 0;
    for (let y = node, d = top + steps; y !== x; y = parent[y], d--) depth[y] = d;
  }
  return { parent, depth };
}

interface Edges extends MutableDepth {
  termRuns: { weight: number; count: number }[];
}

const SHAPES = new WeakMap<System, Map<number, TreeShape>>();

/**
 * The tree's edges on an edited system, reduced to the groups `classes` names and one stand-in of each kind (see
 * the file's comment), built once per system and channel count. Each depth keeps the samples of its paths and the
 * byte terms of every edge, as the node-by-node shape has them.
 */
export function editedTreeShape(ctx: BuildContext, classes: EditedClasses): TreeShape {
  const { system } = ctx;
  let shapes = SHAPES.get(system);
  if (!shapes) SHAPES.set(system, (shapes = new Map()));
  let shape = shapes.get(ctx.channels);
  if (!shape) {
    shape = buildEditedShape(ctx, classes);
    shapes.set(ctx.channels, shape);
  }
  return shape;
}

function buildEditedShape(ctx: BuildContext, classes: EditedClasses): TreeShape {
  const { system } = ctx;
  const { nodes, gpusPerNode: g } = system;
  const rotations = treeRotations(ctx);
  const trees = system.ranks > 2 ? 2 : 1;
  const weights = channelClasses(ctx.channels, trees * rotations);
  // The trees some class runs on (one channel runs tree 0 only).
  const shapes = Array.from({ length: Math.min(trees, weights.length) }, (_, t) => nodeTree(nodes, t));
  const rails = Array.from({ length: rotations }, (_, k) => treeRail(ctx, k));
  const keptNodes = standInNodes(classes, shapes, nodes, g);
  const keptRotations = standInRotations(classes, rails, weights, trees);
  // Deepest edge: a chain's last member below the deepest node.
  let maxDepth = 0;
  for (const { depth } of shapes) for (let n = 0; n < nodes; n++) maxDepth = Math.max(maxDepth, depth[n] + g - 1);
  const byDepth: Edges[] = Array.from({ length: maxDepth }, () => ({
    child: [],
    parent: [],
    channelClass: [],
    upRoutes: [],
    downRoutes: [],
    samplePaths: [],
    termRuns: [],
  }));
  addTermRuns(byDepth, shapes, weights, trees, g);
  addSamplePaths(ctx, byDepth, shapes, rails, weights.length, trees);
  // The kept edges, class by class and node by node: the node-by-node order, as one depth holds at most one edge of
  // a class and node (the chain head's edge up at its node's depth, member j's at that depth plus j).
  for (let c = 0; c < weights.length; c++) {
    const { parent, depth } = shapes[c % trees];
    const rotation = Math.floor(c / trees);
    const { slot, head } = rails[rotation];
    const railKept = keptRotations[rotation] === 1;
    for (let n = 0; n < nodes; n++) {
      const a = depth[n];
      if (railKept && parent[n] >= 0) add(system, byDepth[a - 1], c, n * g + head, parent[n] * g + head, slot);
      if (!keptNodes[n]) continue;
      for (let j = 1; j < g; j++)
        add(system, byDepth[a + j - 1], c, n * g + ((head + j) % g), n * g + ((head + j - 1) % g), slot);
    }
  }
  return { rotations, weights, representative: false, byDepth };
}

/** The nodes whose chain flows are simulated: every node an edit touches, and one per pair of tree depths. */
function standInNodes(
  classes: EditedClasses,
  shapes: readonly { depth: Int32Array }[],
  nodes: number,
  g: number,
): Uint8Array {
  const kept = new Uint8Array(nodes);
  const edited = new Uint8Array(nodes);
  for (const rank of classes.editedRanks) edited[Math.floor(rank / g)] = 1;
  const seen = new Set<number>();
  for (let n = 0; n < nodes; n++) {
    if (edited[n]) {
      kept[n] = 1;
      continue;
    }
    const key = shapes.length > 1 ? shapes[0].depth[n] * nodes + shapes[1].depth[n] : shapes[0].depth[n];
    if (seen.has(key)) continue;
    seen.add(key);
    kept[n] = 1;
  }
  return kept;
}

/** The rotations whose rails' flows are simulated: every rail an edit touches, and one per weighing of classes. */
function standInRotations(
  classes: EditedClasses,
  rails: readonly { head: number }[],
  weights: readonly number[],
  trees: number,
): Uint8Array {
  const kept = new Uint8Array(rails.length);
  const seen = new Set<string>();
  for (let k = 0; k < rails.length; k++) {
    if (classes.editedRails.includes(rails[k].head)) {
      kept[k] = 1;
      continue;
    }
    const key = weights.slice(k * trees, (k + 1) * trees).join(':');
    if (seen.has(key)) continue;
    seen.add(key);
    kept[k] = 1;
  }
  return kept;
}

/**
 * Every edge's byte term, by depth: class by class, as many as the class has edges there (a node's chain head at
 * its depth, if it has a parent, and one member at each of the g − 1 depths below it), equal weights in one run.
 */
function addTermRuns(
  byDepth: Edges[],
  shapes: readonly { parent: Int32Array; depth: Int32Array }[],
  weights: readonly number[],
  trees: number,
  g: number,
): void {
  const histograms = shapes.map(({ parent, depth }) => {
    const heads = new Float64Array(byDepth.length + 1);
    for (let n = 0; n < depth.length; n++) if (parent[n] >= 0) heads[depth[n]]++;
    const all = new Float64Array(byDepth.length + 1);
    for (let n = 0; n < depth.length; n++) all[depth[n]]++;
    return { heads, all };
  });
  for (let d = 1; d <= byDepth.length; d++) {
    const runs = byDepth[d - 1].termRuns;
    for (let c = 0; c < weights.length; c++) {
      const { heads, all } = histograms[c % trees];
      let count = heads[d];
      for (let j = 1; j < g && j <= d; j++) count += all[d - j];
      if (count === 0) continue;
      const last = runs[runs.length - 1];
      if (last && last.weight === weights[c]) last.count += count;
      else runs.push({ weight: weights[c], count });
    }
  }
}

/**
 * Each depth's sample paths as the node-by-node shape takes them: the first edge inside a node and the first
 * between nodes, in the order edges are built (class, then rank), in the order they were found. In one class, the
 * first edge of depth d between nodes leaves the first node at depth d, and the first inside a node is a member of
 * the first node at a depth from d − g + 1 to d − 1 (one member per node has depth d).
 */
function addSamplePaths(
  ctx: BuildContext,
  byDepth: Edges[],
  shapes: readonly { parent: Int32Array; depth: Int32Array }[],
  rails: readonly { slot: number; head: number }[],
  classCount: number,
  trees: number,
): void {
  const { system } = ctx;
  const { nodes, gpusPerNode: g } = system;
  const maxDepth = byDepth.length;
  // Per tree: the first node at each depth, and the first node with a member at each depth (-1 when none).
  const firsts = shapes.map(({ depth }) => {
    const atDepth = new Int32Array(maxDepth + 1).fill(-1);
    for (let n = nodes - 1; n >= 0; n--) atDepth[depth[n]] = n;
    const member = new Int32Array(maxDepth + 1).fill(-1);
    for (let d = 1; d <= maxDepth; d++)
      for (let a = Math.max(0, d - g + 1); a < d; a++)
        if (atDepth[a] >= 0 && (member[d] < 0 || atDepth[a] < member[d])) member[d] = atDepth[a];
    return { atDepth, member };
  });
  for (let d = 1; d <= maxDepth; d++) {
    /** The first edge of each kind: its class and rank, and its route up. */
    let intra: { at: number; path: readonly number[] } | undefined;
    let inter: { at: number; path: readonly number[] } | undefined;
    for (let c = 0; c < classCount && !(intra && inter); c++) {
      const t = c % trees;
      const { parent, depth } = shapes[t];
      const { atDepth, member } = firsts[t];
      const { slot, head } = rails[Math.floor(c / trees)];
      const n = atDepth[d];
      if (!inter && n >= 0 && parent[n] >= 0)
        inter = {
          at: c * system.ranks + n * g + head,
          path: system.fabric.route(n * g + head, parent[n] * g + head, slot),
        };
      const m = member[d];
      if (!intra && m >= 0) {
        const j = d - depth[m];
        const child = m * g + ((head + j) % g);
        intra = { at: c * system.ranks + child, path: system.fabric.route(child, m * g + ((head + j - 1) % g), slot) };
      }
    }
    const found = [intra, inter].filter((x) => x !== undefined).sort((x, y) => x.at - y.at);
    for (const sample of found) byDepth[d - 1].samplePaths.push(sample.path);
  }
}

/** Adds one kept edge, routed both ways without keeping the routes in resolution's cache. */
function add(system: System, edges: Edges, c: number, child: number, parent: number, slot: number): void {
  edges.child.push(child);
  edges.parent.push(parent);
  edges.channelClass.push(c);
  edges.upRoutes.push(routeOnce(system, child, parent, slot));
  edges.downRoutes.push(routeOnce(system, parent, child, slot));
}

/** fabric.route(x, y, slot), without keeping a route between nodes (a rail's tree routes every node's pair once). */
function routeOnce(system: System, x: number, y: number, slot: number): readonly number[] {
  const { network, nicsPerNode } = system.fabric;
  const g = system.gpusPerNode;
  if (!network || Math.floor(x / g) === Math.floor(y / g)) return system.fabric.route(x, y, slot);
  const { send, shared, receive } = network.routeParts(x, y, slot % nicsPerNode);
  const path: number[] = [];
  for (const part of [send, shared, receive]) for (let i = 0; i < part.length; i++) path.push(part[i]);
  return path;
}

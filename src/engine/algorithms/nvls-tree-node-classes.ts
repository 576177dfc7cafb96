// NVLSTree's tree rounds on identical nodes, proved from classes of nodes, leaves and edges with multiplicities
// instead of from every tree edge (nvls-tree-classes.ts's per-edge proof visits each edge twice per round: about
// 33 k visits a round at 16,384 GPUs, in 23 rounds). The per-edge proof reads a round through per-resource sums and
// each flow's smallest share; the classes below give the same numbers from one pass over the nodes at build time:
//
// - A node's role is its depth and child count in each tree. In a round (a set of depths, up or down) a node sends
//   to its parent where its depth is a part's, and to each child where its children's depth is one; it receives the
//   reverse. So its sending, receiving and memory sums are its role's, each use added as often as the role counts
//   it (the class sum times its count), and every node of a role has the same shares.
// - A leaf's class is how many edges of each tree and depth leave it (child inside, parent outside) and enter it.
//   Its uplink and downlink sums follow from those counts, when every leaf's links have one capacity.
// - An edge's type is its tree, depth, the roles of its child and parent and, when it crosses leaves, their leaves'
//   classes: a flow's level (the smallest share on its way) is its type's.
// - A node's type (and a leaf's) is the set of edge types at it. uniformRound needs every resource's flows at one
//   level and capped state, and each resource at that level (resourceAtLevel): both follow from the type, since the
//   type fixes the levels of every flow at the node and the role fixes its sums. Nodes alike in role whose
//   neighbours differ have different types, so the check stays per node, as in the per-edge proof.
//
// Exactness is the per-edge proof's: every use on the 2^-16 grid (checked by the caller) and every demand below 2^53
// of it, so a sum is the same in any order and count × use added one by one is the sum over the nodes' flows. The
// verdict is the per-edge proof's on every round (the property test compares both with the solver). The cost of a
// round is the number of roles, leaf classes, edge types and node types: tens at 2,048 nodes, not thousands.

/** One depth of the trees: tree (channel class) and child node of each edge, in build order. */
export interface DepthEdges {
  readonly trees: Int32Array;
  readonly nodes: Int32Array;
}

/** The classes of one run's trees; every array index below is a class id. */
export interface TreeClasses {
  readonly trees: number;
  readonly depths: number;
  /** Depth and child count of each role in each tree: [role × trees + tree]. */
  readonly roleDepth: Int32Array;
  readonly roleChildren: Int32Array;
  /** Edges leaving and entering a leaf of each class, per tree and depth: [(class × trees + tree) × depths + d − 1]. */
  readonly leafOut: Int32Array;
  readonly leafIn: Int32Array;
  /** Each edge type's tree, child depth, child and parent roles, and leaf classes (−1 when it stays in its leaf). */
  readonly edgeTree: Int32Array;
  readonly edgeDepth: Int32Array;
  readonly edgeChildRole: Int32Array;
  readonly edgeParentRole: Int32Array;
  readonly edgeChildLeaf: Int32Array;
  readonly edgeParentLeaf: Int32Array;
  /** Node types: the role and the edge types at the node, edge × 2 (as child) or edge × 2 + 1 (as parent). */
  readonly nodeTypeRole: Int32Array;
  readonly nodeTypeEdges: readonly Int32Array[];
  /** Leaf types: the class and the crossing edge types at the leaf, edge × 2 (child inside) or + 1 (parent inside). */
  readonly leafTypeClass: Int32Array;
  readonly leafTypeEdges: readonly Int32Array[];
  /** How many nodes and leaves each type stands for (reported, not used by the proof). */
  readonly nodeTypeCount: Int32Array;
  readonly leafTypeCount: Int32Array;
}

/** Keys stay exact integers below this. */
const MAX_KEY = 2 ** 52;

/** Numbers keys in order of first appearance; `first` holds each class's first member. */
class Classes {
  private readonly ids = new Map<number | string, number>();
  readonly first: number[] = [];
  idOf(key: number | string, member: number): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.first.length;
      this.ids.set(key, id);
      this.first.push(member);
    }
    return id;
  }
}

/**
 * The classes of trees over `nodes` nodes under leaves of `perLeaf`: `depths[d − 1]` lists the edges whose child is
 * at depth d, `parents[tree][node]` each node's parent (−1 at the root). Undefined where a key would not fit.
 */
export function buildTreeClasses(
  nodes: number,
  perLeaf: number,
  depths: readonly DepthEdges[],
  parents: readonly Int32Array[],
): TreeClasses | undefined {
  const T = parents.length;
  const D = depths.length;
  if (D >= 64 || T > 2) return undefined;
  const depthOf = parents.map(() => new Int32Array(nodes));
  const children = parents.map(() => new Int32Array(nodes));
  let edgeTotal = 0;
  for (let d = 1; d <= D; d++) {
    const { trees, nodes: kids } = depths[d - 1];
    edgeTotal += trees.length;
    for (let i = 0; i < trees.length; i++) {
      depthOf[trees[i]][kids[i]] = d;
      children[trees[i]][parents[trees[i]][kids[i]]]++;
    }
  }
  // Roles: depth (< 64) and child count (< 4) in each tree.
  const roles = new Classes();
  const roleOf = new Int32Array(nodes);
  for (let x = 0; x < nodes; x++) {
    let key = 0;
    for (let c = 0; c < T; c++) {
      if (children[c][x] > 3) return undefined;
      key = (key * 64 + depthOf[c][x]) * 4 + children[c][x];
    }
    roleOf[x] = roles.idOf(key, x);
  }
  const R = roles.first.length;
  const roleDepth = new Int32Array(R * T);
  const roleChildren = new Int32Array(R * T);
  roles.first.forEach((x, r) => {
    for (let c = 0; c < T; c++) {
      roleDepth[r * T + c] = depthOf[c][x];
      roleChildren[r * T + c] = children[c][x];
    }
  });
  // Leaf classes: crossing edges per tree and depth, leaving and entering.
  const leaves = Math.ceil(nodes / perLeaf);
  const stride = T * D;
  const out = new Int32Array(leaves * stride);
  const into = new Int32Array(leaves * stride);
  for (let d = 1; d <= D; d++) {
    const { trees, nodes: kids } = depths[d - 1];
    for (let i = 0; i < trees.length; i++) {
      const lc = Math.floor(kids[i] / perLeaf);
      const lp = Math.floor(parents[trees[i]][kids[i]] / perLeaf);
      if (lc === lp) continue;
      out[lc * stride + trees[i] * D + d - 1]++;
      into[lp * stride + trees[i] * D + d - 1]++;
    }
  }
  const leafClasses = new Classes();
  const leafClassOf = new Int32Array(leaves);
  for (let l = 0; l < leaves; l++) {
    let key = '';
    for (let j = 0; j < stride; j++) {
      const a = out[l * stride + j];
      const b = into[l * stride + j];
      if (a !== 0 || b !== 0) key += `${j}:${a}:${b},`;
    }
    leafClassOf[l] = leafClasses.idOf(key, l);
  }
  const L = leafClasses.first.length;
  const leafOut = new Int32Array(L * stride);
  const leafIn = new Int32Array(L * stride);
  leafClasses.first.forEach((l, k) => {
    leafOut.set(out.subarray(l * stride, (l + 1) * stride), k * stride);
    leafIn.set(into.subarray(l * stride, (l + 1) * stride), k * stride);
  });
  // Edge types, numbered first by tree, depth and roles, then by leaf classes; each node's edge up in each tree.
  const ends = new Classes();
  const edges = new Classes();
  const edgeAsChild = parents.map(() => new Int32Array(nodes).fill(-1));
  const memberTree = new Int32Array(edgeTotal);
  const memberChild = new Int32Array(edgeTotal);
  let m = 0;
  for (let d = 1; d <= D; d++) {
    const { trees, nodes: kids } = depths[d - 1];
    for (let i = 0; i < trees.length; i++, m++) {
      const c = trees[i];
      const child = kids[i];
      const parent = parents[c][child];
      const lc = Math.floor(child / perLeaf);
      const lp = Math.floor(parent / perLeaf);
      const end = ends.idOf(((c * D + d - 1) * R + roleOf[child]) * R + roleOf[parent], m);
      const leafPair = lc === lp ? 0 : (leafClassOf[lc] + 1) * (L + 1) + leafClassOf[lp] + 1;
      if ((end + 1) * (L + 1) * (L + 1) >= MAX_KEY) return undefined;
      memberTree[m] = c;
      memberChild[m] = child;
      edgeAsChild[c][child] = edges.idOf(end * (L + 1) * (L + 1) + leafPair, m);
    }
  }
  const E = edges.first.length;
  const edgeTree = new Int32Array(E);
  const edgeDepth = new Int32Array(E);
  const edgeChildRole = new Int32Array(E);
  const edgeParentRole = new Int32Array(E);
  const edgeChildLeaf = new Int32Array(E);
  const edgeParentLeaf = new Int32Array(E);
  edges.first.forEach((member, e) => {
    const c = memberTree[member];
    const child = memberChild[member];
    const parent = parents[c][child];
    const lc = Math.floor(child / perLeaf);
    const lp = Math.floor(parent / perLeaf);
    edgeTree[e] = c;
    edgeDepth[e] = depthOf[c][child];
    edgeChildRole[e] = roleOf[child];
    edgeParentRole[e] = roleOf[parent];
    edgeChildLeaf[e] = lc === lp ? -1 : leafClassOf[lc];
    edgeParentLeaf[e] = lc === lp ? -1 : leafClassOf[lp];
  });
  // Node types: the sorted edge codes at each node (at most one edge up and three down per tree), numbered through
  // their prefixes (a prefix's id and the next code give the longer prefix's), so no key outgrows its number.
  const width = 4 * T;
  const codes = new Int32Array(nodes * width);
  const held = new Int32Array(nodes);
  for (let c = 0; c < T; c++) {
    for (let x = 0; x < nodes; x++) {
      const e = edgeAsChild[c][x];
      if (e < 0) continue;
      codes[x * width + held[x]++] = 2 * e;
      const p = parents[c][x];
      if (held[p] >= width) return undefined;
      codes[p * width + held[p]++] = 2 * e + 1;
    }
  }
  const prefixes = new Classes();
  const nodeTypes = new Classes();
  const nodeTypeOf = new Int32Array(nodes);
  for (let x = 0; x < nodes; x++) {
    const at = x * width;
    for (let i = at + 1; i < at + held[x]; i++) {
      const code = codes[i];
      let j = i;
      for (; j > at && codes[j - 1] > code; j--) codes[j] = codes[j - 1];
      codes[j] = code;
    }
    let prefix = 0;
    for (let i = at; i < at + held[x]; i++) prefix = 1 + prefixes.idOf(prefix * 2 * E + codes[i], x);
    nodeTypeOf[x] = nodeTypes.idOf(prefix, x);
  }
  const nodeTypeCount = new Int32Array(nodeTypes.first.length);
  for (let x = 0; x < nodes; x++) nodeTypeCount[nodeTypeOf[x]]++;
  // Leaf types: the class and the sorted crossing edge codes at each leaf.
  const leafCodes: number[][] = Array.from({ length: leaves }, () => []);
  for (let c = 0; c < T; c++) {
    for (let x = 0; x < nodes; x++) {
      const e = edgeAsChild[c][x];
      if (e < 0 || edgeChildLeaf[e] < 0) continue;
      leafCodes[Math.floor(x / perLeaf)].push(2 * e);
      leafCodes[Math.floor(parents[c][x] / perLeaf)].push(2 * e + 1);
    }
  }
  const leafTypes = new Classes();
  const leafTypeCount: number[] = [];
  for (let l = 0; l < leaves; l++) {
    const t = leafTypes.idOf(`${leafClassOf[l]}|${leafCodes[l].sort((a, b) => a - b).join(',')}`, l);
    leafTypeCount[t] = (leafTypeCount[t] ?? 0) + 1;
  }
  return {
    trees: T,
    depths: D,
    roleDepth,
    roleChildren,
    leafOut,
    leafIn,
    edgeTree,
    edgeDepth,
    edgeChildRole,
    edgeParentRole,
    edgeChildLeaf,
    edgeParentLeaf,
    nodeTypeRole: Int32Array.from(nodeTypes.first, (x) => roleOf[x]),
    nodeTypeEdges: nodeTypes.first.map((x) => codes.slice(x * width, x * width + held[x])),
    leafTypeClass: Int32Array.from(leafTypes.first, (l) => leafClassOf[l]),
    leafTypeEdges: leafTypes.first.map((l) => Int32Array.from(leafCodes[l])),
    nodeTypeCount,
    leafTypeCount: Int32Array.from(leafTypeCount),
  };
}

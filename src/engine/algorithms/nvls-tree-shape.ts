// The shape of NVLSTree's trees across nodes: each node's parent and depth in both trees, and the tree edges
// grouped by the depth of their child (a stage's members), in the order the stages build their flows.

/** The flows of one depth: tree (channel class) and sending node of each, in the order they are built. */
export interface DepthMembers {
  readonly trees: Int32Array;
  readonly nodes: Int32Array;
  /** Members of each tree. */
  readonly perTree: readonly number[];
  /** The first member whose parent is under its own leaf, and the first under another leaf (−1 when none). */
  readonly firstWithin: number;
  readonly firstAcross: number;
}

/**
 * Parent and depth of every node in tree 0, NCCL's binary tree (binaryTreeParent): a node whose lowest set bit is b
 * goes up to (node ^ b) | 2b, or to node ^ b where that is past the last node; either parent has a higher lowest
 * bit (or is the root, 0). So the nodes are taken by lowest bit from the highest down, each parent's depth known
 * before its children's, with a constant amount of work per node.
 */
function treeShape(nodes: number): { parent: Int32Array; depth: Int32Array } {
  const parent = new Int32Array(nodes);
  const depth = new Int32Array(nodes);
  parent[0] = -1;
  let top = 1;
  while (top * 2 < nodes) top *= 2;
  for (let bit = top; bit >= 1; bit /= 2) {
    for (let node = bit; node < nodes; node += 2 * bit) {
      const up = (node ^ bit) | (bit * 2);
      const p = up >= nodes ? node ^ bit : up;
      parent[node] = p;
      depth[node] = depth[p] + 1;
    }
  }
  return { parent, depth };
}

/**
 * Parent and depth of every node in each of `count` trees. Tree 1 is tree 0 relabelled (binaryTreeParent: mirrored
 * when the node count is even, shifted by one when odd), so its arrays are tree 0's read through that relabelling.
 */
export function treeShapes(nodes: number, count: number): { parent: Int32Array; depth: Int32Array }[] {
  const first = treeShape(nodes);
  const shapes = [first];
  for (let c = 1; c < count; c++) {
    const parent = new Int32Array(nodes);
    const depth = new Int32Array(nodes);
    for (let node = 0; node < nodes; node++) {
      const image = nodes % 2 === 0 ? nodes - 1 - node : (node - 1 + nodes) % nodes;
      const p = first.parent[image];
      parent[node] = p < 0 ? -1 : nodes % 2 === 0 ? nodes - 1 - p : (p + 1) % nodes;
      depth[node] = first.depth[image];
    }
    shapes.push({ parent, depth });
  }
  return shapes;
}

/** Each depth's members, trees outer and nodes inner, with what the stages read of them besides. */
export function depthMembers(
  shapes: readonly { parent: Int32Array; depth: Int32Array }[],
  perLeaf: number,
): DepthMembers[] {
  const nodes = shapes[0].parent.length;
  const counts: number[][] = [];
  shapes.forEach(({ parent, depth }, c) => {
    for (let node = 0; node < nodes; node++) {
      if (parent[node] < 0) continue;
      while (counts.length < depth[node]) counts.push(shapes.map(() => 0));
      counts[depth[node] - 1][c]++;
    }
  });
  const filled = counts.map(() => 0);
  const members = counts.map((perTree) => {
    const total = perTree.reduce((a, b) => a + b, 0);
    return { trees: new Int32Array(total), nodes: new Int32Array(total), perTree, firstWithin: -1, firstAcross: -1 };
  });
  shapes.forEach(({ parent, depth }, c) => {
    for (let node = 0; node < nodes; node++) {
      if (parent[node] < 0) continue;
      const d = depth[node] - 1;
      const m = members[d];
      const i = filled[d]++;
      m.trees[i] = c;
      m.nodes[i] = node;
      const crosses = Math.floor(node / perLeaf) !== Math.floor(parent[node] / perLeaf);
      if (crosses && m.firstAcross < 0) m.firstAcross = i;
      if (!crosses && m.firstWithin < 0) m.firstWithin = i;
    }
  });
  return members;
}

// The shapes that fix each algorithm's order of operations: how elements split into channels and chunks, and
// NCCL's double binary tree. Both the step-by-step simulation and the sequential reference read these shapes; they
// differ in how they execute them.

export interface ElementRange {
  readonly start: number;
  readonly end: number;
}

/**
 * Splits [start, end) into `parts` contiguous ranges, part i = [start + ⌊i·L/parts⌋, start + ⌊(i+1)·L/parts⌋).
 * Some parts are empty when L < parts. (NCCL's pipelined chunk size changes which elements fall in which chunk for
 * large buffers, but not the order each chunk is reduced in; this split keeps the mapping simple and exact.)
 */
export function splitRange(range: ElementRange, parts: number): ElementRange[] {
  const length = range.end - range.start;
  const out: ElementRange[] = [];
  for (let i = 0; i < parts; i++) {
    out.push({
      start: range.start + Math.floor((i * length) / parts),
      end: range.start + Math.floor(((i + 1) * length) / parts),
    });
  }
  return out;
}

/** The index of the part of `splitRange(range, parts)` that holds element e. */
export function partOf(e: number, range: ElementRange, parts: number): number {
  const length = range.end - range.start;
  // Part i starts at ⌊i·L/parts⌋; the candidate from the inverse formula is at most one too high.
  let part = Math.min(parts - 1, Math.floor(((e - range.start + 1) * parts) / length));
  while (part > 0 && range.start + Math.floor((part * length) / parts) > e) part -= 1;
  while (part < parts - 1 && range.start + Math.floor(((part + 1) * length) / parts) <= e) part += 1;
  return part;
}

export interface BinaryTreeLinks {
  /** Parent, or -1 at the root. */
  readonly up: number;
  /** Children in NCCL's order (down0 before down1), absent ones left out. */
  readonly down: number[];
}

/** NCCL's ncclGetBtree (src/graph/trees.cc): an in-order binary tree over 0..n-1 rooted at 0. */
export function btree(n: number, rank: number): BinaryTreeLinks {
  let bit = 1;
  while (bit < n && (bit & rank) === 0) bit <<= 1;
  if (rank === 0) return { up: -1, down: n > 1 ? [bit >> 1] : [] };
  let up = (rank ^ bit) | (bit << 1);
  if (up >= n) up = rank ^ bit;
  let lowbit = bit >> 1;
  const down: number[] = [];
  if (lowbit !== 0) down.push(rank - lowbit);
  while (lowbit !== 0 && rank + lowbit >= n) lowbit >>= 1;
  if (lowbit !== 0) down.push(rank + lowbit);
  return { up, down };
}

/**
 * NCCL's ncclGetDtree: tree 0 is the binary tree; tree 1 is its mirror (n even) or its shift by one (n odd), so that
 * every rank is a leaf in one of the two trees. NCCL alternates channels between the two trees.
 */
export function dtree(n: number, rank: number, tree: 0 | 1): BinaryTreeLinks {
  if (tree === 0) return btree(n, rank);
  const map = n % 2 === 1 ? (x: number) => (x + 1) % n : (x: number) => n - 1 - x;
  const source = n % 2 === 1 ? (rank - 1 + n) % n : n - 1 - rank;
  const links = btree(n, source);
  return { up: links.up === -1 ? -1 : map(links.up), down: links.down.map(map) };
}

export interface RankTree {
  readonly root: number;
  readonly up: readonly number[];
  /** Per rank, the ranks it receives partial sums from, in the order it adds them. */
  readonly down: readonly (readonly number[])[];
}

/** The node-level double binary tree (one vertex per node). */
export function nodeTree(nodes: number, tree: 0 | 1): RankTree {
  const up: number[] = [];
  const down: number[][] = [];
  let root = 0;
  for (let m = 0; m < nodes; m++) {
    const links = dtree(nodes, m, tree);
    up.push(links.up);
    down.push(links.down);
    if (links.up === -1) root = m;
  }
  return { root, up, down };
}

/**
 * NCCL's tree over ranks: inside a node the GPUs form a chain (local rank l receives from l+1), and local rank 0 of
 * each node is linked into the node-level binary tree. As in NCCL's connectTrees, the chain child comes first in
 * the down list and the inter-node children after it, so a head adds own + chain, then child nodes in order.
 */
export function rankTree(ranks: number, gpusPerNode: number, tree: 0 | 1): RankTree {
  const nodes = ranks / gpusPerNode;
  const nodeLevel = nodeTree(nodes, tree);
  const up: number[] = [];
  const down: number[][] = [];
  for (let r = 0; r < ranks; r++) {
    const node = Math.floor(r / gpusPerNode);
    const local = r % gpusPerNode;
    const children: number[] = local + 1 < gpusPerNode ? [r + 1] : [];
    if (local === 0) {
      up.push(nodeLevel.up[node] === -1 ? -1 : nodeLevel.up[node] * gpusPerNode);
      for (const child of nodeLevel.down[node]) children.push(child * gpusPerNode);
    } else {
      up.push(r - 1);
    }
    down.push(children);
  }
  return { root: nodeLevel.root * gpusPerNode, up, down };
}

/** Ranks in an order where every rank comes after all of its children (reverse breadth-first from the root). */
export function childrenFirst(tree: RankTree): number[] {
  const order = [tree.root];
  for (let i = 0; i < order.length; i++) order.push(...tree.down[order[i]]);
  return order.reverse();
}

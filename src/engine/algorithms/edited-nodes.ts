// An edited system's nodes, for the algorithms whose flows stay inside one node or on one node's own NIC links
// (CollNet's and hierarchical's intra-node stages, and every SHARP leg up to the leaf and back, see sharp.ts). A
// resolved system lays each node's links out at a constant stride and builds every node from one spec, so a node
// none of whose links an edit changed has the same capacities, in the same places, as every other such node: its
// flows form the same groups (sharing no resource with another node's) and finish at the same times. One unchanged
// node then stands for all of them; the nodes an edit touches are simulated besides it. A changed leaf or spine
// link belongs to no node: the flows that cross it (SHARP's leaf aggregates, a ring across leaves) are the
// caller's to place. The callers check that every flow they build stays in its node (`nodeOfLink`), which is what
// makes a node's flows a group of their own.
import type { System } from '../topology/model';
import { linkEdits } from '../topology/edits';
import type { SymmetricLayout } from '../topology/link-table';

export interface EditedNodes {
  /** Nodes whose flows are simulated, ascending: every node an edit touches and the first unchanged one. */
  readonly nodes: readonly number[];
  /** The first node no edit touches: it stands for every unchanged node. */
  readonly standIn: number;
  /** The changed leaf and spine links, ascending (they belong to no node). */
  readonly sharedChanged: readonly number[];
  /** The node a link belongs to in the resolved layout, or -1 for a leaf or spine link. */
  readonly nodeOfLink: (link: number) => number;
}

/**
 * The nodes to simulate on an edited multi-node system, or undefined when the edits are not known (no recorded
 * layout, another link count) or every node is touched (then nothing is saved).
 */
export function editedNodes(system: System): EditedNodes | undefined {
  if (system.nodes < 2) return undefined;
  const edits = linkEdits(system);
  if (!edits) return undefined;
  const { layout } = edits;
  const nodeOfLink = nodeOfLinkIn(layout);
  const touched = new Set<number>();
  const sharedChanged: number[] = [];
  for (const link of edits.changed) {
    const node = nodeOfLink(link);
    if (node < 0) sharedChanged.push(link);
    else touched.add(node);
  }
  let standIn = 0;
  while (standIn < system.nodes && touched.has(standIn)) standIn++;
  if (standIn >= system.nodes) return undefined;
  touched.add(standIn);
  return { nodes: [...touched].sort((a, b) => a - b), standIn, sharedChanged, nodeOfLink };
}

/** Identical nodes as an edit that touches nothing: node 0 stands for all, read from the resolved layout alone. */
export function untouchedNodes(layout: SymmetricLayout): EditedNodes {
  return { nodes: [0], standIn: 0, sharedChanged: [], nodeOfLink: nodeOfLinkIn(layout) };
}

/** Whether every link of `path` (resources past the links, such as memories, are ignored) belongs to `node`. */
export function staysInNode(edited: EditedNodes, path: readonly number[], node: number, linkCount: number): boolean {
  for (const link of path) if (link < linkCount && edited.nodeOfLink(link) !== node) return false;
  return true;
}

/**
 * The node a link of the symmetric layout belongs to, or -1 for a shared (leaf or spine) link: links are numbered
 * node by node inside the nodes, then the shared ones, then each node's NIC links.
 */
export function nodeOfLinkIn(layout: SymmetricLayout): (link: number) => number {
  const intraEnd = layout.nodes * layout.intraPerNode;
  const sharedEnd = intraEnd + layout.shared;
  return (link) => {
    if (link < intraEnd) return Math.floor(link / layout.intraPerNode);
    if (link < sharedEnd) return -1;
    return Math.floor((link - sharedEnd) / layout.nicPerNode);
  };
}

// SHARP's network stage on an edited system (NVLS across nodes and CollNet, see sharp.ts), in proportion to the
// edit. Does the in-switch reduction couple what an edit touches to the rest? As modelled, no: a head's stream runs
// over its own NIC-side links up to its rail's leaf and back (one flow per node, no link shared with another node
// or another rail, since every rail has leaves of its own), and each leaf's aggregate runs over that leaf's own
// uplink and downlink (the spine has no capacity of its own). So the stage falls into groups by node and by leaf,
// and an edit touches only the groups whose links it changed: the edited nodes' streams (edited-nodes.ts) and the
// aggregates of a leaf a changed leaf or spine link ends at. Streams of one unchanged node stand for every unchanged
// node's, and the aggregates of one unchanged leaf (every head's on its rail) for every unchanged leaf's.
//
// What the unreduced stage (sharpStage) reads off every node is taken here from the resolved layout: the nodes
// under one leaf are consecutive blocks of `nodesPerLeaf` (network-layout.ts hangs node n on leaf ⌊n / that⌋); it
// is checked on each block's first and last node. Every byte term is counted as the unreduced stage counts it.
import { linkTable } from '../topology/link-table';
import type { Flow, PhaseRun } from '../sim/schedule';
import { transfer, wireBytes, type BuildContext } from './context';
import { staysInNode, type EditedNodes } from './edited-nodes';
import { headOptions, leafSpineLinks, sharpLeg, type SharpHead } from './sharp';

export interface SelectedSharpStage {
  /** The simulated flows: the chosen nodes' streams and every leaf's aggregate, head by head. */
  readonly flows: Flow[];
  /** The paths the unreduced stage prices its latency by (its first flows' paths, one per head). */
  readonly paths: (readonly number[])[];
  /** The byte terms of every node's and every leaf's flows, in the unreduced stage's order. */
  readonly runs: PhaseRun[];
}

/** A leaf of a head's rail: the first node under it and the leaf switch's vertex id. */
interface Leaf {
  readonly first: number;
  readonly id: string;
}

/**
 * The leaves of the rail a head uses, in node order, or undefined when the nodes do not hang on their leaves in
 * blocks of `nodesPerLeaf` (each block's first and last node are checked).
 */
function railLeaves(ctx: BuildContext, local: number, slot: number): Leaf[] | undefined {
  const { system } = ctx;
  const perLeaf = system.fabric.network?.nodesPerLeaf;
  if (perLeaf === undefined || perLeaf < 1) return undefined;
  const g = system.gpusPerNode;
  const leaves: Leaf[] = [];
  const seen = new Set<string>();
  for (let first = 0; first < system.nodes; first += perLeaf) {
    const leaf = sharpLeg(system, first * g + local, slot).leaf;
    const last = Math.min(first + perLeaf, system.nodes) - 1;
    // A leaf seen before, or a block whose ends hang on different leaves, is not the layout's.
    if (seen.has(leaf) || sharpLeg(system, last * g + local, slot).leaf !== leaf) return undefined;
    seen.add(leaf);
    leaves.push({ first, id: leaf });
  }
  return leaves;
}

/**
 * The leaves whose aggregates are solved: every leaf a changed leaf or spine link ends at, and the first other one,
 * which stands for the rest. A leaf's aggregate crosses that leaf's uplink and downlink only (checked on the solved
 * ones), so an unchanged leaf's aggregates are alike: one leaf's, head by head on the rail, stand for all of them.
 */
function solvedLeaves(ctx: BuildContext, leaves: readonly Leaf[], edited: EditedNodes): Leaf[] {
  const links = ctx.system.topology.links;
  const touched = new Set<string>();
  for (const link of edited.sharedChanged) {
    touched.add(links[link].from);
    touched.add(links[link].to);
  }
  const solved: Leaf[] = [];
  let standIn = false;
  for (const leaf of leaves) {
    if (touched.has(leaf.id)) solved.push(leaf);
    else if (!standIn) {
      standIn = true;
      solved.push(leaf);
    }
  }
  return solved;
}

/**
 * The network stage with the streams of `edited.nodes` only (every head's) and every leaf's aggregate, or undefined
 * when a flow would leave its group (a stream crossing another node's or a shared link, an aggregate crossing a
 * node's) or the leaves cannot be placed.
 */
export function selectedSharpStage(
  ctx: BuildContext,
  heads: readonly SharpHead[],
  edited: EditedNodes,
): SelectedSharpStage | undefined {
  const { system } = ctx;
  const g = system.gpusPerNode;
  const linkCount = linkTable(system.topology).count;
  const flows: Flow[] = [];
  const runs: PhaseRun[] = [];
  const leavesOf = new Map<string, { every: Leaf[]; solved: Leaf[] } | undefined>();
  const links = system.topology.links;
  for (const head of heads) {
    const opts = { ...headOptions(head), represents: 1 };
    const rail = `${head.local}:${head.slot}`;
    if (!leavesOf.has(rail)) {
      const every = railLeaves(ctx, head.local, head.slot);
      leavesOf.set(rail, every && { every, solved: solvedLeaves(ctx, every, edited) });
    }
    const leaves = leavesOf.get(rail);
    if (!leaves) return undefined;
    for (const node of edited.nodes) {
      const rank = node * g + head.local;
      const leg = sharpLeg(system, rank, head.slot);
      const path = [...leg.up, ...leg.down];
      if (!staysInNode(edited, path, node, linkCount)) return undefined;
      flows.push(transfer(ctx, rank, rank, head.payload, { ...opts, path }));
    }
    // Every flow of the head carries the same bytes: one term per node, then one per leaf when there are several.
    const term = wireBytes(ctx, head.payload) * head.weight * 1;
    runs.push({ phase: 'exchange', term, count: system.nodes });
    const { every, solved } = leaves;
    if (every.length < 2) continue;
    runs.push({ phase: 'exchange', term, count: every.length });
    for (const leaf of solved) {
      const other = leaf === every[0] ? every[1] : every[0];
      const rank = leaf.first * g + head.local;
      const path = leafSpineLinks(system, rank, other.first * g + head.local, head.slot);
      // The aggregate must stay on its own leaf's links (then an unchanged leaf's are alike).
      const own = (link: number): boolean =>
        edited.nodeOfLink(link) === -1 && (links[link].from === leaf.id || links[link].to === leaf.id);
      if (!path.every(own)) return undefined;
      flows.push(transfer(ctx, rank, rank, head.payload, { ...opts, path }));
    }
  }
  // The unreduced stage keeps the paths of its first flows, as many as there are heads (node by node, head by head).
  const paths: (readonly number[])[] = [];
  for (const head of heads) {
    for (let node = 0; node < system.nodes && paths.length < heads.length; node++) {
      const leg = sharpLeg(system, node * g + head.local, head.slot);
      paths.push([...leg.up, ...leg.down]);
    }
  }
  return { flows, paths, runs };
}

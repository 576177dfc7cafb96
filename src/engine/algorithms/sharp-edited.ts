// SHARP's network stage on an edited system (NVLS across nodes and CollNet, see sharp.ts), in proportion to the
// edit. Does the in-switch reduction couple what an edit touches to the rest? As modelled, no: a head's stream runs
// over its own NIC-side links up to its rail's leaf and back (one flow per node, no link shared with another node
// or another rail, since every rail has leaves of its own), and each leaf's aggregate runs over that leaf's own
// uplink and downlink (the spine has no capacity of its own). So the stage falls into groups by node and by leaf,
// and an edit touches only the groups whose links it changed: the edited nodes' streams (edited-nodes.ts) and the
// aggregates over a changed leaf or spine link. Streams of one unchanged node stand for every unchanged node's; the
// aggregates are few (one per leaf and head) and are all simulated.
//
// What the unreduced stage (sharpStage) reads off every node is taken here from the resolved layout: the nodes
// under one leaf are consecutive blocks of `nodesPerLeaf` (network-layout.ts hangs node n on leaf ⌊n / that⌋); it
// is checked on each block's first and last node. Every byte term is counted as the unreduced stage counts it.
import { linkTable } from '../topology/link-table';
import type { Flow, PhaseRun } from '../sim/schedule';
import { transfer, wireBytes, type BuildContext } from './context';
import { staysInNode, type EditedNodes } from './edited-nodes';
import { leafSpineLinks, sharpLeg, type SharpHead } from './sharp';

export interface SelectedSharpStage {
  /** The simulated flows: the chosen nodes' streams and every leaf's aggregate, head by head. */
  readonly flows: Flow[];
  /** The paths the unreduced stage prices its latency by (its first flows' paths, one per head). */
  readonly paths: (readonly number[])[];
  /** The byte terms of every node's and every leaf's flows, in the unreduced stage's order. */
  readonly runs: PhaseRun[];
}

/**
 * The first node under each leaf of the rail a head uses, or undefined when the nodes do not hang on their leaves
 * in blocks of `nodesPerLeaf` (each block's first and last node are checked).
 */
function leafFirsts(ctx: BuildContext, local: number, slot: number): number[] | undefined {
  const { system } = ctx;
  const perLeaf = system.fabric.network?.nodesPerLeaf;
  if (perLeaf === undefined || perLeaf < 1) return undefined;
  const g = system.gpusPerNode;
  const firsts: number[] = [];
  const seen = new Set<string>();
  for (let first = 0; first < system.nodes; first += perLeaf) {
    const leaf = sharpLeg(system, first * g + local, slot).leaf;
    const last = Math.min(first + perLeaf, system.nodes) - 1;
    // A leaf seen before, or a block whose ends hang on different leaves, is not the layout's.
    if (seen.has(leaf) || sharpLeg(system, last * g + local, slot).leaf !== leaf) return undefined;
    seen.add(leaf);
    firsts.push(first);
  }
  return firsts;
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
  const firstsOf = new Map<string, number[] | undefined>();
  for (const head of heads) {
    const opts = {
      weight: head.weight,
      channel: head.channel,
      channelStride: head.channelStride,
      chunk: 0,
      phase: 'exchange' as const,
      reduce: false,
      represents: 1,
    };
    const rail = `${head.local}:${head.slot}`;
    if (!firstsOf.has(rail)) firstsOf.set(rail, leafFirsts(ctx, head.local, head.slot));
    const firsts = firstsOf.get(rail);
    if (!firsts) return undefined;
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
    if (firsts.length < 2) continue;
    runs.push({ phase: 'exchange', term, count: firsts.length });
    for (const node of firsts) {
      const other = node === firsts[0] ? firsts[1] : firsts[0];
      const rank = node * g + head.local;
      const path = leafSpineLinks(system, rank, other * g + head.local, head.slot);
      if (path.some((link) => edited.nodeOfLink(link) !== -1)) return undefined;
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

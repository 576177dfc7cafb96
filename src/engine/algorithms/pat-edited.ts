// A PAT round on an edited system (a degraded cable, a slow node, a degraded leaf link), reduced to what the edit
// touches. PAT runs with one GPU per node, and in a round every rank sends one flow per channel class to the rank at
// that round's distance and receives one from the rank as far the other way. A flow crosses its sender's send-side
// links (GPU to NIC), its receiver's receive-side links (NIC to GPU), the leaf uplink and downlink between the two
// leaves when they differ, and, in a reduce-scatter, its receiver's memory. A sender's classes share its send side,
// and its receiver's receive side and memory take nothing else, since the receiver hears from that sender only: so
// each sender's flows form a group of their own on the node links, and only the leaf and spine links join groups.
//
// Why a few groups stand for all. A leaf or spine link carries at most nodesPerLeaf senders' flows of each class in a
// round; were each of those flows as fast as its own links and its channel ceiling allow, and the link still not
// full, it never binds at any step of the filling (a flow's rate never exceeds that bound whatever finishes first),
// and the max-min rates without it are the rates with it. Where every unchanged leaf or spine link is slack in that
// sense the round splits into the senders' groups. Groups on unchanged links are alike (resolution lays every node
// out from one spec at a constant stride), so the round simulates the groups whose sender or receiver an edit
// touches, the groups crossing a changed leaf or spine link that could bind (on their whole route, so that link is
// charged), and one untouched group that stands for the rest; an unchanged leaf or spine link that could bind sends
// the round back to every rank's flows. The round lasts as long as its slowest group. This is exact in real
// arithmetic; the unreduced run fills the groups inside one component joined by the slack shared links, where a flow
// that outlasts others is advanced in several steps, so the two agree to rounding (far below a nanosecond). On
// identical nodes (the fast path) nothing is touched and node 0's group stands for all; every group then ends
// together, and the result was the same bit for bit on the 864 systems compared (docs/performance.md, session 13).
import type { Flow, Round } from '../sim/schedule';
import type { Phase } from '../trace/model';
import { linkEdits, resolvedLayout } from '../topology/edits';
import { linkTable } from '../topology/link-table';
import { channelCapGBps, transfer, type BuildContext } from './context';
import { editedNodes, untouchedNodes } from './edited-nodes';
import { foldedPatRound, standInRound, type BoundLink, type PatRoundShape } from './pat-folded';

/** What the edit touches, found once per build. */
export interface EditedPat {
  /** Nodes with a changed link, ascending. */
  readonly touchedNodes: readonly number[];
  readonly nodesPerLeaf: number;
  readonly bound: readonly BoundLink[];
  /**
   * Identical nodes whose unchanged leaf or spine links can bind: every leaf and spine link's role (pat-folded.ts
   * folds each round onto the first leaf). Absent otherwise.
   */
  readonly foldedLinks?: readonly BoundLink[];
}

/**
 * The edit's reach for PAT with channel classes of `weights`, or undefined when the groups cannot be shown apart
 * (every rank's flows then run, as before). On identical nodes (the fast path) it is an edit that touches nothing.
 */
export function editedPat(ctx: BuildContext, weights: readonly number[]): EditedPat | undefined {
  const { system } = ctx;
  const { fabric, nodes } = system;
  const network = fabric.network;
  const uniform = ctx.representative === true;
  if (!(ctx.reduceEdits || uniform) || system.gpusPerNode !== 1 || nodes < 2 || !network || fabric.idealised) return;
  // Identical nodes are an edit that touches nothing: node 0 stands for all, read from the resolved layout (the
  // links of every node are not built).
  const layout = uniform ? resolvedLayout(fabric) : linkEdits(system)?.layout;
  const chosen = uniform && layout ? untouchedNodes(layout) : editedNodes(system);
  if (!layout || !chosen) return undefined;
  const links = linkTable(system.topology);
  const intraEnd = layout.nodes * layout.intraPerNode;
  const sharedEnd = intraEnd + layout.shared;
  const isShared = (link: number): boolean => link >= intraEnd && link < sharedEnd;
  const keyOf = (link: number): number =>
    link < intraEnd ? link % layout.intraPerNode : layout.intraPerNode + ((link - sharedEnd) % layout.nicPerNode);
  // Each side's links stay in its node, at the same places on the first and last node, and no place in a node
  // serves both a sending and a receiving side (the groups are then apart on the node links).
  const sendKeys = new Set<number>();
  const receiveKeys = new Set<number>();
  for (let c = 0; c < weights.length; c++) {
    const pairs = [
      [0, 1],
      [nodes - 1, 0],
    ];
    const sides: string[] = [];
    for (const [from, to] of pairs) {
      const parts = network.routeParts(from, to, c);
      for (const [part, node, keys] of [
        [parts.send, from, sendKeys],
        [parts.receive, to, receiveKeys],
      ] as const) {
        for (const link of part) {
          if (isShared(link) || chosen.nodeOfLink(link) !== node) return undefined;
          keys.add(keyOf(link));
        }
      }
      for (const link of parts.shared) if (!isShared(link)) return undefined;
      sides.push([...parts.send.map(keyOf), -1, ...parts.receive.map(keyOf)].join());
    }
    if (sides[0] !== sides[1]) return undefined;
  }
  for (const key of sendKeys) if (receiveKeys.has(key)) return undefined;
  // The most any one flow of each class can carry: its channel ceiling, and its sending and receiving links on the
  // fastest of the touched nodes and an untouched one (every untouched node is alike). A leaf or spine link belongs
  // to one rail (the NIC a route leaves by, its send side's last link), so it carries only that rail's classes.
  const cap = channelCapGBps(ctx);
  const railLoad = new Map<number, number>();
  for (let c = 0; c < weights.length; c++) {
    let send = 0;
    let receive = 0;
    for (const node of chosen.nodes) {
      const peer = (node + 1) % nodes;
      const parts = network.routeParts(node, peer, c);
      send = Math.max(send, slowest(links, parts.send));
      const back = network.routeParts(peer, node, c);
      receive = Math.max(receive, slowest(links, back.receive));
    }
    const sendSide = network.routeParts(0, 1, c).send;
    const rail = keyOf(sendSide[sendSide.length - 1]);
    railLoad.set(rail, (railLoad.get(rail) ?? 0) + Math.min(weights[c] * cap, send, receive));
  }
  const load = Math.max(...railLoad.values());
  const perLeaf = network.nodesPerLeaf;
  const copies = Math.min(perLeaf, nodes);
  const changed = new Set(chosen.sharedChanged);
  const tight: number[] = [];
  for (let link = intraEnd; link < sharedEnd; link++) {
    if (!(links.GBps(link) >= copies * load)) {
      // An unchanged one that could bind is one of many alike: on identical nodes the round folds onto one leaf
      // (pat-folded.ts) where the leaves repeat, else every rank's flows run.
      if (!changed.has(link)) return uniform ? foldableLeaves(ctx, weights.length, intraEnd, sharedEnd) : undefined;
      tight.push(link);
    }
  }
  const bound = tight.length > 0 ? boundLinks(ctx, tight, weights.length) : [];
  if (!bound) return undefined;
  const touchedNodes = chosen.nodes.filter((node) => node !== chosen.standIn);
  return { touchedNodes, nodesPerLeaf: perLeaf, bound };
}

/**
 * Identical nodes with a leaf or spine link that can bind: when every leaf holds as many nodes (shifting every rank
 * by one leaf's nodes then maps each round onto itself) and the routes give each shared link one role, the reach
 * that folds the rounds onto leaf 0 (pat-folded.ts), else undefined (every rank's flows run).
 */
function foldableLeaves(
  ctx: BuildContext,
  classes: number,
  intraEnd: number,
  sharedEnd: number,
): EditedPat | undefined {
  const { nodes } = ctx.system;
  const perLeaf = ctx.system.fabric.network!.nodesPerLeaf;
  if (nodes % perLeaf !== 0 || nodes / perLeaf < 2) return undefined;
  const shared = Array.from({ length: sharedEnd - intraEnd }, (_, i) => intraEnd + i);
  const roles = boundLinks(ctx, shared, classes);
  if (!roles) return undefined;
  return { touchedNodes: [], nodesPerLeaf: perLeaf, bound: [], foldedLinks: roles };
}

function slowest(links: ReturnType<typeof linkTable>, path: readonly number[]): number {
  let least = Infinity;
  for (const link of path) least = Math.min(least, links.GBps(link));
  return least;
}

/**
 * Which leaf's uplink or downlink each of the `tight` links is, by the routes between the first nodes of the leaves
 * (node n hangs on leaf ⌊n / nodesPerLeaf⌋; each block's last node is checked to hang there too), or undefined when
 * a route crosses other shared links than that rule gives. A tight link no route crosses carries nothing.
 */
function boundLinks(ctx: BuildContext, tight: readonly number[], classes: number): BoundLink[] | undefined {
  const { system } = ctx;
  const network = system.fabric.network!;
  const perLeaf = network.nodesPerLeaf;
  const leaves = Math.ceil(system.nodes / perLeaf);
  const wanted = new Set(tight);
  const found = new Map<number, { link: number; leaf: number; up: boolean; classes: number[] }>();
  const note = (link: number, leaf: number, up: boolean, c: number): boolean => {
    if (!wanted.has(link)) return true;
    const seen = found.get(link);
    if (!seen) found.set(link, { link, leaf, up, classes: [c] });
    else if (seen.leaf !== leaf || seen.up !== up) return false;
    else if (!seen.classes.includes(c)) seen.classes.push(c);
    return true;
  };
  if (leaves < 2) return [];
  for (let c = 0; c < classes; c++) {
    for (let leaf = 0; leaf < leaves; leaf++) {
      const other = leaf === 0 ? 1 : 0;
      const first = leaf * perLeaf;
      const last = Math.min(first + perLeaf, system.nodes) - 1;
      const out = network.routeParts(first, other * perLeaf, c).shared;
      const outLast = network.routeParts(last, other * perLeaf, c).shared;
      const into = network.routeParts(other * perLeaf, first, c).shared;
      const intoLast = network.routeParts(other * perLeaf, last, c).shared;
      if (out.length !== 2 || into.length !== 2 || out[0] !== outLast[0] || into[1] !== intoLast[1]) return undefined;
      if (!note(out[0], leaf, true, c) || !note(into[1], leaf, false, c)) return undefined;
    }
  }
  return [...found.values()];
}

/**
 * The PAT round at `distance` as the groups the edit touches and one stand-in (see the header). `every` builds every
 * rank's flows, for a reader of `flows` (a trace or the full path never come here, but the round keeps its contract).
 */
export function editedPatRound(
  ctx: BuildContext,
  reach: EditedPat,
  weights: readonly number[],
  round: PatRoundShape,
  every: () => readonly Flow[],
): Round {
  if (reach.foldedLinks) {
    const folded = foldedPatRound(ctx, reach.foldedLinks, weights, round, every);
    const { latencyUs, step } = round;
    return folded ?? { flows: every(), latencyUs, repeat: 1, phase: round.gather ? 'broadcast' : 'exchange', step };
  }
  const { system } = ctx;
  const n = system.nodes;
  const network = system.fabric.network!;
  const { distance, gather, payload } = round;
  const peerOf = (sender: number): number => (gather ? (sender + distance) % n : (sender - distance + n) % n);
  const senderOf = (receiver: number): number => (gather ? (receiver - distance + n) % n : (receiver + distance) % n);
  const leafOf = (node: number): number => Math.floor(node / reach.nodesPerLeaf);
  // Senders whose group an edit touches: as senders, as receivers, or across a changed leaf link that could bind.
  const senders = new Set<number>();
  for (const node of reach.touchedNodes) {
    senders.add(node);
    senders.add(senderOf(node));
  }
  const wholeRoute = weights.map(() => new Set<number>());
  for (const link of reach.bound) {
    const first = link.leaf * reach.nodesPerLeaf;
    const end = Math.min(first + reach.nodesPerLeaf, n);
    for (let node = first; node < end; node++) {
      const sender = link.up ? node : senderOf(node);
      if (leafOf(link.up ? peerOf(node) : sender) === link.leaf) continue;
      senders.add(sender);
      for (const c of link.classes) wholeRoute[c].add(sender);
    }
  }
  let standIn = 0;
  while (standIn < n && senders.has(standIn)) standIn++;
  const simulated = [...senders].sort((a, b) => a - b);
  if (standIn < n) simulated.push(standIn);
  const phase: Phase = gather ? 'broadcast' : 'exchange';
  const flows: Flow[] = [];
  for (let c = 0; c < weights.length; c++) {
    const options = { weight: weights[c], channel: c, channelStride: weights.length, chunk: 0, phase, reduce: !gather };
    for (const sender of simulated) {
      const peer = peerOf(sender);
      const parts = network.routeParts(sender, peer, c);
      const path = wholeRoute[c].has(sender)
        ? [...parts.send, ...parts.shared, ...parts.receive]
        : [...parts.send, ...parts.receive];
      flows.push(transfer(ctx, sender, peer, payload, { ...options, path }));
    }
  }
  return standInRound(ctx, weights, round, flows, every);
}

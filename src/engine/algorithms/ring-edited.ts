// A ring round on an edited system (a degraded cable, a slow node, a different rail), reduced to what the edit
// touches. With a NIC per GPU a ring round's flows meet in four kinds of resource: a node's NVSwitch links carry
// that node's intra-node flows (every channel class's) and nothing else; a rank's NIC-side links carry the one
// network flow that leaves that rank and the one that arrives there (each class leaves a node from its own local
// GPU and enters the next at another); the leaf and spine links carry the network flows of one rail under one leaf;
// a rank's memory takes the one flow of each class that it receives and reduces.
//
// Why a few groups stand for all. A resource that cannot be filled even if every flow crossing it ran as fast as
// its own links and its channel ceiling allow never binds: the max-min rates with it are the rates without it, at
// every step of the filling (a flow's rate never exceeds that bound, whatever finishes first). The leaf and spine
// links carry at most nodesPerLeaf flows of one class, and a memory one flow of each class; both are checked
// against that bound here, and the round falls back to every rank's flows when either could bind, unless the leaf or
// spine links that could bind are all changed ones: the flows that cross them (found by their routes) then form
// groups with them and are simulated on their whole routes, like the flows of a changed NIC link. Without them the
// round splits into groups that share no resource: each node's intra-node flows, and each network flow alone on its
// sender's and receiver's NIC-side links. The round lasts as long as its slowest group, and groups on unchanged
// links are alike, so the groups an edit touches are simulated with one unchanged stand-in of each kind. This is
// exact in real arithmetic; the filling on the whole component rounds differently (a flow that outlasts others is
// advanced in several steps), so the result agrees with the node-by-node run to rounding (far below a nanosecond).
//
// The step latency is the ring's mean hop latency over every path (meanStepLatencyUs): its sums are taken here over
// every path in the same order, with an unchanged path's value taken from a stand-in of the same place.
import * as K from '../constants';
import type { Flow, PhaseRun, Round } from '../sim/schedule';
import { pack } from '../sim/packed';
import { linkEdits } from '../topology/edits';
import { linkTable } from '../topology/link-table';
import { channelCapGBps, channelClasses, pathClass, stepLatencyUs, transfer, wireBytes } from './context';
import type { BuildContext } from './context';

/** What the edit touches, found once per build. */
export interface EditedRing {
  readonly classes: number;
  readonly weights: readonly number[];
  /** Nodes whose intra-node links changed (1), by node. */
  readonly intraTouched: Uint8Array;
  /** Per class, the sending nodes whose network flow (to the next node) crosses a changed NIC-side link. */
  readonly netTouched: readonly Set<number>[];
  /** Whether no unchanged leaf or spine link can bind (see the header). */
  readonly sharedSlack: boolean;
  /**
   * Per class, the sending nodes whose network flow crosses a changed leaf or spine link that could bind: those
   * flows are simulated on their whole route (and counted in netTouched), so the links they share are charged.
   */
  readonly sharedBound: readonly Set<number>[];
}

const INTRA = 0;
const SHARED = 1;
const NIC = 2;

/** The edit's reach for a forced ring, or undefined when the groups cannot be shown apart (every rank then runs). */
export function editedRing(ctx: BuildContext): EditedRing | undefined {
  const { system } = ctx;
  const { fabric, nodes, gpusPerNode: g } = system;
  const network = fabric.network;
  if (!ctx.reduceEdits || nodes < 2 || g < 2 || fabric.nicsPerNode !== g || !network || !fabric.hasSwitch) return;
  if (fabric.idealised) return undefined;
  const edits = linkEdits(system);
  if (!edits) return undefined;
  const { layout, changed } = edits;
  const links = linkTable(system.topology);
  const intraEnd = layout.nodes * layout.intraPerNode;
  const sharedEnd = intraEnd + layout.shared;
  const kindOf = (link: number): number => (link < intraEnd ? INTRA : link < sharedEnd ? SHARED : NIC);
  const nodeOf = (link: number): number =>
    link < intraEnd ? Math.floor(link / layout.intraPerNode) : Math.floor((link - sharedEnd) / layout.nicPerNode);
  const keyOf = (link: number): number =>
    link < intraEnd ? link % layout.intraPerNode : (link - sharedEnd) % layout.nicPerNode;
  // Intra-node hops (local a to a + 1) stay in their node's block on the first, second and last node.
  for (const node of [0, 1, nodes - 1]) {
    for (let a = 0; a < g; a++) {
      for (const link of fabric.route(node * g + a, node * g + ((a + 1) % g), 0))
        if (kindOf(link) !== INTRA || nodeOf(link) !== node) return undefined;
    }
  }
  // Each local GPU's sending and receiving NIC-side links, by place in the node's NIC block: no place serves two.
  const classes = Math.min(g, ctx.channels);
  const sendOwner = new Map<number, number>();
  const receiveOwner = new Map<number, number>();
  for (const [from, to] of [
    [0, 1],
    [nodes - 1, 0],
  ]) {
    for (let c = 0; c < g; c++) {
      const exit = (c + g - 1) % g;
      const parts = network.routeParts(from * g + exit, to * g + c, 0);
      for (const [part, node, own, other, local] of [
        [parts.send, from, sendOwner, receiveOwner, exit],
        [parts.receive, to, receiveOwner, sendOwner, c],
      ] as const) {
        for (const link of part) {
          if (kindOf(link) !== NIC || nodeOf(link) !== node || other.has(keyOf(link))) return undefined;
          const held = own.get(keyOf(link));
          if (held !== undefined && held !== local) return undefined;
          own.set(keyOf(link), local);
        }
      }
      if (parts.shared.length !== 2) return undefined;
      for (const link of parts.shared) if (kindOf(link) !== SHARED) return undefined;
    }
  }
  // The shared links' latencies must be alike (an unchanged network path then has one latency wherever it runs).
  const sharedLatency = layout.template[layout.intraPerNode].latencyUs;
  for (let i = intraEnd; i < sharedEnd; i++)
    if (links.latencyUs(i) !== sharedLatency || links.kind(i) !== 'network') return undefined;
  const intraTouched = new Uint8Array(nodes);
  const netTouched = Array.from({ length: classes }, () => new Set<number>());
  const sharedChanged = new Set<number>();
  for (const link of changed) {
    const kind = kindOf(link);
    if (kind === SHARED) {
      sharedChanged.add(link);
      continue;
    }
    const node = nodeOf(link);
    if (kind === INTRA) {
      intraTouched[node] = 1;
      continue;
    }
    const sender = sendOwner.get(keyOf(link));
    if (sender !== undefined && (sender + 1) % g < classes) netTouched[(sender + 1) % g].add(node);
    const receiver = receiveOwner.get(keyOf(link));
    if (receiver !== undefined && receiver < classes) netTouched[receiver].add((node + nodes - 1) % nodes);
  }
  const weights = channelClasses(ctx.channels, classes);
  const reach = { classes, weights, intraTouched, netTouched };
  const tight = tightSharedLinks(ctx, reach, intraEnd, sharedEnd);
  const sharedBound = Array.from({ length: classes }, () => new Set<number>());
  // An unchanged leaf or spine link that could bind is one of many alike: every rank's flows run (as before).
  for (const link of tight) if (!sharedChanged.has(link)) return { ...reach, sharedSlack: false, sharedBound };
  if (tight.length > 0) {
    // Changed links that could bind: the flows that cross them (each class's flow from every node, by its route)
    // form groups with them, and are simulated with every link of their route.
    const bound = new Set(tight);
    for (let c = 0; c < classes; c++) {
      for (let node = 0; node < nodes; node++) {
        const parts = network.routeParts(node * g + ((c + g - 1) % g), ((node + 1) % nodes) * g + c, 0);
        if (parts.shared.some((link) => bound.has(link))) {
          sharedBound[c].add(node);
          netTouched[c].add(node);
        }
      }
    }
  }
  return { ...reach, sharedSlack: true, sharedBound };
}

/**
 * The leaf and spine links without room for all the network flows that can cross them (at most nodesPerLeaf, one
 * rail's), each at the most its channel ceilings and its own NIC-side links allow: the links that could bind.
 */
function tightSharedLinks(
  ctx: BuildContext,
  reach: Omit<EditedRing, 'sharedSlack' | 'sharedBound'>,
  sharedStart: number,
  sharedEnd: number,
): number[] {
  const { system } = ctx;
  const network = system.fabric.network!;
  const links = linkTable(system.topology);
  const g = system.gpusPerNode;
  const cap = channelCapGBps(ctx);
  let most = 0;
  for (let c = 0; c < reach.classes; c++) {
    // The first unchanged flow of the class stands for all unchanged ones (alike links); changed ones count themselves.
    let standIn = 0;
    while (standIn < system.nodes && reach.netTouched[c].has(standIn)) standIn++;
    const senders = [...reach.netTouched[c]];
    if (standIn < system.nodes) senders.push(standIn);
    for (const node of senders) {
      const parts = network.routeParts(node * g + ((c + g - 1) % g), ((node + 1) % system.nodes) * g + c, 0);
      let own = reach.weights[c] * cap;
      for (const link of [...parts.send, ...parts.receive]) own = Math.min(own, links.GBps(link));
      most = Math.max(most, own);
    }
  }
  const copies = Math.min(network.nodesPerLeaf, system.nodes);
  const tight: number[] = [];
  for (let i = sharedStart; i < sharedEnd; i++) if (links.GBps(i) < copies * most) tight.push(i);
  return tight;
}

/**
 * The ring round of an edited system as the groups the edit touches and one stand-in of each kind, or undefined
 * when the reduction does not hold (then the caller builds every rank's flows). `every` builds those flows, for a
 * reader of `flows` (a trace or the full path never come here, but the round keeps its contract).
 */
export function editedRingRound(
  ctx: BuildContext,
  reach: EditedRing,
  payload: number,
  reduce: boolean,
  step: number,
  repeat: number,
  every: () => readonly Flow[],
): Round | undefined {
  const { system } = ctx;
  const { nodes, gpusPerNode: g } = system;
  const network = system.fabric.network!;
  if (!reach.sharedSlack) return undefined;
  // A rank's memory takes one flow of each class: with every flow at its channel ceiling it must still have room.
  const wire = wireBytes(ctx, payload);
  const memoryUse = (K.REDUCE_MEMORY_FACTOR * payload) / Math.max(wire, 1e-30);
  if (reduce && !(memoryUse * ctx.channels * channelCapGBps(ctx) <= system.hbmGBps)) return undefined;
  const { classes, weights, intraTouched, netTouched } = reach;
  const phase = reduce ? 'exchange' : 'broadcast';
  const options = (c: number) =>
    ({ weight: weights[c], channel: c, channelStride: classes, chunk: 0, phase, reduce, chargeMemory: false }) as const;
  const intraPath = (node: number, c: number, j: number): readonly number[] =>
    system.fabric.route(node * g + ((c + j) % g), node * g + ((c + j + 1) % g), 0);
  const netEnds = (node: number, c: number): [number, number] => [
    node * g + ((c + g - 1) % g),
    ((node + 1) % nodes) * g + c,
  ];
  const flows: Flow[] = [];
  // Intra-node groups: every touched node and the first untouched one.
  const intraNodes: number[] = [];
  let standIn = -1;
  for (let node = 0; node < nodes; node++) {
    if (intraTouched[node]) intraNodes.push(node);
    else if (standIn < 0) {
      standIn = node;
      intraNodes.push(node);
    }
  }
  for (const node of intraNodes) {
    for (let c = 0; c < classes; c++) {
      for (let j = 0; j + 1 < g; j++) {
        const from = node * g + ((c + j) % g);
        const to = node * g + ((c + j + 1) % g);
        flows.push(transfer(ctx, from, to, payload, { ...options(c), path: intraPath(node, c, j) }));
      }
    }
  }
  // Network flows: every touched one and, per class, the first untouched one, on their NIC-side links alone.
  const netStandIn: number[] = [];
  for (let c = 0; c < classes; c++) {
    let node = 0;
    while (node < nodes && netTouched[c].has(node)) node++;
    netStandIn.push(node);
    const senders = [...netTouched[c]].sort((a, b) => a - b);
    if (node < nodes) senders.push(node);
    for (const sender of senders) {
      const [from, to] = netEnds(sender, c);
      const parts = network.routeParts(from, to, 0);
      const path = reach.sharedBound[c].has(sender)
        ? system.fabric.route(from, to, 0)
        : [...parts.send, ...parts.receive];
      flows.push(transfer(ctx, from, to, payload, { ...options(c), path }));
    }
  }
  // The step latency, summed over every path in the order ringRound sums it.
  const pathUs = (path: readonly number[]): { us: number; net: boolean } => ({
    us: stepLatencyUs(ctx, [path]),
    net: pathClass(ctx, path) === 'net',
  });
  let latencyUs = 0;
  const interShare = (nodes - 1) / Math.max(1, system.ranks - 1);
  for (let c = 0; c < classes; c++) {
    const intraTemplate = standIn >= 0 ? Array.from({ length: g - 1 }, (_, j) => pathUs(intraPath(standIn, c, j))) : [];
    const netTemplate =
      netStandIn[c] < nodes ? pathUs(system.fabric.route(...netEnds(netStandIn[c], c), 0)) : undefined;
    const sums = { intra: 0, intraCount: 0, inter: 0, interCount: 0 };
    const add = (hop: { us: number; net: boolean }): void => {
      if (hop.net) {
        sums.inter += hop.us;
        sums.interCount++;
      } else {
        sums.intra += hop.us;
        sums.intraCount++;
      }
    };
    for (let node = 0; node < nodes; node++) {
      for (let j = 0; j + 1 < g; j++) add(intraTouched[node] ? pathUs(intraPath(node, c, j)) : intraTemplate[j]);
      add(netTouched[c].has(node) ? pathUs(system.fabric.route(...netEnds(node, c), 0)) : netTemplate!);
    }
    const { intra, intraCount, inter, interCount } = sums;
    const mean =
      interCount === 0
        ? intraCount > 0
          ? intra / intraCount
          : 0
        : intraCount === 0
          ? inter / interCount
          : (1 - interShare) * (intra / intraCount) + interShare * (inter / interCount);
    latencyUs = Math.max(latencyUs, mean);
  }
  // Every rank's byte terms, class by class (one phase: the runner reads no sums of them).
  const runs: PhaseRun[] = weights.map((w) => ({ phase, term: wire * w, count: nodes * g }));
  const maxReduceBytes = reduce ? payload : 0;
  let built: readonly Flow[] | undefined;
  return {
    get flows() {
      return (built ??= every());
    },
    packed: { set: pack(flows), runs, maxReduceBytes },
    latencyUs,
    repeat,
    phase,
    step,
  };
}

// Hierarchical: reduce-scatter inside each node, an AllReduce of each GPU's shard across nodes (one ring per
// local GPU, i.e. per rail), then all-gather inside each node. The network carries S/g per GPU instead of S.
import type { Flow, Round, Schedule } from '../sim/schedule';
import type { Phase } from '../trace/model';
import { meanStepLatencyUs, symmetricRails, transfer, type BuildContext } from './context';
import { setupUs } from './setup';
import { pack } from '../sim/packed';
import { linkTable } from '../topology/link-table';
import { editedClasses } from './edited-classes';
import { editedNodes, staysInNode, type EditedNodes } from './edited-nodes';

/** A round's ring pairs, sender and receiver by index (a list of 131,072 pairs need not be built to be read). */
interface Pairs {
  readonly count: number;
  from(index: number): number;
  to(index: number): number;
}

/**
 * One ring step of every pair. With `chosen` (an edited system), only those pairs' flows are solved: each round's
 * pairs fall into groups that share no resource (nodes inside; across nodes single pairs, or rails), and the chosen
 * pairs hold every group an edit touches and one that stands for the unchanged ones; the byte terms still count
 * every pair's.
 */
function ringStep(
  ctx: BuildContext,
  pairs: Pairs,
  payload: number,
  reduce: boolean,
  step: number,
  repeat: number,
  chosen?: readonly number[],
): Round {
  const phase: Phase = reduce ? 'exchange' : 'broadcast';
  const flowOf = (i: number): Flow =>
    transfer(ctx, pairs.from(i), pairs.to(i), payload, {
      weight: ctx.channels,
      channel: 0,
      channelStride: 1,
      chunk: 0,
      phase,
      reduce,
    });
  const everyFlow = (): Flow[] => Array.from({ length: pairs.count }, (_, i) => flowOf(i));
  const paths: (readonly number[])[] = [];
  for (let i = 0; i < pairs.count && i < 64; i++) paths.push(ctx.system.fabric.route(pairs.from(i), pairs.to(i)));
  const round = { latencyUs: meanStepLatencyUs(ctx, paths), repeat, phase, step } as const;
  if (!chosen || chosen.length === 0) return { ...round, flows: everyFlow() };
  const solved = chosen.map(flowOf);
  // Every pair's flow carries the same bytes and reduces the same payload.
  const one = solved[0];
  const runs = [{ phase, term: one.bytes * one.weight * (one.represents ?? 1), count: pairs.count }];
  let every: Flow[] | undefined;
  return {
    ...round,
    packed: { set: pack(solved), runs, maxReduceBytes: one.reduceBytes },
    get flows() {
      return (every ??= everyFlow());
    },
  };
}

/**
 * The pairs to solve on an edited system: inside nodes, the edited nodes' and a stand-in node's (edited-nodes.ts);
 * across nodes, the edited rails' and a stand-in rail's (edited-classes.ts). Undefined for a kind of pairs whose
 * groups cannot be shown apart (those are all solved).
 */
function chosenPairs(ctx: BuildContext, intra: Pairs, inter: Pairs): { intra?: number[]; inter?: number[] } {
  const { system } = ctx;
  const g = system.gpusPerNode;
  const linkCount = linkTable(system.topology).count;
  const nodes = editedNodes(system);
  let chosenIntra: number[] | undefined;
  if (nodes) {
    // The ring inside node n is pairs n·g … n·g + g − 1.
    chosenIntra = nodes.nodes.flatMap((node) => Array.from({ length: g }, (_, local) => node * g + local));
    const inNode = chosenIntra.every((i) =>
      staysInNode(nodes, system.fabric.route(intra.from(i), intra.to(i)), Math.floor(intra.from(i) / g), linkCount),
    );
    if (!inNode) chosenIntra = undefined;
  }
  const pairs = nodes ? chosenInterPairs(ctx, inter, nodes) : undefined;
  if (pairs) return { intra: chosenIntra, inter: pairs };
  const classes = editedClasses(system);
  const rails = classes ? new Set(classes.rails) : undefined;
  const railPairs = (): number[] => {
    const list: number[] = [];
    for (let i = 0; i < inter.count; i++) if (rails!.has(inter.from(i) % g)) list.push(i);
    return list;
  };
  return { intra: chosenIntra, inter: rails ? railPairs() : undefined };
}

/**
 * The ring pairs across nodes to solve, or undefined when their routes are not the layout's. With a NIC per GPU each
 * pair's flow runs alone: a rail's ring leaves each node once and enters it once, and leaves each leaf once, so no
 * two flows share a link (nor a memory: each reduces at its own receiver). A flow crosses its two nodes' NIC-side
 * links on its rail and, when the nodes hang on different leaves, the sender's leaf uplink and the receiver's leaf
 * downlink. So a pair none of whose links an edit changed finishes with every unchanged pair of its shape (within a
 * leaf, or across leaves): the touched pairs are solved with one unchanged pair of each shape.
 */
function chosenInterPairs(ctx: BuildContext, inter: Pairs, edited: EditedNodes): number[] | undefined {
  const { system } = ctx;
  const g = system.gpusPerNode;
  const network = system.fabric.network;
  if (!network || system.fabric.nicsPerNode !== g) return undefined;
  const perLeaf = network.nodesPerLeaf;
  const touched = new Set(edited.nodes.filter((node) => node !== edited.standIn));
  const changedShared = new Set(edited.sharedChanged);
  const chosen: number[] = [];
  const shapes = new Set<number>();
  for (let pair = 0; pair < inter.count; pair++) {
    const from = inter.from(pair);
    const to = inter.to(pair);
    const a = Math.floor(from / g);
    const b = Math.floor(to / g);
    const sameLeaf = Math.floor(a / perLeaf) === Math.floor(b / perLeaf);
    const nodeTouched = touched.has(a) || touched.has(b);
    // Unchanged pairs within a leaf cross no shared link: once one stands for them, they need no route.
    if (!nodeTouched && sameLeaf && shapes.has(0)) continue;
    const parts = network.routeParts(from, to, 0);
    if (parts.send.some((link) => edited.nodeOfLink(link) !== a)) return undefined;
    if (parts.receive.some((link) => edited.nodeOfLink(link) !== b)) return undefined;
    if (parts.shared.some((link) => edited.nodeOfLink(link) !== -1)) return undefined;
    if ((parts.shared.length === 0) !== sameLeaf) return undefined;
    if (nodeTouched || parts.shared.some((link) => changedShared.has(link))) chosen.push(pair);
    else if (!shapes.has(parts.shared.length)) {
      shapes.add(parts.shared.length);
      chosen.push(pair);
    }
  }
  return chosen;
}

export function buildHierarchical(ctx: BuildContext): Schedule {
  const { nodes, gpusPerNode: g } = ctx.system;
  // Nodes' reduce-scatters never meet, nor do the rails' rings when each GPU has its own NIC: one of each suffices.
  const symmetric = symmetricRails(ctx) || (ctx.representative === true && nodes === 1);
  // Every rank sends to the next GPU of its node and to its GPU on the next node; symmetric: node 0's and rail 0's.
  const intra: Pairs = {
    count: symmetric ? g : nodes * g,
    from: (i) => i,
    to: (i) => Math.floor(i / g) * g + ((i + 1) % g),
  };
  const inter: Pairs = symmetric
    ? { count: nodes, from: (i) => i * g, to: (i) => ((i + 1) % nodes) * g }
    : { count: nodes * g, from: (i) => i, to: (i) => ((Math.floor(i / g) + 1) % nodes) * g + (i % g) };
  const chosen = ctx.reduceEdits && !symmetric ? chosenPairs(ctx, intra, inter) : {};
  const C = ctx.channels;
  const rounds: Round[] = [];
  let step = 0;
  const shard = ctx.bytes / g;
  const doReduce = ctx.kind !== 'allgather';
  const doGather = ctx.kind !== 'reducescatter';
  if (g > 1 && doReduce) {
    rounds.push(ringStep(ctx, intra, shard / C, true, step, g - 1, chosen.intra));
    step += g - 1;
  }
  if (nodes > 1) {
    const piece = shard / nodes / C;
    if (doReduce) {
      rounds.push(ringStep(ctx, inter, piece, true, step, nodes - 1, chosen.inter));
      step += nodes - 1;
    }
    if (doGather) {
      rounds.push(ringStep(ctx, inter, piece, false, step, nodes - 1, chosen.inter));
      step += nodes - 1;
    }
  }
  if (g > 1 && doGather) rounds.push(ringStep(ctx, intra, shard / C, false, step, g - 1, chosen.intra));
  return { rounds, setupUs: setupUs(ctx), channels: C };
}

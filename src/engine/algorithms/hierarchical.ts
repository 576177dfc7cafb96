// Hierarchical: reduce-scatter inside each node, an AllReduce of each GPU's shard across nodes (one ring per
// local GPU, i.e. per rail), then all-gather inside each node. The network carries S/g per GPU instead of S.
import type { Flow, Round, Schedule } from '../sim/schedule';
import type { Phase } from '../trace/model';
import { meanStepLatencyUs, symmetricRails, transfer, type BuildContext } from './context';
import { setupUs } from './setup';
import { pack } from '../sim/packed';
import { linkTable } from '../topology/link-table';
import { editedClasses } from './edited-classes';
import { editedNodes, staysInNode, untouchedNodes } from './edited-nodes';
import { chosenInterPairs, type Pairs } from './hierarchical-edited';
import { resolvedLayout } from '../topology/edits';

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
 * The pairs to solve on an edited system, or on identical nodes without a NIC per GPU (`uniform`, an edit that
 * touches nothing): inside nodes, the edited nodes' and a stand-in node's (edited-nodes.ts); across nodes, the
 * touched groups and a stand-in of each kind (hierarchical-edited.ts), failing that the edited rails' and a stand-in
 * rail's (edited-classes.ts; never on identical nodes, whose links it would build). Undefined for a kind of pairs
 * whose groups cannot be shown apart (those are all solved).
 */
function chosenPairs(
  ctx: BuildContext,
  intra: Pairs,
  inter: Pairs,
  uniform: boolean,
): { intra?: number[]; inter?: number[] } {
  const { system } = ctx;
  const g = system.gpusPerNode;
  const linkCount = linkTable(system.topology).count;
  const layout = uniform ? resolvedLayout(system.fabric) : undefined;
  const nodes = uniform ? layout && untouchedNodes(layout) : editedNodes(system);
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
  if (pairs || uniform) return { intra: chosenIntra, inter: pairs };
  const classes = editedClasses(system);
  const rails = classes ? new Set(classes.rails) : undefined;
  const railPairs = (): number[] => {
    const list: number[] = [];
    for (let i = 0; i < inter.count; i++) if (rails!.has(inter.from(i) % g)) list.push(i);
    return list;
  };
  return { intra: chosenIntra, inter: rails ? railPairs() : undefined };
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
  // Identical nodes without a NIC per GPU are not symmetric: their groups are found as an edited system's are.
  const uniform = ctx.representative === true && nodes > 1;
  const chosen = (ctx.reduceEdits || uniform) && !symmetric ? chosenPairs(ctx, intra, inter, uniform) : {};
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

// A ring round folded onto one node. On identical nodes with a NIC per GPU, shifting every rank by one node maps
// the ring's flows onto themselves and every node's links onto the next node's, so the max-min fair rates (unique,
// hence invariant under that shift) are the same on every node. Node 0's flows then stand for all: its intra-node
// flows as they are, and for each channel class the flow that leaves node 0 for node 1 with its receiving end
// replaced by node 0's own (the flow that arrives from the last node), so every link of node 0 carries exactly the
// flows its copies on the other nodes carry. The solver's work no longer grows with the node count.
//
// Leaf and spine links are the one thing the shift does not map onto itself (a leaf serves a block of nodes, and
// the last leaf may be partly filled), so the fold is taken only when they cannot bind: each carries at most
// nodesPerLeaf copies of a class's flow, and its capacity covers that many copies at the rate the flow's own node
// links allow. Removing a constraint that the unconstrained solution already meets leaves the max-min solution
// unchanged, so the folded round times exactly what the per-rank round does.
import type { Flow, Round } from '../sim/schedule';
import { linkTable } from '../topology/link-table';
import { channelClasses, meanStepLatencyUs, symmetricRails, transfer, type BuildContext } from './context';

/** The ring round on node 0 alone, or undefined when the system does not allow the fold. */
export function foldedRingRound(
  ctx: BuildContext,
  payload: number,
  reduce: boolean,
  step: number,
  repeat: number,
): Round | undefined {
  const { system } = ctx;
  const network = system.fabric.network;
  const g = system.gpusPerNode;
  // With one GPU per node a class's flow may stay under one leaf or climb to the spine depending on the node, so
  // nodes' step latencies differ; with a NIC per GPU and two or more GPUs every class changes rail between nodes.
  if (!symmetricRails(ctx) || !network || g < 2 || system.fabric.idealised) return undefined;
  const links = linkTable(system.topology);
  const classes = Math.min(g, ctx.channels);
  const weights = channelClasses(ctx.channels, classes);
  const copiesPerSharedLink = Math.min(network.nodesPerLeaf, system.nodes);
  const lastNode = (system.nodes - 1) * g;
  const phase = reduce ? 'exchange' : 'broadcast';
  const flows: Flow[] = [];
  let latencyUs = 0;
  for (let c = 0; c < weights.length; c++) {
    // Class c enters every node at local GPU c and leaves it from GPU c − 1 (see ringOrders); it crosses the
    // network on NIC slot 0 (ringNicSlot: c < g here).
    const opts = { weight: weights[c], channel: c, channelStride: weights.length, chunk: 0, phase, reduce } as const;
    const paths: (readonly number[])[] = [];
    for (let j = 0; j + 1 < g; j++) {
      const from = (c + j) % g;
      const to = (c + j + 1) % g;
      const path = system.fabric.route(from, to, 0);
      flows.push({ ...transfer(ctx, from, to, payload, { ...opts, path }), represents: system.nodes });
      paths.push(path);
    }
    const exit = (c + g - 1) % g;
    const leaving = network.routeParts(exit, g + c, 0);
    const arriving = network.routeParts(lastNode + exit, c, 0);
    const folded = [...leaving.send, ...arriving.receive];
    let ownLinkGBps = Infinity;
    for (const link of folded) ownLinkGBps = Math.min(ownLinkGBps, links.GBps(link));
    for (const link of leaving.shared) if (links.GBps(link) < copiesPerSharedLink * ownLinkGBps) return undefined;
    const flow = transfer(ctx, exit, c, payload, { ...opts, path: folded });
    // Drawn as sent to node 1 and received from the last node, both on node 0, so that node 0's lanes hold all
    // of one node's spans and every other node is drawn from them (trace/mirror.ts).
    flows.push({ ...flow, peer: g + c, reducedAt: { rank: c, from: lastNode + exit }, represents: system.nodes });
    // Latency is priced on the whole route, switches included: every node's crossing has the same hops.
    paths.push(system.fabric.route(exit, g + c, 0));
    latencyUs = Math.max(latencyUs, meanStepLatencyUs(ctx, paths));
  }
  return { flows, latencyUs, repeat, phase, step };
}

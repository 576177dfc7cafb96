// A PAT round on identical nodes whose leaf or spine links can bind (an oversubscribed network), folded onto one
// leaf. pat-edited.ts splits a round into its senders' groups only where every shared link is slack; a binding
// uplink ties a leaf's senders together, and a binding downlink ties them to the senders of the leaves sending into
// it, so the round is one component across every leaf. What it does have is a symmetry: when every leaf holds the
// same number of nodes, shifting every rank by one leaf's nodes maps each round (rank r sends to r ± distance, modulo
// the ranks) onto itself, every node link onto the same place of the shifted node, and each leaf's uplink and
// downlink onto the next leaf's, with the same capacities (resolution lays every node and leaf out from one spec).
//
// Why one leaf stands for all. The max-min rates of a round are unique, so the shift leaves them unchanged: every
// orbit of flows (a sender of leaf 0 and its shifted copies) runs at one rate, and at every later step of the filling
// (flows that finish free their share) the orbits still finish together. A resource's load is then its orbit's flows'
// rates summed, once per copy of the resource each flow of leaf 0 crosses; here each flow crosses every orbit at
// most once (its sender's send side, its receiver's receive side and memory, one uplink and one downlink). So the
// round with leaf 0's senders only, each receiving side moved to the node of leaf 0 at the same place in its leaf
// and each downlink moved to leaf 0's, has the same rates and finish times: it is the whole round divided by the
// shift. This is exact in real arithmetic; the two may add the same terms in another order, so they agree to rounding.
import type { Flow, PhaseRun, Round } from '../sim/schedule';
import { pack } from '../sim/packed';
import type { Phase } from '../trace/model';
import { resolvedLayout } from '../topology/edits';
import { transfer, wireBytes, type BuildContext } from './context';
import { nodeOfLinkIn } from './edited-nodes';

/** A leaf or spine link's role in the routes (pat-edited.ts lists the changed ones that could bind). */
export interface BoundLink {
  readonly link: number;
  /** The leaf whose uplink (up) or downlink (down) it is. */
  readonly leaf: number;
  readonly up: boolean;
  /** The channel classes whose routes cross it. */
  readonly classes: readonly number[];
}

/**
 * The round at `distance` with leaf 0's senders only (see the header), or undefined when a route does not follow the
 * layout (the caller then runs every rank's flows). `roles` names every shared link's leaf and direction.
 */
export function foldedPatRound(
  ctx: BuildContext,
  roles: readonly BoundLink[],
  weights: readonly number[],
  round: PatRoundShape,
  every: () => readonly Flow[],
): Round | undefined {
  const { system } = ctx;
  const n = system.nodes;
  const network = system.fabric.network!;
  const layout = resolvedLayout(system.fabric);
  if (!layout) return undefined;
  const nodeOfLink = nodeOfLinkIn(layout);
  const intraEnd = layout.nodes * layout.intraPerNode;
  const perLeaf = network.nodesPerLeaf;
  const { distance, gather, payload } = round;
  const peerOf = (sender: number): number => (gather ? (sender + distance) % n : (sender - distance + n) % n);
  const role = new Map(roles.map((r) => [r.link, r]));
  const phase: Phase = gather ? 'broadcast' : 'exchange';
  const flows: Flow[] = [];
  for (let c = 0; c < weights.length; c++) {
    const options = { weight: weights[c], channel: c, channelStride: weights.length, chunk: 0, phase, reduce: !gather };
    // Leaf 0's downlink on this class's rail: what every downlink of the rail is moved to.
    const down = role.get(network.routeParts(perLeaf, 0, c).shared[1]);
    if (!down || down.up || down.leaf !== 0) return undefined;
    for (let sender = 0; sender < perLeaf; sender++) {
      const peer = peerOf(sender);
      const leaf = Math.floor(peer / perLeaf);
      const moved = peer - leaf * perLeaf;
      const parts = network.routeParts(sender, peer, c);
      const path: number[] = [];
      for (const link of parts.send) {
        if (nodeOfLink(link) !== sender) return undefined;
        path.push(link);
      }
      if (parts.shared.length > 0) {
        const up = role.get(parts.shared[0]);
        const into = role.get(parts.shared[1]);
        if (parts.shared.length !== 2 || !up?.up || up.leaf !== 0 || !into || into.up || into.leaf !== leaf)
          return undefined;
        path.push(up.link, down.link);
      } else if (leaf !== 0) return undefined;
      // The receiving side's links at the same places on the node of leaf 0 (a node's intra-node block and its
      // NIC-side block each move by a constant stride).
      for (const link of parts.receive) {
        const stride = link < intraEnd ? layout.intraPerNode : layout.nicPerNode;
        const place = link - (peer - moved) * stride;
        if (nodeOfLink(link) !== peer || nodeOfLink(place) !== moved) return undefined;
        path.push(place);
      }
      flows.push(transfer(ctx, sender, moved, payload, { ...options, path }));
    }
  }
  return standInRound(ctx, weights, round, flows, every);
}

/** The round a PAT step's shape describes. */
export interface PatRoundShape {
  distance: number;
  gather: boolean;
  payload: number;
  latencyUs: number;
  step: number;
}

/**
 * A round whose simulated flows stand for every node's (folded or edited): the byte terms count all of the system's
 * ranks, class by class (one phase: the runner reads no sums of them), and every rank's flows are built only for a
 * reader of `flows`.
 */
export function standInRound(
  ctx: BuildContext,
  weights: readonly number[],
  round: PatRoundShape,
  flows: readonly Flow[],
  every: () => readonly Flow[],
): Round {
  const { gather, payload } = round;
  const phase: Phase = gather ? 'broadcast' : 'exchange';
  const wire = wireBytes(ctx, payload);
  const runs: PhaseRun[] = weights.map((w) => ({ phase, term: wire * w, count: ctx.system.nodes }));
  let built: readonly Flow[] | undefined;
  return {
    get flows() {
      return (built ??= every());
    },
    packed: { set: pack(flows), runs, maxReduceBytes: gather ? 0 : payload },
    latencyUs: round.latencyUs,
    repeat: 1,
    phase,
    step: round.step,
  };
}

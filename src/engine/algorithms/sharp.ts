// In-network reduction (InfiniBand SHARP): the switches reduce what the nodes send and return the result, so each
// byte of a node's share crosses its NIC once each way, whatever the node count, where a ring sends 2(N−1)/N of
// it and a tree up to twice. A streaming aggregation tree follows the fat tree: every leaf switch reduces its
// nodes' streams and, when a rail spans several leaves, sends one stream up to the spine and gets one back.
import type { Flow } from '../sim/schedule';
import type { System } from '../topology/model';
import { transfer, type BuildContext } from './context';

/** A head GPU's way to its rail's leaf switch and back, as link indices, and the leaf's vertex id. */
interface SharpLeg {
  readonly up: readonly number[];
  readonly down: readonly number[];
  readonly leaf: string;
}

function networkLinks(system: System, route: readonly number[]): number[] {
  const links = system.topology.links;
  return route.filter((l) => l < links.length && links[l].kind === 'network');
}

/**
 * The links from a rank's GPU through its NIC (slot `slot`) up to the leaf switch, and from that leaf back down to
 * it. They are read off the route to the same local GPU on the next node, which leaves by that NIC and leaf, and
 * off the route back, which enters by them.
 */
export function sharpLeg(system: System, rank: number, slot: number): SharpLeg {
  const g = system.gpusPerNode;
  const peer = (rank + g) % system.ranks;
  const links = system.topology.links;
  const out = system.fabric.route(rank, peer, slot);
  const firstNetwork = out.findIndex((l) => links[l].kind === 'network');
  const leaf = links[out[firstNetwork]].to;
  const back = system.fabric.route(peer, rank, slot);
  const fromLeaf = back.findIndex((l) => links[l].from === leaf);
  return { up: out.slice(0, firstNetwork + 1), down: back.slice(fromLeaf), leaf };
}

/**
 * A leaf's uplink to the spine and downlink from it on one rail: the second and third network links of a route
 * from a node under that leaf to a node under another leaf.
 */
export function leafSpineLinks(system: System, rank: number, otherRank: number, slot: number): number[] {
  const out = networkLinks(system, system.fabric.route(rank, otherRank, slot));
  const back = networkLinks(system, system.fabric.route(otherRank, rank, slot));
  return [out[1], back[2]];
}

export interface SharpHead {
  /** Local GPU that sends its shard to the switches and receives the result. */
  readonly local: number;
  /** NIC slot among the GPU's NICs (fabric.gpuNics) its stream uses. */
  readonly slot: number;
  /** Payload of one channel copy in this round, bytes. */
  readonly payload: number;
  readonly weight: number;
  readonly channel: number;
  readonly channelStride: number;
}

/** What every flow of a head carries besides its path: the head's channel class, as an unreduced exchange. */
export function headOptions(head: SharpHead) {
  return {
    weight: head.weight,
    channel: head.channel,
    channelStride: head.channelStride,
    chunk: 0,
    phase: 'exchange' as const,
    reduce: false,
  };
}

export interface SharpStage {
  readonly flows: Flow[];
  /** One way up and back per head (for the stage's latency). */
  readonly paths: (readonly number[])[];
}

/**
 * The network stage of a SHARP reduction: each head of each node streams its shard up to its leaf and reads the
 * reduced shard back (one flow over both directions, as the switches stream); each leaf of a rail that spans
 * several leaves streams one aggregate to the spine and back. On the fast path (identical nodes) node 0 and the
 * first leaf stand for all: nodes never share a link below their leaf, and leaves share only the spine, which has
 * no capacity of its own.
 */
export function sharpStage(ctx: BuildContext, heads: readonly SharpHead[]): SharpStage {
  const { system } = ctx;
  const g = system.gpusPerNode;
  const built = ctx.representative ? 1 : system.nodes;
  const flows: Flow[] = [];
  const paths: (readonly number[])[] = [];
  for (const head of heads) {
    const opts = headOptions(head);
    // The leaves this head's rail spans, each with the first node under it.
    const leaves = new Map<string, number>();
    for (let node = 0; node < system.nodes; node++) {
      const leg = sharpLeg(system, node * g + head.local, head.slot);
      if (!leaves.has(leg.leaf)) leaves.set(leg.leaf, node);
      if (node >= built) continue;
      const rank = node * g + head.local;
      const path = [...leg.up, ...leg.down];
      flows.push(transfer(ctx, rank, rank, head.payload, { ...opts, path, represents: system.nodes / built }));
      if (paths.length < heads.length) paths.push(path);
    }
    if (leaves.size < 2) continue;
    const firsts = [...leaves.values()];
    const aggregated = ctx.representative ? firsts.slice(0, 1) : firsts;
    for (const node of aggregated) {
      const other = firsts.find((n) => n !== node)!;
      const rank = node * g + head.local;
      const path = leafSpineLinks(system, rank, other * g + head.local, head.slot);
      flows.push(
        transfer(ctx, rank, rank, head.payload, { ...opts, path, represents: leaves.size / aggregated.length }),
      );
    }
  }
  return { flows, paths };
}

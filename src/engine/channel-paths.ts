// The rings and trees each channel runs on, as the simulator's schedule builders lay them out, in terms of the
// topology's vertex ids, so the topology panel can overlay them. Nothing here builds a second ring or tree: the
// orders and parents come from the same functions the builders call (ringOrders, treeParents, binaryTreeParent),
// and channel i belongs to class i mod (number of classes), as the simulator spreads a flow's copies.
import type { BuildContext } from './algorithms/context';
import { collNetHeads } from './algorithms/collnet';
import { ringOrders } from './algorithms/ring';
import { sharpLeg } from './algorithms/sharp';
import { binaryTreeParent, treeParents, treeRail, treeRotations } from './algorithms/tree';
import { channelsFor } from './channels';
import { DTYPE_BYTES, type Algorithm, type CollectiveRequest, type Protocol } from './collective-types';
import { EngineError } from './errors';
import { choose } from './simulate';
import type { System } from './topology/model';
import { resolveSystem } from './topology/resolve';
import type { SystemSpec } from './topology/spec';

/**
 * One channel's communication pattern. `edges` are directed sender → receiver pairs between GPU vertex ids (for
 * trees parent → child, i.e. the broadcast direction; for NVLS the NVSwitch is the parent of its node's GPUs).
 * Edges are logical neighbours: a hop that NCCL routes through an NVSwitch, PCIe switches or NICs is one edge.
 * `vertices` lists the GPUs in ring order (rings) or from the root down (trees).
 */
export interface ChannelPath {
  readonly channel: number;
  /** 'mesh' is the one-shot algorithm, where every GPU sends to every other. */
  readonly kind: 'ring' | 'tree' | 'mesh';
  readonly vertices: readonly string[];
  readonly edges: readonly (readonly [string, string])[];
}

/** What channelPaths chose, with the paths: the same algorithm, protocol and channel count the simulator runs. */
export interface ChannelPlan {
  readonly algorithm: Algorithm;
  readonly protocol: Protocol;
  readonly channels: number;
  readonly paths: readonly ChannelPath[];
}

type Edge = readonly [string, string];

function asSystem(system: SystemSpec | System): System {
  return 'topology' in system && 'fabric' in system ? system : resolveSystem(system);
}

/** GPU vertex id of every rank: builders add each node's GPUs in local order, node after node. */
function gpuIds(system: System): string[] {
  const ids = system.topology.vertices.filter((v) => v.kind === 'gpu').map((v) => v.id);
  if (ids.length !== system.ranks)
    throw new EngineError(`topology of ${system.label} has ${ids.length} GPUs for ${system.ranks} ranks`);
  return ids;
}

/** Orders vertices from the roots down (breadth first), so a tree's list starts at its root. */
function rootFirst(ids: readonly string[], edges: readonly Edge[]): string[] {
  const children = new Map<string, string[]>();
  const hasParent = new Set<string>();
  for (const [parent, child] of edges) {
    const list = children.get(parent) ?? [];
    list.push(child);
    children.set(parent, list);
    hasParent.add(child);
  }
  const queue = [...new Set(edges.map(([p]) => p))].filter((v) => !hasParent.has(v));
  const seen = new Set<string>();
  const out: string[] = [];
  while (queue.length > 0) {
    const v = queue.shift()!;
    if (seen.has(v)) continue;
    seen.add(v);
    out.push(v);
    queue.push(...(children.get(v) ?? []));
  }
  for (const id of ids) if (!seen.has(id)) out.push(id);
  return out;
}

/** Patterns per channel class; channel i uses class i mod classes.length. */
function classPatterns(ctx: BuildContext, ids: readonly string[]): ChannelPath[] {
  const { system } = ctx;
  const g = system.gpusPerNode;
  const n = system.ranks;
  switch (ctx.algorithm) {
    case 'ring': {
      // ringRound spreads the channels over min(orders, channels) classes.
      const all = ringOrders(ctx);
      const orders = all.slice(0, Math.max(1, Math.min(ctx.channels, all.length)));
      return orders.map((order, c) => ({
        channel: c,
        kind: 'ring',
        vertices: order.map((r) => ids[r]),
        edges: n > 1 ? order.map((r, i) => [ids[r], ids[order[(i + 1) % order.length]]] as const) : [],
      }));
    }
    case 'tree': {
      const rotations = treeRotations(ctx);
      const trees = n > 2 ? 2 : 1;
      const classes = Math.max(1, Math.min(trees * rotations, ctx.channels));
      return Array.from({ length: classes }, (_, c) => {
        const parent = treeParents(ctx, c % trees, treeRail(ctx, Math.floor(c / trees)).head);
        const edges: Edge[] = [];
        for (let r = 0; r < n; r++) if (parent[r] >= 0) edges.push([ids[parent[r]], ids[r]]);
        return { channel: c, kind: 'tree', vertices: rootFirst(ids, edges), edges };
      });
    }
    case 'collnetdirect':
    case 'collnetchain': {
      // The network's switches are the root: each node's head hangs off its leaf, and the node's other GPUs off the
      // head (Direct) or one after another down the chain (Chain).
      return collNetHeads(ctx).map(({ head, slot }, c) => {
        const edges: Edge[] = [];
        for (let node = 0; node < system.nodes; node++) {
          const root = node * g + head;
          edges.push([sharpLeg(system, root, slot).leaf, ids[root]]);
          for (let j = 1; j < g; j++) {
            const parent = ctx.algorithm === 'collnetdirect' ? root : node * g + ((head + j - 1) % g);
            edges.push([ids[parent], ids[node * g + ((head + j) % g)]]);
          }
        }
        return { channel: c, kind: 'tree', vertices: rootFirst(ids, edges), edges };
      });
    }
    case 'nvls':
    case 'nvlstree': {
      const links = system.topology.links;
      const switchOf = (rank: number): string => links[system.fabric.switchUplink(rank)].to;
      const trees = system.nodes > 1 ? 2 : 1;
      const classes = Math.max(1, Math.min(trees, ctx.channels));
      return Array.from({ length: classes }, (_, c) => {
        const edges: Edge[] = [];
        for (let r = 0; r < n; r++) edges.push([switchOf(r), ids[r]]);
        // Across nodes each local GPU's shard goes up and down a binary tree over the nodes.
        if (system.nodes > 1 && ctx.kind === 'allreduce') {
          for (let node = 0; node < system.nodes; node++) {
            const up = binaryTreeParent(node, system.nodes, c);
            if (up >= 0)
              for (let local = 0; local < g; local++) edges.push([ids[up * g + local], ids[node * g + local]]);
          }
        }
        return { channel: c, kind: 'tree', vertices: rootFirst(ids, edges), edges };
      });
    }
    case 'hierarchical': {
      // Rings of each node's GPUs, then a ring per rail across the nodes (buildHierarchical's pairs).
      const edges: Edge[] = [];
      for (let r = 0; r < n; r++) {
        const node = Math.floor(r / g);
        const local = r % g;
        if (g > 1) edges.push([ids[r], ids[node * g + ((local + 1) % g)]]);
        if (system.nodes > 1) edges.push([ids[r], ids[((node + 1) % system.nodes) * g + local]]);
      }
      return [{ channel: 0, kind: 'ring', vertices: [...ids], edges }];
    }
    case 'direct': {
      const edges: Edge[] = [];
      for (let a = 0; a < n; a++) for (let b = 0; b < n; b++) if (a !== b) edges.push([ids[a], ids[b]]);
      return [{ channel: 0, kind: 'mesh', vertices: [...ids], edges }];
    }
    case 'pat': {
      // Every round's partner: the rank at each power-of-two distance.
      const edges: Edge[] = [];
      for (let distance = 1; distance < n; distance *= 2)
        for (let r = 0; r < n; r++) edges.push([ids[r], ids[(r + distance) % n]]);
      return [{ channel: 0, kind: 'mesh', vertices: [...ids], edges }];
    }
  }
}

/**
 * The ring or tree of every channel for the collective the simulator would run for `request` (the engine's own
 * choice of algorithm and protocol unless the request fixes them).
 */
export function channelPlan(system: SystemSpec | System, request: CollectiveRequest): ChannelPlan {
  const resolved = asSystem(system);
  const bytes = request.bytes;
  if (!(bytes >= 0) || !Number.isFinite(bytes))
    throw new EngineError(`bytes must be a non-negative number, got ${bytes}`);
  const kind = request.kind ?? 'allreduce';
  const dtype = request.dtype ?? 'fp32';
  if (!(dtype in DTYPE_BYTES)) throw new EngineError(`unknown dtype '${dtype}'`);
  const pick = choose(resolved, kind, bytes, dtype, request.algorithm ?? 'auto', request.protocol ?? 'auto', {
    ncclProtoSet: request.ncclProtoSet,
  });
  const channels = channelsFor(resolved, pick.algorithm, pick.protocol, bytes);
  const ctx: BuildContext = {
    system: resolved,
    algorithm: pick.algorithm,
    kind,
    bytes,
    protocol: pick.protocol,
    channels,
  };
  const patterns = classPatterns(ctx, gpuIds(resolved));
  const paths = Array.from({ length: channels }, (_, channel) => ({ ...patterns[channel % patterns.length], channel }));
  return { algorithm: pick.algorithm, protocol: pick.protocol, channels, paths };
}

/** The per-channel rings or trees alone; see channelPlan. */
export function channelPaths(system: SystemSpec | System, request: CollectiveRequest): ChannelPath[] {
  return [...channelPlan(system, request).paths];
}

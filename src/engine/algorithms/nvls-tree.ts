// NVLSTree's trees across nodes: each local GPU's reduced shard goes up a binary tree over the nodes (one tree per
// channel class) and comes back down. A stage is one depth of the trees, up or down; the stages run one after the
// other for the first chunk and all at once in the pipeline's steady round.
//
// On identical nodes with a NIC per GPU one rail (local GPU 0) stands for all, but that rail's trees still have a
// flow per node: 65 k flows at 16,384 nodes; an edited system has a flow per GPU. The stages are packed straight
// into the solver's typed arrays (the same numbers transfer() and pack() would give: the packing test compares
// them), and the Flow objects are built only when a trace or the full path reads them.
import * as K from '../constants';
import type { FlowSet } from '../sim/maxmin';
import type { PhaseRun } from '../sim/packed';
import { memoryResource } from '../sim/run';
import type { Flow } from '../sim/schedule';
import type { ClassProof } from '../sim/shown-round';
import { linkTable } from '../topology/link-table';
import type { System } from '../topology/model';
import { channelCapGBps, transfer, wireBytes, type BuildContext } from './context';
import { nvlsTreeClassProof } from './nvls-tree-classes';
import { depthMembers, treeShapes, type DepthMembers } from './nvls-tree-shape';
import { pricedStages, type Stage } from './pipeline';

/**
 * The tree stages, reduction (deepest first) then broadcast (shallowest first). `symmetric`: local GPU 0 stands for
 * every local GPU (its flows represent g each); `rails` (an edited system, see edited-classes.ts): only these local
 * GPUs' flows are solved, though the byte terms count every local GPU's; either way the stages are packed.
 */
export function nvlsTreeStages(
  ctx: BuildContext,
  weights: readonly number[],
  chunk: number,
  symmetric: boolean,
  rails?: readonly number[],
): Stage[] {
  const { system } = ctx;
  const g = system.gpusPerNode;
  const shapes = treeShapes(system.nodes, weights.length);
  // Which members cross leaves matters only on the fast path's sample paths; one node a leaf otherwise.
  const members = depthMembers(shapes, system.fabric.network?.nodesPerLeaf ?? system.nodes);
  /** Route of each member's up flow (local GPU 0) at depth d, made when first read. */
  const routes: (readonly (readonly number[])[])[] = [];
  const pathsOf = (d: number): readonly (readonly number[])[] =>
    (routes[d - 1] ??= Array.from(members[d - 1].nodes, (node, i) =>
      system.fabric.route(node * g, shapes[members[d - 1].trees[i]].parent[node] * g),
    ));
  const represents = symmetric ? g : 1;
  const payload = chunk / g;
  /** Every flow of one depth and direction, as transfer() builds them. */
  const flowsOf = (d: number, up: boolean): Flow[] => {
    const flows: Flow[] = [];
    const { trees, nodes } = members[d - 1];
    for (let i = 0; i < trees.length; i++) {
      const c = trees[i];
      const opts = {
        weight: weights[c],
        channel: c,
        channelStride: weights.length,
        chunk: 0,
        phase: up ? ('exchange' as const) : ('broadcast' as const),
        reduce: up,
        represents,
      };
      for (let local = 0; local < (symmetric ? 1 : g); local++) {
        const child = nodes[i] * g + local;
        const parent = shapes[c].parent[nodes[i]] * g + local;
        flows.push(up ? transfer(ctx, child, parent, payload, opts) : transfer(ctx, parent, child, payload, opts));
      }
    }
    return flows;
  };
  // The local GPUs whose flows are packed: GPU 0 for all, the chosen rails, or every one.
  const locals = symmetric ? [0] : (rails ?? Array.from({ length: g }, (_, l) => l));
  const depth = members.length;
  const order = [
    ...Array.from({ length: depth }, (_, i) => depth - i),
    ...Array.from({ length: depth }, (_, i) => i + 1),
  ];
  // On identical nodes the rounds are timed from classes of their flows (nvls-tree-classes.ts), and each stage's
  // latency from one path within a leaf and one across leaves, where every such path is alike.
  const proof = symmetric ? classProof(ctx, members, shapes, weights, payload, order, depth) : undefined;
  const latencyPaths = proof ? samplePaths(system, members, shapes) : undefined;
  return pricedStages(
    ctx,
    order.map((d, i) => {
      const up = i < depth;
      const phase = up ? ('exchange' as const) : ('broadcast' as const);
      const stage = (latencyUs: number): Stage => {
        let built: Flow[] | undefined;
        let set: FlowSet | undefined;
        const terms = depthTerms(ctx, members[d - 1], weights, payload, up, symmetric);
        const packFlows = (): FlowSet =>
          packDepth(ctx, members[d - 1], shapes, weights, payload, up, locals, symmetric, () => pathsOf(d));
        return {
          get flows() {
            return (built ??= flowsOf(d, up));
          },
          packed: {
            get set() {
              return (set ??= packFlows());
            },
            ...terms,
            ...(proof ? { shown: { proof, parts: [i] } } : {}),
          },
          phase,
          latencyUs,
        };
      };
      return { paths: latencyPaths?.[d - 1] ?? pathsOf(d), stage };
    }),
  );
}

/** The class proof of this run's tree rounds, when the layout allows it (see nvls-tree-classes.ts). */
function classProof(
  ctx: BuildContext,
  members: readonly DepthMembers[],
  shapes: readonly { parent: Int32Array }[],
  weights: readonly number[],
  payload: number,
  order: readonly number[],
  depth: number,
): ClassProof | undefined {
  const { system } = ctx;
  const wire = wireBytes(ctx, payload);
  return nvlsTreeClassProof(
    system,
    members,
    shapes.map((s) => s.parent),
    order.map((d, i) => ({ depth: d, up: i < depth })),
    {
      wireBytes: wire,
      capRate: channelCapGBps(ctx) * 1e3,
      weights,
      memoryCoefficient: system.fabric.idealised ? 0 : (K.REDUCE_MEMORY_FACTOR * payload) / Math.max(wire, 1e-30),
    },
  );
}

/**
 * Per depth, the up route of the first member within a leaf and of the first across leaves: every path of a kind
 * crosses links of the same latencies in the same order when the nodes are identical and every leaf's uplink and
 * downlink alike (checked here), so the stage's latency, the largest over its paths, is the largest over these.
 * Undefined when the leaves' links differ.
 */
function samplePaths(
  system: System,
  members: readonly DepthMembers[],
  shapes: readonly { parent: Int32Array }[],
): (readonly number[])[][] | undefined {
  const network = system.fabric.network!;
  const g = system.gpusPerNode;
  const perLeaf = network.nodesPerLeaf;
  const links = linkTable(system.topology);
  const leaves = Math.ceil(system.nodes / perLeaf);
  const alike = (a: number, b: number): boolean =>
    links.latencyUs(a) === links.latencyUs(b) && links.kind(a) === links.kind(b);
  const first = leaves > 1 ? network.routeParts(0, perLeaf * g, 0).shared : [];
  for (let l = 0; l < leaves && leaves > 1; l++) {
    const other = (l === 0 ? perLeaf : 0) * g;
    const up = network.routeParts(l * perLeaf * g, other, 0).shared;
    const down = network.routeParts(other, l * perLeaf * g, 0).shared;
    if (first.length !== 2 || up.length !== 2 || down.length !== 2) return undefined;
    if (!alike(up[0], first[0]) || !alike(down[1], first[1])) return undefined;
  }
  // The first member of each kind, in member order, as a walk over the members would meet them.
  return members.map(({ trees, nodes, firstWithin, firstAcross }) =>
    [firstWithin, firstAcross]
      .filter((i) => i >= 0)
      .sort((a, b) => a - b)
      .map((i) => system.fabric.route(nodes[i] * g, shapes[trees[i]].parent[nodes[i]] * g)),
  );
}

/** What the runner reads of one depth's flows besides the flows: their byte terms and the largest reduction. */
function depthTerms(
  ctx: BuildContext,
  members: DepthMembers,
  weights: readonly number[],
  payload: number,
  up: boolean,
  symmetric: boolean,
): { runs: PhaseRun[]; maxReduceBytes: number } {
  const g = ctx.system.gpusPerNode;
  const represents = symmetric ? g : 1;
  const termsPerMember = symmetric ? 1 : g;
  const wire = wireBytes(ctx, payload);
  const phase = up ? ('exchange' as const) : ('broadcast' as const);
  // The members' terms in order, one run per tree (members are grouped by tree), joined where two trees' are equal.
  const runs: { phase: PhaseRun['phase']; term: number; count: number }[] = [];
  members.perTree.forEach((count, c) => {
    if (count === 0) return;
    const term = wire * weights[c] * represents;
    const last = runs[runs.length - 1];
    if (last && last.term === term) last.count += count * termsPerMember;
    else runs.push({ phase, term, count: count * termsPerMember });
  });
  const reduce = up && !ctx.system.fabric.idealised;
  return { runs, maxReduceBytes: reduce && members.trees.length > 0 ? payload : 0 };
}

/**
 * One depth's flows packed as pack(flowsOf(...)) would pack them, but only those of `locals`: local GPU 0's, standing
 * for every local GPU, when `symmetric`, else the given local GPUs' in turn (an edited system runs node by node, or
 * its chosen rails, and its tens of thousands of flows are packed without a Flow object each as well). The byte
 * terms (depthTerms) are every flow's that flowsOf builds: one per member when symmetric, else one per member and
 * local GPU.
 */
function packDepth(
  ctx: BuildContext,
  members: DepthMembers,
  shapes: readonly { parent: Int32Array }[],
  weights: readonly number[],
  payload: number,
  up: boolean,
  locals: readonly number[],
  symmetric: boolean,
  upPaths: () => readonly (readonly number[])[],
): FlowSet {
  const { system } = ctx;
  const g = system.gpusPerNode;
  const perMember = locals.length;
  const { trees, nodes } = members;
  const n = trees.length * perMember;
  // As transfer(): the receiver's memory is charged for a reduction, off the idealised fabric.
  const reduce = up && !system.fabric.idealised;
  const wire = wireBytes(ctx, payload);
  const memoryCoefficient = (K.REDUCE_MEMORY_FACTOR * payload) / Math.max(wire, 1e-30);
  const capRate = channelCapGBps(ctx) * 1e3;
  // memoryResource(system, rank) is this base plus the rank.
  const memoryBase = memoryResource(system, 0);
  // Going up on identical nodes, each flow's route is its member's up route (child to parent, local GPU 0); an
  // edited system routes every local GPU itself.
  const reuse = up && symmetric;
  const routes: (readonly number[])[] = reuse ? [...upPaths()] : [];
  let entries = 0;
  for (let i = 0; i < trees.length; i++) {
    for (let j = 0; j < perMember; j++) {
      if (!reuse) {
        const child = nodes[i] * g + locals[j];
        const parent = shapes[trees[i]].parent[nodes[i]] * g + locals[j];
        // Two conditionals rather than destructuring a pair: this runs once per flow, mostly before the optimising
        // compiler has seen it, where a destructured array literal costs an allocation and an iterator.
        const from = up ? child : parent;
        const to = up ? parent : child;
        routes.push(symmetric ? system.fabric.route(from, to) : routeOnce(system, from, to));
      }
      entries += routes[i * perMember + j].length + (reduce ? 1 : 0);
    }
  }
  const set: FlowSet = {
    count: n,
    bytes: new Float64Array(n).fill(wire),
    weight: new Float64Array(n),
    capRate: new Float64Array(n).fill(capRate),
    start: new Int32Array(n + 1),
    resource: new Int32Array(entries),
    coefficient: new Float64Array(entries).fill(1),
  };
  let k = 0;
  for (let f = 0; f < n; f++) {
    const i = Math.floor(f / perMember);
    const weight = weights[trees[i]];
    set.weight[f] = weight;
    set.start[f] = k;
    const route = routes[f];
    for (let h = 0; h < route.length; h++) set.resource[k++] = route[h];
    if (reduce) {
      set.resource[k] = memoryBase + shapes[trees[i]].parent[nodes[i]] * g + locals[f % perMember];
      set.coefficient[k++] = memoryCoefficient;
    }
  }
  set.start[n] = k;
  return set;
}

/**
 * fabric.route(x, y) (NIC slot 0), without keeping it: resolution caches every route it hands out, and an edited
 * system's trees route every local GPU's pairs, hundreds of thousands once each, which the cache would only keep
 * alive for the collector to trace again and again.
 */
function routeOnce(system: System, x: number, y: number): readonly number[] {
  const network = system.fabric.network;
  const g = system.gpusPerNode;
  if (!network || Math.floor(x / g) === Math.floor(y / g)) return system.fabric.route(x, y);
  const { send, shared, receive } = network.routeParts(x, y, 0);
  const path: number[] = [];
  for (const part of [send, shared, receive]) for (let i = 0; i < part.length; i++) path.push(part[i]);
  return path;
}

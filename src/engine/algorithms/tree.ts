// NCCL's tree: inside each node a chain of GPUs, across nodes a double binary tree (two trees, each carrying half
// the channels, so a node that is inner in one is a leaf in the other). AllReduce reduces up and broadcasts down,
// pipelined in chunks.
import * as K from '../constants';
import type { FlowSet } from '../sim/maxmin';
import type { PackedFlows, PhaseRun } from '../sim/packed';
import { memoryResource } from '../sim/run';
import type { Flow, Schedule } from '../sim/schedule';
import { linkTable } from '../topology/link-table';
import { channelCapGBps, pathClass, pipelineStageLatenciesUs, wireBytes, transfer, type BuildContext } from './context';
import { pipelineRounds, type Stage } from './pipeline';
import { setupUs } from './setup';
import { treeChunkBytes } from './tree-chunks';
import { editedTreeShape } from './tree-edited';
import { idleTreeMemory } from './tree-memory';
import { treeShape, type DepthEdges } from './tree-shape';

// The tree's geometry lives in tree-shape.ts; its importers (channel paths, NVLS trees, CollNet) keep this path.
export { binaryTreeParent, treeParents, treeRail, treeRotations } from './tree-shape';

/**
 * What a network level adds to the pipeline's fill because NCCL's proxy forwards whole chunks: it sends a chunk
 * only once the GPU has written all of it (net.cc sendProxyProgress waits for the step's size or flags), so the
 * next level starts one of NCCL's chunks later than the simulator's finer cut-through chunk would let it. The chunk
 * crosses at the wire's pace, its NIC shared by the channels that cross it (NCCL's measured tree correction, in the
 * channels' ceilings, already stands for the pipeline's slow ramp and is not charged again here). Simple trees
 * move whole chunks everywhere already.
 */
function networkStoreAndForwardUs(
  ctx: BuildContext,
  rotations: number,
  perChannel: number,
  granule: number,
  stagePaths: readonly (readonly (readonly number[])[])[],
): number {
  const { system } = ctx;
  if (system.nodes < 2 || ctx.protocol === 'Simple' || system.fabric.idealised) return 0;
  const chunk = Math.min(
    treeChunkBytes(ctx.protocol, ctx.bytes, ctx.channels, system.nodes, system.gpusPerNode),
    perChannel,
  );
  if (chunk <= granule) return 0;
  const links = linkTable(system.topology);
  let slowestGBps = Infinity;
  for (const paths of stagePaths)
    for (const path of paths)
      if (pathClass(ctx, path) === 'net')
        for (const r of path)
          if (r < links.count && links.kind(r) === 'network') slowestGBps = Math.min(slowestGBps, links.GBps(r));
  if (!Number.isFinite(slowestGBps)) return 0;
  const channelsPerNic = Math.max(1, ctx.channels / rotations);
  return wireBytes(ctx, chunk - granule) / ((1000 * slowestGBps) / channelsPerNic);
}

export function buildTree(ctx: BuildContext): Schedule {
  // On an edited system whose reductions' memories cannot bind (tree-memory.ts), they are left out, traced or not,
  // and the untraced fast path simulates the groups the edit touches and one stand-in of each kind.
  const idle = idleTreeMemory(ctx);
  const shape = idle && ctx.reduceEdits ? editedTreeShape(ctx, idle) : treeShape(ctx);
  const { rotations, weights, representative, byDepth } = shape;
  const chargeMemory = !representative && !idle;
  // Flow objects (a trace, the full path) list every edge: a reduced shape's come from the node-by-node one.
  const everyEdge = (d: number): DepthEdges => (idle && ctx.reduceEdits ? treeShape(ctx) : shape).byDepth[d - 1];
  const perChannel = ctx.bytes / ctx.channels;
  const chunkBytes = K.MIN_PIPELINE_CHUNK_BYTES[ctx.protocol];
  let chunks = Math.max(1, Math.ceil(perChannel / chunkBytes));
  const maxDepth = byDepth.length;
  const upPaths = byDepth.map((edges) => edges.samplePaths);
  // LL and LL128 forward line by line (cut-through): model them as a pipeline deep enough that its fill is small.
  if (ctx.protocol !== 'Simple') chunks = Math.max(chunks, K.CUT_THROUGH_DEPTH * 2 * maxDepth);
  const payload = perChannel / chunks;
  const storeAndForwardUs = networkStoreAndForwardUs(ctx, rotations, perChannel, payload, upPaths);
  const order = [
    ...Array.from({ length: maxDepth }, (_, i) => maxDepth - i),
    ...Array.from({ length: maxDepth }, (_, i) => i + 1),
  ];
  const latencies = pipelineStageLatenciesUs(
    ctx,
    order.map((d) => upPaths[d - 1]),
  );
  const stages = order.map((d, i): Stage => {
    const reducing = i < maxDepth;
    const edges = byDepth[d - 1];
    let built: Flow[] | undefined;
    return {
      // The solver reads the packed arrays; Flow objects are built only for a trace or the full path.
      get flows() {
        return (built ??= edgeFlows(ctx, weights, chargeMemory, everyEdge(d), reducing, payload));
      },
      packed: packEdges(ctx, weights, chargeMemory, edges, reducing, payload),
      phase: reducing ? 'exchange' : 'broadcast',
      latencyUs: latencies[i] + (upPaths[d - 1].some((p) => pathClass(ctx, p) === 'net') ? storeAndForwardUs : 0),
    };
  });
  return { rounds: pipelineRounds(stages, chunks), setupUs: setupUs(ctx), channels: ctx.channels };
}

/**
 * One depth's flows in one direction, as transfer() builds them for a unit payload and then scaled to `payload`:
 * the reduction (child to parent) charges the parent's memory when `chargeMemory` (not when identical nodes are
 * represented, nor where that memory cannot bind).
 */
function edgeFlows(
  ctx: BuildContext,
  weights: readonly number[],
  chargeMemory: boolean,
  edges: DepthEdges,
  up: boolean,
  payload: number,
): Flow[] {
  const flows: Flow[] = [];
  for (let i = 0; i < edges.child.length; i++) {
    const c = edges.channelClass[i];
    const opts = { weight: weights[c], channel: c, channelStride: weights.length, chunk: 0 };
    const flow = up
      ? transfer(ctx, edges.child[i], edges.parent[i], 1, {
          ...opts,
          phase: 'exchange',
          reduce: true,
          chargeMemory,
          path: edges.upRoutes[i],
        })
      : transfer(ctx, edges.parent[i], edges.child[i], 1, {
          ...opts,
          phase: 'broadcast',
          reduce: false,
          path: edges.downRoutes[i],
        });
    flows.push({ ...flow, bytes: flow.bytes * payload, reduceBytes: flow.reduceBytes * payload });
  }
  return flows;
}

/** A depth's packed arrays that no size changes (see packEdges), and the runs of equal weights in flow order. */
interface EdgeArrays {
  readonly start: Int32Array;
  readonly resource: Int32Array;
  readonly coefficient: Float64Array;
  readonly weight: Float64Array;
  readonly weightRuns: readonly { readonly weight: number; readonly count: number }[];
}

const EDGE_ARRAYS = new WeakMap<DepthEdges, Map<string, EdgeArrays>>();

/**
 * The same flows as edgeFlows, packed as pack() and phaseRuns() would pack them, without a Flow object each. Only
 * the sizes and the ceiling change with the message size: the other arrays are built once per depth, direction and
 * memory charge and shared by every size (a set's arrays are never written after packing).
 */
function packEdges(
  ctx: BuildContext,
  weights: readonly number[],
  chargeMemory: boolean,
  edges: DepthEdges,
  up: boolean,
  payload: number,
): PackedFlows {
  const { system } = ctx;
  const n = edges.child.length;
  // As transfer() with a unit payload: the wire bytes and the memory coefficient are per payload byte.
  const reduce = up && !system.fabric.idealised;
  const wire = wireBytes(ctx, 1);
  const memoryCoefficient = (K.REDUCE_MEMORY_FACTOR * 1) / Math.max(wire, 1e-30);
  const charge = reduce && chargeMemory;
  const key = `${up}:${charge ? memoryCoefficient : 0}`;
  let cache = EDGE_ARRAYS.get(edges);
  if (!cache) EDGE_ARRAYS.set(edges, (cache = new Map()));
  let arrays = cache.get(key);
  if (!arrays) {
    arrays = edgeArrays(ctx, weights, edges, up, charge ? memoryCoefficient : undefined);
    cache.set(key, arrays);
  }
  const bytes = wire * payload;
  const set: FlowSet = {
    count: n,
    bytes: new Float64Array(n).fill(bytes),
    weight: arrays.weight,
    capRate: new Float64Array(n).fill(channelCapGBps(ctx) * 1e3),
    start: arrays.start,
    resource: arrays.resource,
    coefficient: arrays.coefficient,
  };
  // phaseRuns' terms, bytes × weight × represents (1), in flow order; neighbours of equal weight share a run. A
  // reduced depth counts every edge's term (termRuns).
  const phase = up ? 'exchange' : 'broadcast';
  const weightRuns = edges.termRuns ?? arrays.weightRuns;
  const runs: PhaseRun[] = weightRuns.map((run) => ({ phase, term: bytes * run.weight, count: run.count }));
  return { set, runs, maxReduceBytes: reduce && n > 0 ? payload : 0 };
}

/** The size-free arrays of one depth's flows: routes, then the parent's memory when `memoryCoefficient` is set. */
function edgeArrays(
  ctx: BuildContext,
  weights: readonly number[],
  edges: DepthEdges,
  up: boolean,
  memoryCoefficient: number | undefined,
): EdgeArrays {
  const n = edges.child.length;
  const routes = up ? edges.upRoutes : edges.downRoutes;
  let entries = memoryCoefficient !== undefined ? n : 0;
  for (const route of routes) entries += route.length;
  const start = new Int32Array(n + 1);
  const resource = new Int32Array(entries);
  const coefficient = new Float64Array(entries).fill(1);
  const weight = new Float64Array(n);
  const weightRuns: { weight: number; count: number }[] = [];
  let k = 0;
  for (let i = 0; i < n; i++) {
    weight[i] = weights[edges.channelClass[i]];
    start[i] = k;
    const route = routes[i];
    for (let h = 0; h < route.length; h++) resource[k++] = route[h];
    if (memoryCoefficient !== undefined) {
      resource[k] = memoryResource(ctx.system, edges.parent[i]);
      coefficient[k++] = memoryCoefficient;
    }
    const last = weightRuns[weightRuns.length - 1];
    if (last && last.weight === weight[i]) last.count++;
    else weightRuns.push({ weight: weight[i], count: 1 });
  }
  start[n] = k;
  return { start, resource, coefficient, weight, weightRuns };
}

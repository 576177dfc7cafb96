// What every algorithm builder needs: the system, the request in resolved form, and the shared cost helpers
// (wire bytes per protocol, per-step latency of a path, per-channel throughput ceilings, memory resources).
import * as K from '../constants';
import type { Algorithm, CollectiveKind, Protocol } from '../collective-types';
import { ncclBusBwGBps } from '../nccl-model';
import { linkTable } from '../topology/link-table';
import type { LinkClass, LinkKind, System } from '../topology/model';

import type { Flow } from '../sim/schedule';
import type { Phase } from '../trace/model';
import { memoryResource } from '../sim/run';
import { searchChannels } from '../channels';
import { DEFAULT_TUNER, stepLatencyUs as releaseStepUs, tunedRow } from '../nccl-versions';

export interface BuildContext {
  readonly system: System;
  readonly algorithm: Algorithm;
  readonly kind: CollectiveKind;
  readonly bytes: number;
  readonly protocol: Protocol;
  /** Channels (CTAs) this call runs on, after NCCL's reduction for small messages. */
  readonly channels: number;
  /**
   * Fast path: build flows only for representatives of identical, independent groups (one node where nodes do
   * not interact, one rail where rails do not) — their rounds take exactly as long as the whole system's.
   */
  readonly representative?: boolean;
  /**
   * Fast path on an edited system, with no trace to write: a builder may simulate the groups of flows an edit
   * touches and one stand-in for the unchanged ones (see edited-classes.ts), where their rounds take exactly as long.
   */
  readonly reduceEdits?: boolean;
  /**
   * The full path's reference run: every resource is charged as modelled, even one a builder can show never binds
   * (the fast path, traced or not, may leave such a resource out; see tree-memory.ts).
   */
  readonly reference?: boolean;
}

/**
 * Whether every node is identical and each GPU has a NIC of its own, so nodes' intra-node flows never meet and the
 * rails never meet: one node, or one rail, then stands for all of them.
 */
export function symmetricRails(ctx: BuildContext): boolean {
  const { system } = ctx;
  return ctx.representative === true && system.nodes > 1 && system.fabric.nicsPerNode === system.gpusPerNode;
}

/** Bytes on the wire for `payload` bytes under the protocol (the uniform ring has no protocol overhead). */
export function wireBytes(ctx: BuildContext, payload: number): number {
  return ctx.system.fabric.idealised ? payload : payload / K.PROTOCOL_EFFICIENCY[ctx.protocol];
}

/** The latency class of a path: the network if it leaves the node, else the node's fabric. */
export function pathClass(ctx: BuildContext, resources: readonly number[]): LinkClass {
  const links = linkTable(ctx.system.topology);
  let cls: LinkClass = 'nvlink';
  for (const r of resources) {
    if (r >= links.count) continue;
    const hop = kindClass(links.kind(r));
    if (hop === 'net') return 'net';
    if (hop === 'pcie') cls = 'pcie';
  }
  return cls;
}

/** The latency class a single link puts its path in, at least. */
function kindClass(kind: LinkKind): LinkClass {
  if (kind === 'network') return 'net';
  return kind === 'pcie' || kind === 'inter-socket' || kind === 'host' ? 'pcie' : 'nvlink';
}

export function pathLatencyUs(ctx: BuildContext, resources: readonly number[]): number {
  const links = linkTable(ctx.system.topology);
  let us = 0;
  for (const r of resources) if (r < links.count) us += links.latencyUs(r);
  return us;
}

/**
 * One step's latency: the slowest path's hops plus the protocol's synchronisation on that class of link. With
 * `proxy` (the default) a network step also waits for the CPU proxy to serve every channel (see proxyUs).
 */
export function stepLatencyUs(ctx: BuildContext, paths: readonly (readonly number[])[], proxy = true): number {
  return stepLatency(ctx, paths, proxy).us;
}

/** stepLatencyUs, and whether any of the paths leaves the node (reaches the network). */
function stepLatency(
  ctx: BuildContext,
  paths: readonly (readonly number[])[],
  proxy: boolean,
): { us: number; net: boolean } {
  // Trees over thousands of nodes price a path per node: the table and each class's synchronisation are looked up
  // once, and each path's hops are summed in order as pathLatencyUs sums them.
  const links = linkTable(ctx.system.topology);
  const idealised = ctx.system.fabric.idealised;
  const sync: Partial<Record<LinkClass, number>> = {};
  let worst = 0;
  let net = false;
  // Indexed loops: a cold process runs these over a path per node before the optimising compiler sees them, and
  // the interpreter's for-of goes through an iterator per path.
  const linkCount = links.count;
  for (let p = 0; p < paths.length; p++) {
    const path = paths[p];
    // One pass gives the hops' latency and the path's class, as pathLatencyUs and pathClass would.
    let us = 0;
    let cls: LinkClass = 'nvlink';
    for (let h = 0; h < path.length; h++) {
      const r = path[h];
      if (r >= linkCount) continue;
      us += links.latencyUs(r);
      const hop = kindClass(links.kind(r));
      if (hop === 'net' || (hop === 'pcie' && cls === 'nvlink')) cls = hop;
    }
    if (cls === 'net') net = true;
    if (!idealised) {
      // NCCL's per-step latency already covers the hop it crosses; it can only be longer than the wire's.
      us = Math.max(us, (sync[cls] ??= syncUs(ctx, cls)));
      if (cls === 'net' && proxy) us += proxyUs(ctx);
    }
    worst = Math.max(worst, us);
  }
  return { us: worst, net };
}

/** One CPU proxy thread per GPU posts and polls every channel's network transfer in turn. */
export function proxyUs(ctx: BuildContext): number {
  return K.PROXY_OP_US * ctx.channels;
}

/**
 * Fill latencies of a pipeline's stages (trees, NVLSTree). The channels' first chunks reach the first network
 * stage together and queue at the CPU proxy once; they leave it staggered, so later network stages find the proxy
 * free when each channel arrives and pay only their own synchronisation. (A ring's steps are barriers, so there
 * every network step pays the queue again.)
 */
export function pipelineStageLatenciesUs(
  ctx: BuildContext,
  stagePaths: readonly (readonly (readonly number[])[])[],
): number[] {
  let queued = false;
  // A tree's reduction and broadcast stages of one depth cross the same paths (one array, passed twice): its
  // latency and whether it reaches the network are computed once (a path per node on 16,384 nodes).
  const known = new Map<readonly (readonly number[])[], { us: number; net: boolean }>();
  return stagePaths.map((paths) => {
    let stage = known.get(paths);
    if (stage === undefined) {
      stage = stepLatency(ctx, paths, false);
      known.set(paths, stage);
    }
    if (queued || ctx.system.fabric.idealised || !stage.net) return stage.us;
    queued = true;
    return stage.us + proxyUs(ctx);
  });
}

/**
 * A ring step's latency. A piece of data crosses the ring's hops in turn, so one step costs an average hop. As in
 * NCCL's model, a ring over N nodes spends 2(N−1) of its 2(n−1) AllReduce steps crossing the network (N−1 of n−1
 * for one half) and the rest inside nodes.
 */
export function meanStepLatencyUs(ctx: BuildContext, paths: readonly (readonly number[])[]): number {
  let intra = 0;
  let intraCount = 0;
  let inter = 0;
  let interCount = 0;
  for (const path of paths) {
    const us = stepLatencyUs(ctx, [path]);
    if (pathClass(ctx, path) === 'net') {
      inter += us;
      interCount++;
    } else {
      intra += us;
      intraCount++;
    }
  }
  if (interCount === 0) return intraCount > 0 ? intra / intraCount : 0;
  if (intraCount === 0) return inter / interCount;
  const n = ctx.system.ranks;
  const interShare = (ctx.system.nodes - 1) / Math.max(1, n - 1);
  return (1 - interShare) * (intra / intraCount) + interShare * (inter / interCount);
}

/** NCCL's per-step synchronisation for this algorithm and protocol on a class of link, µs. */
export function syncUs(ctx: BuildContext, cls: LinkClass): number {
  // With one GPU per node every step crosses the network and nothing inside a node hides its latency: NCCL's model
  // then takes the tree's network latency for every algorithm ("with ppn=1 latencies are fully exposed",
  // tuning.cc), and so does the simulator. PAT runs only there (2.27 had no PAT row at all).
  const exposed = cls === 'net' && ctx.system.gpusPerNode === 1;
  const row = exposed ? 'tree' : tunedRow(ctx.algorithm);
  // The intra-node step cost scale (Simple's per-step fence) was fitted on rings, whose steps the simulator runs as
  // barriers; trees and NVLS are simulated as pipelines whose fill already pays every hop, so they keep NCCL's own
  // per-step figure. LL and LL128 flag every line and have no per-step fence (their whole trips: ring-chunks.ts).
  const scale =
    cls !== 'net' && ctx.protocol === 'Simple' && row === 'ring'
      ? K.intraStepLatencyScale(ctx.system.gpu.smVersion, cls)
      : 1;
  return releaseStepUs(ctx.system.tuner, cls, row, ctx.protocol) * scale;
}

/**
 * Ceiling on one channel's wire rate. LL and LL128 (and trees) are SM-bound: NCCL's modelled bus bandwidth under
 * its measured per-architecture ceilings, shared by the channels NCCL runs, so dropping channels for small messages
 * lowers it. Simple copies at the link's pace up to NCCL's top per-channel search speed.
 */
const CAPS = new WeakMap<BuildContext, number>();

export function channelCapGBps(ctx: BuildContext): number {
  let cap = CAPS.get(ctx);
  if (cap === undefined) {
    cap = computeChannelCap(ctx);
    CAPS.set(ctx, cap);
  }
  return cap;
}

// The ceilings are physical (what one CTA can push), so they come from the newest tables whatever release runs.
function computeChannelCap(ctx: BuildContext): number {
  const { system, protocol } = ctx;
  if (system.fabric.idealised) return Infinity;
  let payload: number;
  if (ctx.algorithm === 'tree') {
    // A tree's bus bandwidth counts what a GPU sends up and down together (NCCL's algbw is half of it): a channel's
    // CTA splits its threads between the reduction going up and the broadcast coming down, so each direction gets
    // half of the channel's share. NCCL's measured correction by size applies to every protocol.
    const shareGBps = ncclBusBwGBps(system, ctx.kind, 'tree', protocol, DEFAULT_TUNER) / searchChannels(system);
    payload = (ctx.kind === 'allreduce' ? shareGBps / 2 : shareGBps) * K.treeCorrection(protocol, ctx.bytes);
  } else if (protocol === 'Simple') {
    payload = K.SIMPLE_PER_CHANNEL_GBPS[K.archIndex(system.gpu.smVersion)];
  } else {
    payload = ncclBusBwGBps(system, ctx.kind, 'ring', protocol, DEFAULT_TUNER) / searchChannels(system);
  }
  return payload / K.PROTOCOL_EFFICIENCY[protocol];
}

/** A point-to-point flow of one channel class; `reduce` charges the receiver's memory for the reduction. */
export function transfer(
  ctx: BuildContext,
  from: number,
  to: number,
  payload: number,
  opts: {
    weight: number;
    channel: number;
    channelStride: number;
    chunk: number;
    phase: Phase;
    reduce: boolean;
    path?: readonly number[];
    chargeMemory?: boolean;
    /** Identical flows elsewhere that this one stands for on the fast path (see Flow.represents). */
    represents?: number;
  },
): Flow {
  const path = opts.path ?? ctx.system.fabric.route(from, to);
  const reduce = opts.reduce && !ctx.system.fabric.idealised;
  const charge = reduce && opts.chargeMemory !== false;
  const wire = wireBytes(ctx, payload);
  let resources = path;
  let coefficients: number[] | undefined;
  if (charge) {
    // Built by index: trees at 131,072 GPUs make hundreds of thousands of these, and spreads allocate twice.
    const withMemory: number[] = [];
    coefficients = [];
    for (let i = 0; i < path.length; i++) {
      withMemory.push(path[i]);
      coefficients.push(1);
    }
    withMemory.push(memoryResource(ctx.system, to));
    coefficients.push((K.REDUCE_MEMORY_FACTOR * payload) / Math.max(wire, 1e-30));
    resources = withMemory;
  }
  return {
    rank: from,
    peer: to,
    bytes: wire,
    resources,
    coefficients,
    weight: opts.weight,
    channel: opts.channel,
    channelStride: opts.channelStride,
    capGBps: channelCapGBps(ctx),
    chunk: opts.chunk,
    phase: opts.phase,
    reduceBytes: reduce ? payload : 0,
    represents: opts.represents,
  };
}

/** Splits `channels` into `classes` groups as evenly as possible; returns the size of each group. */
export function channelClasses(channels: number, classes: number): number[] {
  const k = Math.max(1, Math.min(classes, channels));
  return Array.from({ length: k }, (_, i) => Math.floor(channels / k) + (i < channels % k ? 1 : 0));
}

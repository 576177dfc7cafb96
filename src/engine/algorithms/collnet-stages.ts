// CollNet's stages (see collnet.ts): the intra-node reduction to the heads and the return, stage by stage, for a list
// of nodes, and the stages in pipeline order with their fill latencies.
//
// CollNet AllReduce (NCCL's CollNetDirect and CollNetChain over the SHARP plugin): the node reduces to its heads,
// the heads' shards are reduced in the network's switches (sharp.ts), and the result comes back down the same way.
// Direct: every GPU is a head for its share of the channels; the others send it their part of that share through
// the NVSwitch and it returns the result to them (one hop each way). Chain: each channel reduces along a chain of
// the node's GPUs to the GPU beside the channel's NIC, and broadcasts back along it. Both are pipelined in chunks.
import type { Flow, PackedFlows } from '../sim/schedule';
import { collNetDirectGraph } from '../collnet';
import { channelClasses, transfer, type BuildContext } from './context';
import { pricedStages, type Stage } from './pipeline';
import type { SharpHead } from './sharp';
import { treeRail } from './tree';

interface ChannelClass {
  readonly weight: number;
  readonly channel: number;
  readonly stride: number;
}

/** Intra-node stages of one channel class: flows per stage, and one path per stage for its latency. */
export interface IntraStage {
  readonly flows: Flow[];
  readonly paths: (readonly number[])[];
}

function classesOf(channels: number, count: number): ChannelClass[] {
  const weights = channelClasses(channels, count);
  return weights.map((weight, channel) => ({ weight, channel, stride: weights.length }));
}

/**
 * Each channel class's head (local GPU) and the NIC slot it reaches the network by. Direct: class c is headed by
 * local GPU c, one class per head of its graph. Chain: one chain per NIC (as far as the channels go), headed by the
 * GPU beside that NIC.
 */
export function collNetHeads(ctx: BuildContext): { head: number; slot: number }[] {
  const { system } = ctx;
  if (ctx.algorithm === 'collnetdirect') {
    const count = Math.min(ctx.channels, collNetDirectGraph(system).channels);
    return Array.from({ length: Math.max(1, count) }, (_, c) => ({ head: c % system.gpusPerNode, slot: 0 }));
  }
  const count = Math.min(ctx.channels, Math.max(1, system.fabric.nicsPerNode));
  return Array.from({ length: Math.max(1, count) }, (_, c) => treeRail(ctx, c));
}

/** The intra-node stages of the given nodes (paths from node 0 when it is among them) and the network's heads. */
export interface IntraStages {
  readonly up: IntraStage[];
  readonly down: IntraStage[];
  readonly heads: SharpHead[];
}

/**
 * The node's reduction to its heads (`up`, stage by stage) and the return to every GPU (`down`), for the listed
 * nodes, each flow standing for `represents` alike; and the heads the network stage streams from.
 */
export function intraStages(
  ctx: BuildContext,
  chunk: number,
  nodeList: readonly number[],
  represents: number,
): IntraStages {
  const { system } = ctx;
  const g = system.gpusPerNode;
  const up: IntraStage[] = [];
  const down: IntraStage[] = [];
  const heads: SharpHead[] = [];
  const stage = (list: IntraStage[], i: number): IntraStage => {
    while (list.length <= i) list.push({ flows: [], paths: [] });
    return list[i];
  };
  const hop = (c: ChannelClass, from: number, to: number, reduce: boolean) =>
    transfer(ctx, from, to, chunk, {
      weight: c.weight,
      channel: c.channel,
      channelStride: c.stride,
      chunk: 0,
      phase: reduce ? 'exchange' : 'broadcast',
      reduce,
      represents,
    });
  const rails = collNetHeads(ctx);
  const classes = classesOf(ctx.channels, rails.length);
  if (ctx.algorithm === 'collnetdirect') {
    for (const c of classes) {
      const { head, slot } = rails[c.channel];
      heads.push({ local: head, slot, payload: chunk, ...asHead(c) });
      for (const node of nodeList)
        for (let local = 0; local < g; local++) {
          if (local === head) continue;
          const [from, to] = [node * g + local, node * g + head];
          stage(up, 0).flows.push(hop(c, from, to, true));
          stage(down, 0).flows.push(hop(c, to, from, false));
          if (node === 0 && local === (head + 1) % g) {
            stage(up, 0).paths.push(system.fabric.route(from, to));
            stage(down, 0).paths.push(system.fabric.route(to, from));
          }
        }
    }
  } else {
    for (const c of classes) {
      const rail = rails[c.channel];
      heads.push({ local: rail.head, slot: rail.slot, payload: chunk, ...asHead(c) });
      for (const node of nodeList)
        for (let j = g - 1; j >= 1; j--) {
          // Hop j of the chain: from its (j)th GPU after the head to the one before; the reduction runs from the tail.
          const from = node * g + ((rail.head + j) % g);
          const to = node * g + ((rail.head + j - 1) % g);
          const i = g - 1 - j;
          stage(up, i).flows.push(hop(c, from, to, true));
          stage(down, g - 2 - i).flows.push(hop(c, to, from, false));
          if (node === 0) {
            stage(up, i).paths.push(system.fabric.route(from, to));
            stage(down, g - 2 - i).paths.push(system.fabric.route(to, from));
          }
        }
    }
  }
  return { up, down, heads };
}

/** The stages in pipeline order with their fill latencies, from the paths each stage keeps. */
export function orderedStages(
  ctx: BuildContext,
  up: readonly IntraStage[],
  down: readonly IntraStage[],
  network: IntraStage,
  packed?: { up: PackedFlows[]; network: PackedFlows; down: PackedFlows[] },
): Stage[] {
  return pricedStages(ctx, [
    ...up.map((s, i) => ({
      paths: s.paths,
      stage: (latencyUs: number): Stage => ({ flows: s.flows, phase: 'exchange', latencyUs, packed: packed?.up[i] }),
    })),
    {
      paths: network.paths,
      stage: (latencyUs: number): Stage => ({
        flows: network.flows,
        phase: 'exchange',
        latencyUs,
        packed: packed?.network,
      }),
    },
    ...down.map((s, i) => ({
      paths: s.paths,
      stage: (latencyUs: number): Stage => ({ flows: s.flows, phase: 'broadcast', latencyUs, packed: packed?.down[i] }),
    })),
  ]);
}

function asHead(c: ChannelClass): Pick<SharpHead, 'weight' | 'channel' | 'channelStride'> {
  return { weight: c.weight, channel: c.channel, channelStride: c.stride };
}

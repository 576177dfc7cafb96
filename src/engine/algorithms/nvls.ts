// NVLS (NVLink SHARP): the NVSwitch reduces. Each GPU pushes its whole buffer into the switch once and reads back
// the reduced shard it owns (multimem.ld_reduce), then writes its shard once and the switch multicasts it to all
// (multimem.st). Per GPU link that is S·(n+1)/n each way instead of the ring's 2·S·(n−1)/n. Across nodes
// (NVLSTree), each GPU's reduced shard goes up and down a double binary tree over the NICs in between.
import * as K from '../constants';
import type { Flow, Schedule } from '../sim/schedule';
import type { Phase } from '../trace/model';
import {
  channelClasses,
  pathLatencyUs,
  pipelineStageLatenciesUs,
  symmetricRails,
  syncUs,
  wireBytes,
  type BuildContext,
} from './context';
import { nvlsBufferRateGBps } from '../nccl-model';
import { DEFAULT_TUNER } from '../nccl-versions';
import { engineResource } from '../sim/run';
import { pack, phaseRuns, repeatedRuns } from '../sim/packed';
import { editedClasses } from './edited-classes';
import { pipelineRounds, type Stage } from './pipeline';
import { setupUs } from './setup';
import { nvlsTreeChunks } from './nvls-tree-chunks';
import { nvlsTreeStages } from './nvls-tree';
import { sharpStage, type SharpHead } from './sharp';
import { editedNodes, staysInNode } from './edited-nodes';
import { linkTable } from '../topology/link-table';
import { selectedSharpStage } from './sharp-edited';

function switchFlow(
  ctx: BuildContext,
  rank: number,
  payload: number,
  dir: 'up' | 'down',
  phase: Phase,
  weight: number,
  channel: number,
  stride: number,
  engine = false,
): Flow {
  const link = dir === 'up' ? ctx.system.fabric.switchUplink(rank) : ctx.system.fabric.switchDownlink(rank);
  const efficiency = ctx.system.fabric.idealised ? 1 : K.nvlsEfficiency(ctx.system.gpu.smVersion);
  const withEngine = engine && !ctx.system.fabric.idealised;
  return {
    represents: symmetricRails(ctx) ? ctx.system.nodes : 1,
    rank,
    peer: rank,
    bytes: wireBytes(ctx, payload),
    resources: withEngine ? [link, engineResource(ctx.system, rank)] : [link],
    coefficients: withEngine ? [1 / efficiency, 1] : [1 / efficiency],
    weight,
    channel,
    channelStride: stride,
    capGBps: Infinity,
    chunk: 0,
    phase,
    reduceBytes: 0,
  };
}

export function buildNvls(ctx: BuildContext): Schedule {
  const { system, kind } = ctx;
  const g = system.gpusPerNode;
  const multiNode = system.nodes > 1;
  const trees = multiNode ? 2 : 1;
  const weights = channelClasses(ctx.channels, trees);
  const perChannel = ctx.bytes / ctx.channels;
  // Across nodes NCCL sizes NVLSTree chunks per head (nvls-tree-chunks.ts); one node keeps the NVLS chunk.
  const chunks =
    ctx.algorithm === 'nvlstree' && kind === 'allreduce'
      ? nvlsTreeChunks(ctx.bytes, system.nodes, ctx.channels, g)
      : Math.max(1, Math.ceil(perChannel / K.PIPELINE_CHUNK_BYTES));
  const chunk = perChannel / chunks;
  const hop = pathLatencyUs(ctx, [system.fabric.switchUplink(0), system.fabric.switchDownlink(0)]);
  const symmetric = symmetricRails(ctx);
  // An edited system with a NIC per GPU simulates the groups its edit touches and one stand-in for the others.
  const classes = !symmetric && ctx.reduceEdits && multiNode ? editedClasses(system) : undefined;
  const switchRanks = classes?.switchRanks ?? (ctx.algorithm === 'nvls' ? nodeSwitchRanks(ctx) : undefined);
  /** Both switch stages' flows of the given ranks, in the order every rank's are built. */
  const switchStages = (ranks: Iterable<number>): { reduce: Flow[]; cast: Flow[] } => {
    const reduce: Flow[] = [];
    const cast: Flow[] = [];
    for (let c = 0; c < weights.length; c++) {
      const w = weights[c];
      for (const r of ranks) {
        if (kind !== 'allgather') {
          reduce.push(switchFlow(ctx, r, chunk, 'up', 'exchange', w, c, weights.length, true));
          reduce.push(switchFlow(ctx, r, chunk / g, 'down', 'reduce', w, c, weights.length));
        }
        if (kind !== 'reducescatter') {
          cast.push(switchFlow(ctx, r, chunk / g, 'up', 'broadcast', w, c, weights.length, true));
          cast.push(switchFlow(ctx, r, chunk, 'down', 'broadcast', w, c, weights.length));
        }
      }
    }
    return { reduce, cast };
  };
  // Every node's NVSwitch traffic is its own and identical: with symmetric rails one node stands for all.
  const everyRank = Array.from({ length: symmetric ? g : system.ranks }, (_, r) => r);
  let all: { reduce: Flow[]; cast: Flow[] } | undefined;
  const switchStage = (which: 'reduce' | 'cast', phase: Phase): Stage | undefined => {
    if (!switchRanks) {
      const flows = (all ??= switchStages(everyRank))[which];
      return flows.length > 0 ? { flows, phase, latencyUs: hop } : undefined;
    }
    // The chosen ranks' flows are solved; the byte terms count every rank's, in the order they would be built.
    const chosen = switchStages(switchRanks)[which];
    if (chosen.length === 0) return undefined;
    const one = switchStages([switchRanks[0]])[which];
    const perClass = one.length / weights.length;
    const patterns = weights.map((_, c) => phaseRuns(one.slice(c * perClass, (c + 1) * perClass)));
    let every: Flow[] | undefined;
    return {
      get flows() {
        return (every ??= switchStages(everyRank)[which]);
      },
      packed: { set: pack(chosen), runs: repeatedRuns(patterns, system.ranks), maxReduceBytes: 0 },
      phase,
      latencyUs: hop,
    };
  };
  const reduceStage = kind !== 'allgather' ? switchStage('reduce', 'exchange') : undefined;
  const castStage = kind !== 'reducescatter' ? switchStage('cast', 'broadcast') : undefined;
  const stages: Stage[] = [];
  if (reduceStage) stages.push(reduceStage);
  if (multiNode && ctx.algorithm === 'nvls') {
    // NVLS across nodes (CollNet): each GPU's reduced shard goes through its own NIC to the network's switches,
    // which reduce it with the other nodes' (SHARP) and send it back.
    const heads = weights.flatMap((weight, channel) =>
      Array.from({ length: g }, (_, local) => ({
        local,
        slot: 0,
        payload: chunk / g,
        weight,
        channel,
        channelStride: weights.length,
      })),
    );
    stages.push(sharpNetworkStage(ctx, heads, switchRanks !== undefined));
  } else if (multiNode && kind === 'allreduce') {
    // Each local GPU owns a shard; its shards from every node meet along a tree over the NICs.
    stages.push(...nvlsTreeStages(ctx, weights, chunk, symmetric, classes?.rails));
  }
  if (castStage) stages.push(castStage);
  const setup = setupUs(ctx) + (system.fabric.idealised ? 0 : syncUs(ctx, 'nvlink'));
  // The CTAs driving multimem and the tree move at most what NCCL measured per channel (its NVLS/NVLSTree
  // ceilings, with the tree's mid-size correction): an engine per GPU that each GPU's contribution passes through.
  // The engine carries every multimem write a GPU issues (its whole buffer for the reduction, its shard for the
  // broadcast), so its capacity is NCCL's algbw ceiling times those bytes per byte of buffer.
  const writesPerByte = (kind !== 'allgather' ? 1 : 0) + (kind !== 'reducescatter' ? 1 / g : 0);
  const engine = nvlsBufferRateGBps(system, kind, ctx.algorithm, DEFAULT_TUNER) * writesPerByte;
  return {
    rounds: pipelineRounds(stages, chunks),
    setupUs: setup,
    channels: ctx.channels,
    engineGBps: engine > 0 ? engine : undefined,
  };
}

/**
 * The ranks whose NVSwitch flows NVLS across nodes solves on an edited system without a NIC per GPU (with one,
 * editedClasses chooses them): every rank of the nodes an edit touches and of one stand-in node (edited-nodes.ts).
 * A rank's switch flows cross its own switch uplink or downlink and its own engine and nothing else, whatever the
 * NICs, so they are a group of their own, alike on every untouched node. Undefined on the fast path of identical
 * nodes, a traced run, or when a switch link lies outside its node's block (then every rank's flows run).
 */
function nodeSwitchRanks(ctx: BuildContext): number[] | undefined {
  const { system } = ctx;
  if (!ctx.reduceEdits || system.nodes < 2 || system.fabric.nicsPerNode === system.gpusPerNode) return undefined;
  const nodes = editedNodes(system);
  if (!nodes) return undefined;
  const g = system.gpusPerNode;
  const ranks = nodes.nodes.flatMap((node) => Array.from({ length: g }, (_, local) => node * g + local));
  const linkCount = linkTable(system.topology).count;
  const own = (rank: number): boolean => {
    const links = [system.fabric.switchUplink(rank), system.fabric.switchDownlink(rank)];
    return staysInNode(nodes, links, Math.floor(rank / g), linkCount);
  };
  return ranks.every(own) ? ranks : undefined;
}

/**
 * NVLS's network stage. On an edited system (`reduce`) the streams of the nodes an edit touches and of one stand-in
 * node are simulated with every leaf's aggregate (sharp-edited.ts), and the byte terms count every node's; when
 * that cannot be shown exact, every node's streams are.
 */
function sharpNetworkStage(ctx: BuildContext, heads: readonly SharpHead[], reduce: boolean): Stage {
  const nodes = reduce ? editedNodes(ctx.system) : undefined;
  const selected = nodes ? selectedSharpStage(ctx, heads, nodes) : undefined;
  if (!selected) {
    const network = sharpStage(ctx, heads);
    return { flows: network.flows, phase: 'exchange', latencyUs: pipelineStageLatenciesUs(ctx, [network.paths])[0] };
  }
  let every: Flow[] | undefined;
  return {
    get flows() {
      return (every ??= sharpStage(ctx, heads).flows);
    },
    packed: { set: pack(selected.flows), runs: selected.runs, maxReduceBytes: 0 },
    phase: 'exchange',
    latencyUs: pipelineStageLatenciesUs(ctx, [selected.paths])[0],
  };
}

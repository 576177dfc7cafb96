// CollNet AllReduce's schedule (the stages: collnet-stages.ts). An edited system simulates the nodes its edit
// touches and one stand-in node (collnet-edited.ts) where that is exact, else every node.
import * as K from '../constants';
import type { Schedule } from '../sim/schedule';
import type { BuildContext } from './context';
import { editedCollNetStages } from './collnet-edited';
import { intraStages, orderedStages } from './collnet-stages';
import { pipelineRounds, type Stage } from './pipeline';
import { setupUs } from './setup';
import { sharpStage } from './sharp';

export { collNetHeads } from './collnet-stages';

/** Stages in order: the node's reduction to its heads, the network, and the return to every GPU. */
function buildStages(ctx: BuildContext, chunk: number): Stage[] {
  const nodes = ctx.representative ? 1 : ctx.system.nodes;
  const everyNode = Array.from({ length: nodes }, (_, n) => n);
  const { up, down, heads } = intraStages(ctx, chunk, everyNode, ctx.system.nodes / nodes);
  const network = sharpStage(ctx, heads);
  return orderedStages(ctx, up, down, { flows: network.flows, paths: network.paths });
}

export function buildCollNet(ctx: BuildContext): Schedule {
  // Every channel moves its share of the buffer, one chunk per round.
  const perChannel = ctx.bytes / ctx.channels;
  const chunks = Math.max(1, Math.ceil(perChannel / K.PIPELINE_CHUNK_BYTES));
  const chunk = perChannel / chunks;
  const stages =
    (ctx.reduceEdits ? editedCollNetStages(ctx, chunk, () => buildStages(ctx, chunk)) : undefined) ??
    buildStages(ctx, chunk);
  return { rounds: pipelineRounds(stages, chunks), setupUs: setupUs(ctx), channels: ctx.channels };
}

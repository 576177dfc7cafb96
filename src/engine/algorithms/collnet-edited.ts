// CollNet (Direct and Chain) on an edited system, in proportion to the edit. Every flow of CollNet stays in one
// node or in one leaf's aggregate: a node reduces to its heads over its own NVSwitch (or chain) links and memories,
// streams to its leaf over its own NIC-side links, and gets the result back the same ways; leaves meet only at the
// spine, which has no capacity (sharp-edited.ts). In the pipeline's steady round all stages run at once, and still
// no flow of one node shares a resource with another node's. So the nodes an edit touches and one stand-in node are
// simulated (edited-nodes.ts), with every leaf's aggregate; an unchanged node's flows finish when the stand-in's do.
// The byte terms count every node's flows in the unreduced order (classes outer, nodes inner, as intraStages builds
// them), from node 0's, which every node repeats.
import { linkTable } from '../topology/link-table';
import { pack, phaseRuns, repeatedRuns } from '../sim/packed';
import type { Flow, PackedFlows, PhaseRun } from '../sim/schedule';
import type { BuildContext } from './context';
import { editedNodes, staysInNode } from './edited-nodes';
import { intraStages, orderedStages, type IntraStage } from './collnet-stages';
import type { Stage } from './pipeline';
import { selectedSharpStage } from './sharp-edited';

/** Byte terms of `nodes` nodes that each repeat node 0's flows of a stage, class by class (flows carry their class). */
function everyNodeRuns(nodeFlows: readonly Flow[], nodes: number): PhaseRun[] {
  const byClass = new Map<number, Flow[]>();
  for (const flow of nodeFlows) {
    const list = byClass.get(flow.channel);
    if (list) list.push(flow);
    else byClass.set(flow.channel, [flow]);
  }
  return repeatedRuns(
    [...byClass.values()].map((flows) => phaseRuns(flows)),
    nodes,
  );
}

/**
 * CollNet's stages with only the edited nodes' and the stand-in's flows solved, or undefined when the edits are not
 * known or some flow leaves its node (then every node is simulated). `everyStage` builds the unreduced stages, read
 * only when a caller asks a stage for its Flow objects.
 */
export function editedCollNetStages(
  ctx: BuildContext,
  chunk: number,
  everyStage: () => readonly Stage[],
): Stage[] | undefined {
  const { system } = ctx;
  const edited = editedNodes(system);
  if (!edited) return undefined;
  const g = system.gpusPerNode;
  const linkCount = linkTable(system.topology).count;
  const chosen = intraStages(ctx, chunk, edited.nodes, 1);
  for (const part of [...chosen.up, ...chosen.down])
    for (const flow of part.flows)
      if (!staysInNode(edited, flow.resources, Math.floor(flow.rank / g), linkCount)) return undefined;
  const network = selectedSharpStage(ctx, chosen.heads, edited);
  if (!network) return undefined;
  // Node 0's flows: every node's byte terms and largest reduction, and the paths of the stages' latencies.
  const shape = intraStages(ctx, chunk, [0], 1);
  const packedOf = (part: IntraStage, nodeZero: IntraStage): PackedFlows => {
    let maxReduceBytes = 0;
    for (const flow of nodeZero.flows) maxReduceBytes = Math.max(maxReduceBytes, flow.reduceBytes);
    return { set: pack(part.flows), runs: everyNodeRuns(nodeZero.flows, system.nodes), maxReduceBytes };
  };
  const packed = {
    up: chosen.up.map((part, i) => packedOf(part, shape.up[i])),
    network: { set: pack(network.flows), runs: network.runs, maxReduceBytes: 0 },
    down: chosen.down.map((part, i) => packedOf(part, shape.down[i])),
  };
  const stages = orderedStages(ctx, shape.up, shape.down, { flows: [], paths: network.paths }, packed);
  let every: readonly Stage[] | undefined;
  return stages.map((stage, j) => ({
    phase: stage.phase,
    latencyUs: stage.latencyUs,
    packed: stage.packed,
    get flows() {
      return (every ??= everyStage())[j].flows;
    },
  }));
}

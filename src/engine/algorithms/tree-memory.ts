// Whether NCCL's tree may leave its reductions' memories out on an edited system (see tree-edited.ts for why that
// splits its rounds): a memory that can never be the tightest resource of the filling changes no rate.
import * as K from '../constants';
import { linkEdits } from '../topology/edits';
import { templateIndex } from '../topology/link-table';
import { wireBytes, type BuildContext } from './context';
import { editedClasses, type EditedClasses } from './edited-classes';
import { treeRail, treeRotations } from './tree-shape';

/**
 * How far below the memory's capacity the most its reductions can bring in must stay: far above the rounding of
 * the filling's sums (a relative 2^-52 per term), so a memory that passes is never tight, in exact or in rounded
 * arithmetic.
 */
const MEMORY_MARGIN = 2 ** -20;

/**
 * The edited system's groups when the tree's reductions may leave the receivers' memories out, else undefined (then
 * every memory is charged and every node simulated, as before). Only for the fast path (traced or not) on an
 * edited system: the full path's reference run charges every memory, and identical nodes are represented already.
 *
 * Proof that such a memory never binds. The filling freezes flows at the smallest share (residual / demand) of any
 * resource. Suppose rank p's memory R were ever that resource, at share s. Its capacity is then its flows' use at
 * the rates they would get: Σ coefficient × weight × rate, the unfrozen ones at s. Every flow into R reduces into p,
 * so it crosses p's NVSwitch downlink (from its chain child) or the last link of p's NIC path (from a child node),
 * and every link's share is at least s, so the flows on each of those links load it at most to its capacity. The
 * reductions' coefficient is one value (the protocol's), so R's capacity would be at most that coefficient times
 * the sum of those links' capacities, which the check below shows it exceeds with a margin. Leaving out a resource
 * that is never the tightest changes no rate: the others' residuals, demands and the order of their ties (by local
 * index, which keeps its order) are untouched.
 */
export function idleTreeMemory(ctx: BuildContext): EditedClasses | undefined {
  const { system } = ctx;
  if (ctx.reference || ctx.representative || system.nodes < 2) return undefined;
  const classes = editedClasses(system);
  if (!classes) return undefined;
  return system.fabric.idealised || memoryIdle(ctx) ? classes : undefined;
}

/** The check of the proof above: per local GPU, the largest capacity its two ingress links have on any node. */
function memoryIdle(ctx: BuildContext): boolean {
  const { system } = ctx;
  const { fabric, gpusPerNode: g } = system;
  const edits = linkEdits(system);
  const network = fabric.network;
  if (!edits || !network || !fabric.hasSwitch) return false;
  const { layout } = edits;
  const links = system.topology.links;
  // The largest capacity of each place in a node: the resolved one, or a larger edited one.
  const largest = new Map<number, number>();
  for (const link of edits.changed) {
    const place = templateIndex(layout, link);
    largest.set(place, Math.max(largest.get(place) ?? 0, links[link].GBps));
  }
  const atMost = (link: number): number => {
    const place = templateIndex(layout, link);
    return Math.max(layout.template[place].GBps, largest.get(place) ?? 0);
  };
  const coefficient = K.REDUCE_MEMORY_FACTOR / Math.max(wireBytes(ctx, 1), 1e-30);
  const ingressGBps = new Float64Array(g);
  for (let l = 0; l < g; l++) ingressGBps[l] = atMost(fabric.switchDownlink(l));
  // A rotation's chain head receives its child nodes' reductions through its NIC (node 1 to node 0 here: the
  // receiving end's links depend only on the receiver).
  for (let k = 0; k < treeRotations(ctx); k++) {
    const { slot, head } = treeRail(ctx, k);
    const receive = network.routeParts(g + head, head, slot % fabric.nicsPerNode).receive;
    if (receive.length === 0) return false;
    ingressGBps[head] += atMost(receive[receive.length - 1]);
  }
  for (let l = 0; l < g; l++) if (!(coefficient * ingressGBps[l] < system.hbmGBps * (1 - MEMORY_MARGIN))) return false;
  return true;
}

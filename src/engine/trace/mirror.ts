// Filling the ranks of a simulated collective's trace that the fast path did not draw. The engine simulates one rank
// per symmetric class; the others run the same schedule on their own GPUs, NICs and rails, so each is drawn from the
// rank it mirrors, moved onto its own hardware and peers. On identical nodes with a NIC per GPU the fast path draws
// two kinds of stand-in (algorithms/hierarchical.ts, nvls-tree.ts, ring-folded.ts): node 0's NVSwitch traffic
// stands for every node's, and local GPU 0's rail traffic stands for every local GPU's. A rank of another node then
// has only its rail part, and a rank of node 0 other than local GPU 0 only its NVSwitch part; each part is filled
// from the rank that stands for it, so every node and every GPU of a node is drawn alike.
import type { System } from '../topology/model';
import type { Lane, Span, Trace } from './model';
import { MirrorPlan } from './mirror-plan';

export { MirrorPlan, type MirrorSource } from './mirror-plan';

export interface Mirrored {
  readonly lanes: Lane[];
  readonly spans: Span[];
  /** Empty ranks given the spans of the rank they mirror. */
  readonly mirroredRanks: number;
  /** Ranks the fast path drew in part (their rail or their NVSwitch traffic only), completed from their stand-ins. */
  readonly completedRanks: number;
  /** Empty ranks left empty because their mirrored spans would have passed maxSpans. */
  readonly leftOutRanks: number;
  /** Ranks drawn in part and left so, because completing them would have passed maxSpans. */
  readonly incompleteRanks: number;
}

/**
 * Gives each rank the spans it lacks from the rank that stands for it (MirrorPlan says which), moved onto its own
 * GPU, NIC and rail and its own peers. Mirroring multiplies the spans, so it stops before they pass maxSpans: the
 * empty ranks after that stay empty and are counted as left out, which keeps an in-memory trace bounded. A trace
 * of every rank without that bound is written lazily from MirrorPlan (lazy.ts).
 */
export function mirrorEmptyRanks(system: System, trace: Trace, maxSpans: number): Mirrored {
  const plan = new MirrorPlan(system, trace);
  const lanes = [...trace.lanes];
  const spans = [...trace.spans];
  let mirroredRanks = 0;
  let completedRanks = 0;
  let leftOutRanks = 0;
  let incompleteRanks = 0;
  for (const lane of trace.lanes) {
    if (lane.kind !== 'rank' || lane.rank === undefined) continue;
    const target = lane.rank;
    const sources = plan.sourcesOf(target);
    if (sources.length === 0) continue;
    const empty = plan.isEmpty(target);
    const count = plan.countOf(sources);
    if (empty && (leftOutRanks > 0 || spans.length + count > maxSpans)) {
      leftOutRanks++;
      continue;
    }
    if (spans.length + count > maxSpans) {
      incompleteRanks++;
      continue;
    }
    for (const span of plan.mirroredSpans(target, lane.id, sources, (l) => lanes.push(l))) spans.push(span);
    if (empty) mirroredRanks++;
    else completedRanks++;
  }
  return { lanes, spans, mirroredRanks, completedRanks, leftOutRanks, incompleteRanks };
}

// The drawn trace of a large system summarised per node. At 131,072 ranks the full trace holds millions of spans
// and a lane per rank, far more lanes than a screen has rows, while the nodes mostly do the same thing: the fast
// path simulates one node (and one rail) for all identical nodes. Here the nodes whose drawn spans agree in every
// time, phase, step, channel, chunk and byte count, GPU by GPU, form one lane group drawn from its first node and
// labelled with the nodes it stands for; a node that differs (a slow node, a degraded link, a tree's root) is a group
// of its own. Each group's spans are the full trace's spans of its first node, so the two agree where they overlap.
import type { CollectiveResult } from '../collective-types';
import type { System } from '../topology/model';
import { LazyDrawnTrace } from './lazy';
import { MirrorPlan } from './mirror-plan';
import type { Lane, Span, Trace } from './model';
import type { RecordedSpans } from './simulated-index';

/**
 * Above this many ranks a trace is summarised unless asked for in full. The timeline draws a lane per rank, and
 * beyond about a thousand lanes each is thinner than a pixel row of a screen, while the file grows by about 10 KB
 * per rank (1.2 GB at 131,072 ranks for a 1 GiB AllReduce): the full trace then shows nothing the summary lacks.
 */
export const FULL_TRACE_MAX_RANKS = 1024;

export type TraceDetail = 'auto' | 'summary' | 'full';
export const TRACE_DETAILS: readonly TraceDetail[] = ['auto', 'summary', 'full'];

/** The detail `auto` stands for on a system of `ranks` ranks. */
export function resolvedTraceDetail(detail: TraceDetail, ranks: number): 'summary' | 'full' {
  if (detail !== 'auto') return detail;
  return ranks > FULL_TRACE_MAX_RANKS ? 'summary' : 'full';
}

/** One lane group: the nodes it stands for, ascending, drawn from the first. */
export interface NodeGroup {
  readonly nodes: readonly number[];
}

/**
 * Groups the nodes of a drawn trace by what their GPUs show. A rank's spans are its simulated parts and the parts
 * mirrored from the ranks that stand for them, which keep those ranks' times: so each (rank, part) list of simulated
 * spans gets an id once (equal lists, equal ids), and a node is the ids of its GPUs' parts, without drawing a span.
 */
export function nodeGroups(lazy: LazyDrawnTrace): NodeGroup[] {
  return planGroups(lazy.plan, lazy.ranks);
}

function planGroups(plan: MirrorPlan, ranks: number): NodeGroup[] {
  const groups = new Map<string, number[]>();
  const g = plan.perNode;
  for (let node = 0; node < plan.nodes; node++) {
    const ids: number[] = [];
    for (let rank = node * g; rank < Math.min(ranks, (node + 1) * g); rank++) {
      const sources = new Map(plan.sourcesOf(rank).map((s) => [s.part, s.source]));
      for (const part of plan.parts) {
        const source = plan.has(rank, part) ? rank : sources.get(part);
        ids.push(source === undefined ? -1 : plan.listIdOf(source, part));
      }
    }
    const signature = ids.join(',');
    const members = groups.get(signature);
    if (members) members.push(node);
    else groups.set(signature, [node]);
  }
  return [...groups.values()].map((nodes) => ({ nodes }));
}

/** "0–5, 9, 12–16383", or "1, 5, 9 … 16381 (every 4th)": ascending node numbers as a reader takes them in. */
export function nodeRanges(nodes: readonly number[]): string {
  const stride = nodes.length > 3 ? nodes[1] - nodes[0] : 0;
  if (stride > 1 && nodes.every((n, i) => i === 0 || n - nodes[i - 1] === stride))
    return `${nodes[0]}, ${nodes[1]}, ${nodes[2]} … ${nodes[nodes.length - 1]} (every ${ordinal(stride)})`;
  const parts: string[] = [];
  for (let i = 0; i < nodes.length;) {
    let j = i;
    while (j + 1 < nodes.length && nodes[j + 1] === nodes[j] + 1) j++;
    parts.push(j === i ? `${nodes[i]}` : `${nodes[i]}–${nodes[j]}`);
    i = j + 1;
  }
  return parts.length > 8 ? `${parts.slice(0, 8).join(', ')} and ${parts.length - 8} more ranges` : parts.join(', ');
}

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/** The label suffix of a group's lanes: what they stand for. */
export function standsFor(group: NodeGroup): string {
  const n = group.nodes.length;
  return n === 1
    ? `node ${group.nodes[0]} on its own`
    : `stands for ${n.toLocaleString('en-US')} nodes (${nodeRanges(group.nodes)})`;
}

/**
 * The drawn trace of `result` with one lane group per group of alike nodes: each group's lanes are its first node's
 * rank and stream lanes, labelled with the nodes they stand for, holding that node's spans of the full drawn trace.
 */
export function summarisedCollectiveTrace(
  system: System,
  result: CollectiveResult,
  trace: Trace,
  recorded?: RecordedSpans,
): Trace {
  let lazy: LazyDrawnTrace;
  let groups: NodeGroup[];
  if (recorded) {
    // The groups come from the recorded index alone; then only the ranks drawn (each group's first node, and the
    // ranks its GPUs mirror) get Span objects, so the cost follows the groups rather than the nodes.
    const plan = new MirrorPlan(system, trace, recorded);
    groups = planGroups(plan, system.ranks).sort((a, b) => a.nodes[0] - b.nodes[0]);
    const drawn = new Set<number>();
    for (const group of groups) {
      for (const rank of nodeRanks(group.nodes[0], plan.perNode, system.ranks)) {
        drawn.add(rank);
        for (const source of plan.sourcesOf(rank)) drawn.add(source.source);
      }
    }
    lazy = new LazyDrawnTrace(system, result, recorded.traceOf(drawn), recorded);
  } else {
    lazy = new LazyDrawnTrace(system, result, trace);
    groups = nodeGroups(lazy).sort((a, b) => a.nodes[0] - b.nodes[0]);
  }
  const g = lazy.plan.perNode;
  const lanes: Lane[] = [];
  const spans: Span[] = [];
  for (const group of groups) {
    const node = group.nodes[0];
    const suffix = standsFor(group);
    const laneIds = new Map<number, number>();
    for (const rank of nodeRanks(node, g, system.ranks)) {
      for (const item of lazy.rankItems(rank)) {
        if (item.lane) {
          laneIds.set(item.lane.id, lanes.length);
          lanes.push({ ...item.lane, id: lanes.length, label: `${item.lane.label} · ${suffix}` });
        } else spans.push({ ...item.span, lane: laneIds.get(item.span.lane)! });
      }
    }
  }
  // The full trace's counts of mirrored ranks are not what the summary draws; its own detail replaces them.
  const facts: Record<string, string | number> = { ...(lazy.metadata().facts ?? {}) };
  for (const key of ['detail', 'mirrored ranks', 'completed ranks']) delete facts[key];
  const alone = groups.filter((group) => group.nodes.length === 1).length;
  facts['detail'] =
    `summary: ${groups.length} lane group${groups.length === 1 ? '' : 's'} for ${lazy.plan.nodes} nodes (${system.ranks} ranks); ` +
    `nodes whose GPUs draw the same spans (times, phases, steps, bytes) are one group, drawn from its first node` +
    (alone > 0 ? `; ${alone} node${alone === 1 ? '' : 's'} drawn on ${alone === 1 ? 'its' : 'their'} own` : '');
  return { metadata: { ...trace.metadata, facts }, lanes, spans };
}

/** The ranks of `node`, `perNode` to a node, the last node cut at `ranks`. */
function nodeRanks(node: number, perNode: number, ranks: number): number[] {
  const out: number[] = [];
  for (let rank = node * perNode; rank < Math.min(ranks, (node + 1) * perNode); rank++) out.push(rank);
  return out;
}

// Filling the empty ranks of a simulated collective's trace. The engine's fast path simulates one rank per
// symmetric class; the others run the same schedule on their own GPUs, NICs and rails, so each empty rank is drawn
// from the rank it mirrors, moved onto its own hardware and peers.
import type { System } from '../topology/model';
import type { Lane, Span, Trace } from './model';

export interface Mirrored {
  readonly lanes: Lane[];
  readonly spans: Span[];
  /** Empty ranks given the spans of the rank they mirror. */
  readonly mirroredRanks: number;
  /** Empty ranks left empty because their mirrored spans would have passed maxSpans. */
  readonly leftOutRanks: number;
}

/**
 * Gives each rank without spans the spans of a rank of the same node that has them (or, when the whole node is
 * empty, the rank in the same position on the nearest node that has them), moved onto its own GPU, NIC and rail
 * and its own peers. Link ids that do not exist after the move fall back to the fabric's route to the moved peer.
 * Mirroring multiplies the spans by the ranks mirrored, so it stops before the spans pass maxSpans: the ranks after
 * that stay empty and are counted as left out, which keeps the trace of a large system bounded.
 */
export function mirrorEmptyRanks(system: System, trace: Trace, maxSpans: number): Mirrored {
  const perNode = system.gpusPerNode;
  const nodes = Math.max(1, Math.ceil(system.ranks / perNode));
  const lanes = [...trace.lanes];
  const spans = [...trace.spans];
  const spansByRank = new Map<number, Span[]>();
  for (const span of trace.spans) {
    const list = spansByRank.get(span.rank) ?? [];
    list.push(span);
    spansByRank.set(span.rank, list);
  }
  const linkIds = new Set(system.topology.links.map((l) => l.id));
  const linkIndex = new Map(system.topology.links.map((l, i) => [l.id, i]));
  let nextLaneId = lanes.reduce((m, l) => Math.max(m, l.id), -1) + 1;
  let mirroredRanks = 0;
  let leftOutRanks = 0;
  for (const lane of trace.lanes) {
    if (lane.kind !== 'rank' || lane.rank === undefined || spansByRank.has(lane.rank)) continue;
    const target = lane.rank;
    const source = mirrorSource(target, perNode, nodes, spansByRank);
    if (source === undefined) continue;
    if (leftOutRanks > 0 || spans.length + spansByRank.get(source)!.length > maxSpans) {
      leftOutRanks++;
      continue;
    }
    const dNode = Math.floor(target / perNode) - Math.floor(source / perNode);
    const dLocal = (target % perNode) - (source % perNode);
    const mapRank = (rank: number): number => {
      const node = (((Math.floor(rank / perNode) + dNode) % nodes) + nodes) % nodes;
      return node * perNode + (((((rank % perNode) + dLocal) % perNode) + perNode) % perNode);
    };
    const streamOf = new Map<number, number>();
    for (const span of spansByRank.get(source)!) {
      let laneId = lane.id;
      if (span.lane !== trace.lanes.find((l) => l.kind === 'rank' && l.rank === source)?.id) {
        // A stream of the source rank (its reduce kernels): the mirrored rank gets its own.
        if (!streamOf.has(span.lane)) {
          const from = trace.lanes.find((l) => l.id === span.lane)!;
          const id = nextLaneId++;
          lanes.push({
            id,
            kind: from.kind,
            label: from.label.replace(`rank ${source}`, `rank ${target}`),
            rank: target,
            node: Math.floor(target / perNode),
          });
          streamOf.set(span.lane, id);
        }
        laneId = streamOf.get(span.lane)!;
      }
      const peer = typeof span.args?.peer === 'number' ? mapRank(span.args.peer) : undefined;
      spans.push({
        ...span,
        lane: laneId,
        rank: target,
        name: span.name?.replace(/rank (\d+)/g, (_, r: string) => `rank ${mapRank(Number(r))}`),
        links: moveLinks(system, span.links, { dNode, dLocal, nodes, perNode }, linkIds, linkIndex, target, peer),
        args: { ...(span.args ?? {}), ...(peer !== undefined ? { peer } : {}), 'mirrors rank': source },
      });
    }
    mirroredRanks++;
  }
  return { lanes, spans, mirroredRanks, leftOutRanks };
}

/** A rank with spans on the target's node, else the rank in the target's position on the nearest node with spans. */
function mirrorSource(
  target: number,
  perNode: number,
  nodes: number,
  spansByRank: ReadonlyMap<number, readonly Span[]>,
): number | undefined {
  const node = Math.floor(target / perNode);
  for (let local = 0; local < perNode; local++)
    if (spansByRank.has(node * perNode + local)) return node * perNode + local;
  for (let distance = 1; distance < nodes; distance++) {
    for (const other of [node - distance, node + distance]) {
      const candidate = other * perNode + (target % perNode);
      if (other >= 0 && other < nodes && spansByRank.has(candidate)) return candidate;
    }
  }
  return undefined;
}

interface Shift {
  readonly dNode: number;
  readonly dLocal: number;
  readonly nodes: number;
  readonly perNode: number;
}

function moveLinks(
  system: System,
  links: readonly string[],
  shift: Shift,
  linkIds: ReadonlySet<string>,
  linkIndex: ReadonlyMap<string, number>,
  rank: number,
  peer: number | undefined,
): readonly string[] {
  if (links.length === 0) return links;
  const wrap = (value: number, modulo: number): number => ((value % modulo) + modulo) % modulo;
  const nics = Math.max(1, system.fabric.nicsPerNode);
  const moved = links.map((id) =>
    id
      .replace(
        /\bn(\d+)\.(gpu|nicsw|nic)(\d+)/g,
        (_, node: string, kind: string, index: string) =>
          `n${wrap(Number(node) + shift.dNode, shift.nodes)}.${kind}${wrap(Number(index) + shift.dLocal, kind === 'gpu' ? shift.perNode : nics)}`,
      )
      .replace(/\brail(\d+)\./g, (_, rail: string) => `rail${wrap(Number(rail) + shift.dLocal, nics)}.`),
  );
  if (moved.every((id) => linkIds.has(id))) return moved;
  if (peer === undefined || peer === rank) return [];
  const links2 = system.topology.links;
  return system.fabric
    .route(rank, peer)
    .filter((i) => i < links2.length)
    .map((i) => links2[i].id)
    .filter((id) => linkIndex.has(id));
}

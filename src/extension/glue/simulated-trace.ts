// The trace a Profile command draws for one simulated collective, made to agree with the prediction beside it.
// The engine's fast path simulates one rank per symmetric class (the others run the same schedule on their own
// GPUs, NICs and rails), and its flows start after the launch and the algorithm's base latency. Drawn as is, a
// 16-rank run shows ranks 9-15 empty and the collective 25 µs shorter than the lens says. This module fills every
// rank's lane from the rank it mirrors, draws the launch, and says where the trace stops short of the prediction.
import {
  type CollectiveResult,
  type Lane,
  type Span,
  type System,
  type Trace,
  asBytes,
  asMicros,
} from '../../engine/index';
import { l10n } from './l10n';

/** The engine keeps at most this many spans in a trace (MAX_TRACE_SPANS in src/engine/constants.ts). */
export const ENGINE_TRACE_SPAN_CAP = 200_000;

export const LAUNCH_SPAN_NAME = 'launch and base latency (before the first transfer)';
export const PACING_SPAN_NAME = 'host launch pacing (back-to-back calls)';

/** Times closer than this (relative) are the same instant; float sums of flow times differ in the last bits. */
const SAME_TIME_REL = 1e-6;

export function drawnCollectiveTrace(system: System, result: CollectiveResult): Trace {
  const trace = result.trace;
  if (!trace) throw new Error(l10n.t('The engine returned no trace for this collective.'));
  const mirrored = mirrorEmptyRanks(system, trace);
  const lanes = mirrored.lanes;
  const spans = [...mirrored.spans];
  const rankLanes = lanes.filter((l) => l.kind === 'rank' && l.rank !== undefined);
  const firstStartUs = new Map<number, number>();
  let drawnEndUs = 0;
  for (const span of spans) {
    firstStartUs.set(span.rank, Math.min(firstStartUs.get(span.rank) ?? Infinity, span.startUs));
    drawnEndUs = Math.max(drawnEndUs, span.endUs);
  }
  const truncated = trace.spans.length >= ENGINE_TRACE_SPAN_CAP;
  const gapUs = result.timeUs - drawnEndUs;
  const tolerance = SAME_TIME_REL * Math.max(1, result.timeUs);
  for (const lane of rankLanes) {
    const rank = lane.rank!;
    const first = firstStartUs.get(rank);
    if (first === undefined) continue;
    if (first > tolerance) spans.push(localSpan(lane, LAUNCH_SPAN_NAME, 0, first));
    // Without truncation, the rest of the prediction is the host's launch rate pacing back-to-back calls
    // (simulateCollective's smooth maximum of host and device time): every rank waits for it alike.
    if (!truncated && gapUs > tolerance) spans.push(localSpan(lane, PACING_SPAN_NAME, drawnEndUs, result.timeUs));
  }
  const facts: Record<string, string | number> = {
    ...(trace.metadata.facts ?? {}),
    'predicted (µs)': round(result.timeUs),
  };
  if (truncated && gapUs > tolerance) {
    facts['drawn'] =
      `the first ${trace.spans.length} spans, to ${round(drawnEndUs)} µs of the predicted ${round(result.timeUs)} µs`;
  }
  if (mirrored.mirroredRanks > 0) {
    facts['mirrored ranks'] =
      `${mirrored.mirroredRanks} ranks drawn from the rank they mirror (the simulator ran one rank per symmetric class)`;
  }
  return { metadata: { ...trace.metadata, facts }, lanes, spans };
}

function round(us: number): number {
  return Math.round(us * 10) / 10;
}

function localSpan(lane: Lane, name: string, startUs: number, endUs: number): Span {
  return {
    lane: lane.id,
    rank: lane.rank!,
    phase: 'other',
    name,
    step: -1,
    channel: 0,
    chunk: -1,
    bytes: asBytes(0),
    links: [],
    startUs: asMicros(startUs),
    endUs: asMicros(endUs),
  };
}

interface Mirrored {
  readonly lanes: Lane[];
  readonly spans: Span[];
  readonly mirroredRanks: number;
}

/**
 * Gives each rank without spans the spans of a rank of the same node that has them (or, when the whole node is
 * empty, the rank in the same position on the nearest node that has them), moved onto its own GPU, NIC and rail
 * and its own peers. Link ids that do not exist after the move fall back to the fabric's route to the moved peer.
 */
function mirrorEmptyRanks(system: System, trace: Trace): Mirrored {
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
  for (const lane of trace.lanes) {
    if (lane.kind !== 'rank' || lane.rank === undefined || spansByRank.has(lane.rank)) continue;
    const target = lane.rank;
    const source = mirrorSource(target, perNode, nodes, spansByRank);
    if (source === undefined) continue;
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
  return { lanes, spans, mirroredRanks };
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

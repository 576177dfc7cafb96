// Filling the ranks of a simulated collective's trace that the fast path did not draw. The engine simulates one rank
// per symmetric class; the others run the same schedule on their own GPUs, NICs and rails, so each is drawn from the
// rank it mirrors, moved onto its own hardware and peers. On identical nodes with a NIC per GPU the fast path draws
// two kinds of stand-in (algorithms/hierarchical.ts, nvls-tree.ts, ring-folded.ts): node 0's NVSwitch traffic
// stands for every node's, and local GPU 0's rail traffic stands for every local GPU's. A rank of another node then
// has only its rail part, and a rank of node 0 other than local GPU 0 only its NVSwitch part; each part is filled
// from the rank that stands for it, so every node and every GPU of a node is drawn alike.
import type { System } from '../topology/model';
import { nodesIdentical } from '../topology/uniform';
import type { Lane, Span, Trace } from './model';

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

/** Which traffic of a rank a span is: within its node (or local work), or across nodes. */
type Part = 'node' | 'rail';

/** The rank a span exchanges with: its `peer`, or the rank a reduce stream's "reduce from rank N" names. */
function peerOf(span: Span): number | undefined {
  if (typeof span.args?.peer === 'number') return span.args.peer;
  const from = /\bfrom rank (\d+)/.exec(span.name ?? '');
  return from ? Number(from[1]) : undefined;
}

/**
 * Gives each rank the spans it lacks from the rank that stands for it, moved onto its own GPU, NIC and rail and its
 * own peers. On the symmetric fast path (identical nodes, a NIC per GPU) a rank's NVSwitch part and rail part are
 * filled separately: the NVSwitch part from the same local GPU of the nearest node that has it (node 0), the rail
 * part from a GPU of its own node that has it (local GPU 0's rail stands for every rail), else from the same local
 * GPU of the nearest node. Elsewhere only empty ranks are filled, whole, from a rank of their node or else the rank
 * in the same position on the nearest node. Link ids that do not exist after the move fall back to the fabric's
 * route to the moved peer. Mirroring multiplies the spans, so it stops before they pass maxSpans: the empty ranks
 * after that stay empty and are counted as left out, which keeps the trace of a large system bounded.
 */
export function mirrorEmptyRanks(system: System, trace: Trace, maxSpans: number): Mirrored {
  const perNode = system.gpusPerNode;
  const nodes = Math.max(1, Math.ceil(system.ranks / perNode));
  const symmetric =
    trace.metadata.facts?.path === 'fast' &&
    nodes > 1 &&
    system.fabric.nicsPerNode === perNode &&
    nodesIdentical(system);
  const partOf = (span: Span): Part | 'all' => {
    if (!symmetric) return 'all';
    const peer = peerOf(span);
    return peer !== undefined && Math.floor(peer / perNode) !== Math.floor(span.rank / perNode) ? 'rail' : 'node';
  };
  const lanes = [...trace.lanes];
  const spans = [...trace.spans];
  /** The simulated spans of each rank by part: the sources, never the spans mirrored here. */
  const simulated = new Map<string, Span[]>();
  for (const span of trace.spans) {
    const key = `${span.rank}:${partOf(span)}`;
    const list = simulated.get(key) ?? [];
    list.push(span);
    simulated.set(key, list);
  }
  const has = (rank: number, part: Part | 'all') => simulated.has(`${rank}:${part}`);
  const rankLaneOf = new Map(trace.lanes.filter((l) => l.kind === 'rank').map((l) => [l.rank, l.id]));
  const laneById = new Map(trace.lanes.map((l) => [l.id, l]));
  const laneByLabel = new Map(lanes.map((l) => [`${l.kind}:${l.label}`, l.id]));
  const linkIds = new Set(system.topology.links.map((l) => l.id));
  const linkIndex = new Map(system.topology.links.map((l, i) => [l.id, i]));
  let nextLaneId = lanes.reduce((m, l) => Math.max(m, l.id), -1) + 1;
  let mirroredRanks = 0;
  let completedRanks = 0;
  let leftOutRanks = 0;
  let incompleteRanks = 0;
  const parts: readonly (Part | 'all')[] = symmetric ? ['node', 'rail'] : ['all'];
  for (const lane of trace.lanes) {
    if (lane.kind !== 'rank' || lane.rank === undefined) continue;
    const target = lane.rank;
    const empty = !parts.some((part) => has(target, part));
    const sources = parts
      .filter((part) => !has(target, part))
      .map((part) => ({ part, source: mirrorSource(target, part, perNode, nodes, has) }))
      .filter((s): s is { part: Part | 'all'; source: number } => s.source !== undefined);
    if (sources.length === 0) continue;
    const count = sources.reduce((n, s) => n + simulated.get(`${s.source}:${s.part}`)!.length, 0);
    if (empty && (leftOutRanks > 0 || spans.length + count > maxSpans)) {
      leftOutRanks++;
      continue;
    }
    if (spans.length + count > maxSpans) {
      incompleteRanks++;
      continue;
    }
    for (const { part, source } of sources) {
      const dNode = Math.floor(target / perNode) - Math.floor(source / perNode);
      const dLocal = (target % perNode) - (source % perNode);
      const mapRank = (rank: number): number => {
        const node = (((Math.floor(rank / perNode) + dNode) % nodes) + nodes) % nodes;
        return node * perNode + (((((rank % perNode) + dLocal) % perNode) + perNode) % perNode);
      };
      for (const span of simulated.get(`${source}:${part}`)!) {
        let laneId = lane.id;
        if (span.lane !== rankLaneOf.get(source)) {
          // A stream of the source rank (its reduce kernels): the target's own stream of that name, made once.
          const from = laneById.get(span.lane)!;
          const label = from.label.replace(`rank ${source}`, `rank ${target}`);
          let id = laneByLabel.get(`${from.kind}:${label}`);
          if (id === undefined) {
            id = nextLaneId++;
            lanes.push({ id, kind: from.kind, label, rank: target, node: Math.floor(target / perNode) });
            laneByLabel.set(`${from.kind}:${label}`, id);
          }
          laneId = id;
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
    }
    if (empty) mirroredRanks++;
    else completedRanks++;
  }
  return { lanes, spans, mirroredRanks, completedRanks, leftOutRanks, incompleteRanks };
}

/**
 * The rank whose `part` stands for the target's. The NVSwitch part: the same local GPU on the nearest node that has
 * it, else a GPU of the target's node. The rail part, and a whole rank off the symmetric path: a GPU of the target's
 * node that has it, else the same local GPU on the nearest node that has it.
 */
function mirrorSource(
  target: number,
  part: Part | 'all',
  perNode: number,
  nodes: number,
  has: (rank: number, part: Part | 'all') => boolean,
): number | undefined {
  const node = Math.floor(target / perNode);
  const sameNode = (): number | undefined => {
    for (let local = 0; local < perNode; local++) if (has(node * perNode + local, part)) return node * perNode + local;
    return undefined;
  };
  const sameLocal = (): number | undefined => {
    for (let distance = 1; distance < nodes; distance++) {
      for (const other of [node - distance, node + distance]) {
        const candidate = other * perNode + (target % perNode);
        if (other >= 0 && other < nodes && has(candidate, part)) return candidate;
      }
    }
    return undefined;
  };
  return part === 'node' ? (sameLocal() ?? sameNode()) : (sameNode() ?? sameLocal());
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

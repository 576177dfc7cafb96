// Which rank stands for which in a simulated collective's trace (see mirror.ts), and the spans a rank gets from
// the ranks that stand for it, one rank at a time: the in-memory drawn trace, the lazily written full trace and the
// per-node summary all draw from this plan, so they agree span for span.
import { linkIds, linkTable } from '../topology/link-table';
import type { System } from '../topology/model';
import { nodesIdentical } from '../topology/uniform';
import type { Lane, Span, Trace } from './model';
import { SpanKeys, peerOf, traceIndex, type SimulatedSpanIndex } from './simulated-index';

/** Which traffic of a rank a span is: within its node (or local work), or across nodes; 'all' off the symmetric path. */
export type Part = 'node' | 'rail' | 'all';

/** One part of a rank drawn from another rank's simulated spans. */
export interface MirrorSource {
  readonly part: Part;
  readonly source: number;
}

const NO_SPANS: readonly Span[] = [];
const PART_INDEX: Readonly<Record<Part, number>> = { node: 0, rail: 1, all: 2 };
/** A (rank or local GPU, part) pair as one number: the maps below hold one per rank, 131,072 at the largest. */
const keyOf = (index: number, part: Part): number => index * 3 + PART_INDEX[part];

export class MirrorPlan {
  readonly perNode: number;
  readonly nodes: number;
  readonly parts: readonly Part[];
  /** The simulated spans of each rank by part that the trace holds: the sources, never mirrored spans. */
  private readonly simulated = new Map<number, Span[]>();
  /** Each (rank, part) the run simulated spans of, whether or not the trace holds them (see simulated-index.ts). */
  private readonly present = new Set<number>();
  /** The id of each (rank, part)'s list of span keys, equal ids for equal lists; made on first use. */
  private listIds?: Map<number, number>;
  private readonly partOf: (rank: number, peer: number | undefined) => Part;
  /** For each local GPU and part, the nodes whose GPU there has simulated spans of that part, ascending. */
  private readonly nodesWith = new Map<number, number[]>();
  private readonly rankLaneOf: Map<number | undefined, number>;
  private readonly laneById: Map<number, Lane>;
  private readonly laneByLabel: Map<string, number>;
  private nextLaneId: number;

  /**
   * `index` lists every span the run simulated; `trace` may hold only some ranks' spans (those drawn), as a run
   * recorded for a summary gives them. Without an index the trace holds them all.
   */
  constructor(
    private readonly system: System,
    trace: Trace,
    private readonly index: SimulatedSpanIndex = traceIndex(trace),
  ) {
    const perNode = system.gpusPerNode;
    this.perNode = perNode;
    this.nodes = Math.max(1, Math.ceil(system.ranks / perNode));
    const symmetric =
      trace.metadata.facts?.path === 'fast' &&
      this.nodes > 1 &&
      system.fabric.nicsPerNode === perNode &&
      nodesIdentical(system);
    this.parts = symmetric ? ['node', 'rail'] : ['all'];
    this.partOf = (rank, peer) => {
      if (!symmetric) return 'all';
      return peer !== undefined && Math.floor(peer / perNode) !== Math.floor(rank / perNode) ? 'rail' : 'node';
    };
    index.forEach((rank, peer) => {
      const part = this.partOf(rank, peer);
      const key = keyOf(rank, part);
      if (this.present.has(key)) return;
      this.present.add(key);
      const where = keyOf(rank % perNode, part);
      const nodes = this.nodesWith.get(where) ?? [];
      nodes.push(Math.floor(rank / perNode));
      this.nodesWith.set(where, nodes);
    });
    for (const span of trace.spans) {
      const key = keyOf(span.rank, this.partOf(span.rank, peerOf(span)));
      const list = this.simulated.get(key);
      if (list) list.push(span);
      else this.simulated.set(key, [span]);
    }
    for (const nodes of this.nodesWith.values()) nodes.sort((a, b) => a - b);
    this.rankLaneOf = new Map(trace.lanes.filter((l) => l.kind === 'rank').map((l) => [l.rank, l.id]));
    this.laneById = new Map(trace.lanes.map((l) => [l.id, l]));
    this.laneByLabel = new Map(trace.lanes.map((l) => [`${l.kind}:${l.label}`, l.id]));
    this.nextLaneId = trace.lanes.reduce((m, l) => Math.max(m, l.id), -1) + 1;
  }

  has(rank: number, part: Part): boolean {
    return this.present.has(keyOf(rank, part));
  }

  /**
   * An id for what `rank` simulated in `part` (each span's key, in order): equal ids for equal lists, -1 for none.
   * The lists are told apart by walking a trie of span keys, so no list is joined into one string.
   */
  listIdOf(rank: number, part: Part): number {
    if (!this.listIds) {
      const ids = new Map<number, number>();
      const next = new Map<number, Map<number, number>>();
      let lists = 0;
      this.index.forEach((r, peer, key) => {
        const at = keyOf(r, this.partOf(r, peer));
        const from = ids.get(at) ?? -1;
        let edges = next.get(from);
        if (!edges) next.set(from, (edges = new Map()));
        let id = edges.get(key);
        if (id === undefined) edges.set(key, (id = lists++));
        ids.set(at, id);
      }, new SpanKeys());
      this.listIds = ids;
    }
    return this.listIds.get(keyOf(rank, part)) ?? -1;
  }

  /** The spans the simulator drew for `rank` in `part`, where the trace holds them. */
  simulatedOf(rank: number, part: Part): readonly Span[] {
    return this.simulated.get(keyOf(rank, part)) ?? NO_SPANS;
  }

  /** Whether the simulator drew nothing for `rank`. */
  isEmpty(rank: number): boolean {
    return !this.parts.some((part) => this.has(rank, part));
  }

  /** The parts `rank` lacks, each with the rank that stands for it (parts no rank has are left out). */
  sourcesOf(target: number): MirrorSource[] {
    const out: MirrorSource[] = [];
    for (const part of this.parts) {
      if (this.has(target, part)) continue;
      const source = this.sourceOf(target, part);
      if (source !== undefined) out.push({ part, source });
    }
    return out;
  }

  countOf(sources: readonly MirrorSource[]): number {
    return sources.reduce((n, s) => n + this.simulatedOf(s.source, s.part).length, 0);
  }

  /**
   * The rank whose `part` stands for the target's. The NVSwitch part: the same local GPU on the nearest node that
   * has it, else a GPU of the target's node. The rail part, and a whole rank off the symmetric path: a GPU of the
   * target's node that has it, else the same local GPU on the nearest node that has it (the lower on a tie).
   */
  private sourceOf(target: number, part: Part): number | undefined {
    const g = this.perNode;
    const node = Math.floor(target / g);
    const sameNode = (): number | undefined => {
      for (let local = 0; local < g; local++) if (this.has(node * g + local, part)) return node * g + local;
      return undefined;
    };
    const sameLocal = (): number | undefined => {
      const nodes = this.nodesWith.get(keyOf(target % g, part));
      const other = nodes ? nearestOther(nodes, node) : undefined;
      return other === undefined ? undefined : other * g + (target % g);
    };
    return part === 'node' ? (sameLocal() ?? sameNode()) : (sameNode() ?? sameLocal());
  }

  /**
   * The spans `target` (on lane `laneId`) gets from `sources`, moved onto its own GPU, NIC, rail and peers. A
   * source's stream lane (its reduce kernels) becomes the target's own stream of that name, made once and handed
   * to `onNewLane`.
   */
  *mirroredSpans(
    target: number,
    laneId: number,
    sources: readonly MirrorSource[],
    onNewLane: (lane: Lane) => void,
  ): Generator<Span> {
    const g = this.perNode;
    const nodes = this.nodes;
    for (const { part, source } of sources) {
      const dNode = Math.floor(target / g) - Math.floor(source / g);
      const dLocal = (target % g) - (source % g);
      const mapRank = (rank: number): number => {
        const node = (((Math.floor(rank / g) + dNode) % nodes) + nodes) % nodes;
        return node * g + (((((rank % g) + dLocal) % g) + g) % g);
      };
      for (const span of this.simulatedOf(source, part)) {
        let lane = laneId;
        if (span.lane !== this.rankLaneOf.get(source)) {
          const from = this.laneById.get(span.lane)!;
          const label = from.label.replace(`rank ${source}`, `rank ${target}`);
          let id = this.laneByLabel.get(`${from.kind}:${label}`);
          if (id === undefined) {
            id = this.nextLaneId++;
            onNewLane({ id, kind: from.kind, label, rank: target, node: Math.floor(target / g) });
            this.laneByLabel.set(`${from.kind}:${label}`, id);
          }
          lane = id;
        }
        const peer = typeof span.args?.peer === 'number' ? mapRank(span.args.peer) : undefined;
        yield {
          ...span,
          lane,
          rank: target,
          name: span.name?.replace(/rank (\d+)/g, (_, r: string) => `rank ${mapRank(Number(r))}`),
          links: this.moveLinks(span.links, dNode, dLocal, target, peer),
          args: { ...(span.args ?? {}), ...(peer !== undefined ? { peer } : {}), 'mirrors rank': source },
        };
      }
    }
  }

  private moveLinks(
    links: readonly string[],
    dNode: number,
    dLocal: number,
    rank: number,
    peer: number | undefined,
  ): readonly string[] {
    if (links.length === 0) return links;
    const system = this.system;
    const wrap = (value: number, modulo: number): number => ((value % modulo) + modulo) % modulo;
    const nics = Math.max(1, system.fabric.nicsPerNode);
    const moved = links.map((id) =>
      id
        .replace(
          /\bn(\d+)\.(gpu|nicsw|nic)(\d+)/g,
          (_, node: string, kind: string, index: string) =>
            `n${wrap(Number(node) + dNode, this.nodes)}.${kind}${wrap(Number(index) + dLocal, kind === 'gpu' ? this.perNode : nics)}`,
        )
        .replace(/\brail(\d+)\./g, (_, rail: string) => `rail${wrap(Number(rail) + dLocal, nics)}.`),
    );
    // Answered from the layout: a set of every link id would be a million strings at 131,072 ranks.
    const ids = linkIds(system.topology);
    if (moved.every((id) => ids.has(id))) return moved;
    if (peer === undefined || peer === rank) return [];
    const count = linkTable(system.topology).count;
    return system.fabric
      .route(rank, peer)
      .filter((i) => i < count)
      .map((i) => ids.id(i));
  }
}

/** The entry of ascending `nodes` nearest to `node` other than it, the lower on a tie; undefined when none. */
function nearestOther(nodes: readonly number[], node: number): number | undefined {
  let lo = 0;
  let hi = nodes.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (nodes[mid] < node) lo = mid + 1;
    else hi = mid;
  }
  const below = lo > 0 ? nodes[lo - 1] : undefined;
  let at = lo;
  while (at < nodes.length && nodes[at] === node) at++;
  const above = at < nodes.length ? nodes[at] : undefined;
  if (below === undefined) return above;
  if (above === undefined) return below;
  return node - below <= above - node ? below : above;
}

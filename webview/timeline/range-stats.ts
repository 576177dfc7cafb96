// Statistics of a selected time range, computed so that they add up: each rank's range is split into the time
// each phase held it and the time it was idle, so the phases of one rank never sum past the range even where a
// collective's spans overlap (channels run side by side, a collective span holds its own phase spans, a rank's
// reduce stream runs beside its transfers). A span yields to the spans nested inside it (a training step to its
// passes, a pass to its layers): on each lane only the innermost track that is busy counts. Bytes are the spans'
// own bytes, clipped to the range in proportion.
import { PHASES, formatBytes, formatMicros, type Lane, asMicros, asBytes } from '../../src/engine/index';
import { CLOCK_CHECK_ELEMENTS, UNSLICED, finish, type SliceClock, type Steps } from '../shared/slices';
import { t } from '../shared/strings';
import { sortIndicesByTimeSteps, sortScratch } from './sort-by-time';

const COLLECTIVE = PHASES.indexOf('collective');
const COLLECTIVE_PARTS = new Set(
  ['exchange', 'reduce', 'broadcast'].map((p) => PHASES.indexOf(p as (typeof PHASES)[number])),
);

export interface RangeStats {
  readonly startUs: number;
  readonly endUs: number;
  /**
   * Time each phase held a rank within the range, summed over the ranks, µs. Where phases overlap on one rank the
   * instant is shared equally between them, so sum(phaseUs) + idleUs = ranks × (endUs - startUs).
   */
  readonly phaseUs: Float64Array;
  /** Time no span covered a rank within the range, summed over the ranks, µs. */
  readonly idleUs: number;
  readonly ranks: number;
  /** Bytes the spans inside the range sent over links (simulated transfers), clipped to the range. */
  readonly transferredBytes: number;
  /** Message bytes of the collective operations inside the range (spans of phase "collective"), clipped. */
  readonly collectiveBytes: number;
  /** Bytes sent over links per rank per second in the range, GB/s: for a ring AllReduce this is nccl-tests' busbw. */
  readonly busbwGBps: number;
  /** Collective message bytes per rank per second in the range, GB/s (nccl-tests' algbw over the range). */
  readonly algbwGBps: number;
}

/** What range statistics read from the timeline model: rows and their spans as sorted columns. */
export interface RangeSource {
  readonly rows: readonly Lane[];
  readonly rowOffsets: Uint32Array;
  readonly start: Float64Array;
  readonly end: Float64Array;
  readonly phase: Uint8Array;
  readonly ranksInMetadata: number;
  /** Bytes of the span at a sorted position (0 when it moved none). */
  bytesAt(sorted: number): number;
  firstVisible(row: number, timeUs: number): number;
}

/**
 * The rows that speak for ranks (their GPU lanes and streams), grouped by rank; every row is its own group when
 * no lane names a rank. Link and node rows repeat the ranks' transfers and are left out.
 */
function rankGroups(rows: readonly Lane[]): number[][] {
  const byRank = new Map<number, number[]>();
  rows.forEach((lane, r) => {
    if ((lane.kind !== 'rank' && lane.kind !== 'stream') || lane.rank === undefined) return;
    const group = byRank.get(lane.rank) ?? [];
    group.push(r);
    byRank.set(lane.rank, group);
  });
  if (byRank.size > 0) return [...byRank.values()];
  return rows.map((_, r) => [r]);
}

export function computeRangeStats(source: RangeSource, startUs: number, endUs: number): RangeStats {
  return finish(computeRangeStatsSteps(source, startUs, endUs));
}

/**
 * computeRangeStats as a computation that yields whenever `clock` is due: a range over a million spans takes a
 * second or more, so the panel computes it in slices (slices.ts) and input is never held up for long.
 */
export function* computeRangeStatsSteps(
  source: RangeSource,
  startUs: number,
  endUs: number,
  clock: SliceClock = UNSLICED,
): Steps<RangeStats> {
  const phaseUs = new Float64Array(PHASES.length);
  const groups = rankGroups(source.rows);
  const durationUs = Math.max(0, endUs - startUs);
  const totals = { idleUs: 0, transferredBytes: 0, collectiveBytes: 0 };
  // Boundaries of a rank's spans inside the range: +1 where a phase starts, -1 where it ends, on a track. One set of
  // arrays, large enough for the busiest rank, serves every rank in turn.
  const capacity = groups.reduce((most, group) => Math.max(most, edgeBound(source, group, startUs, endUs)), 0);
  const edges = new RankEdges(capacity, startUs, endUs);
  const scratch = sortScratch(capacity);
  yield;
  for (const group of groups) {
    edges.count = 0;
    for (let local = 0; local < group.length; local++) {
      const r = group[local];
      const last = source.rowOffsets[r + 1];
      for (let from = source.firstVisible(r, startUs); from < last; from += CLOCK_CHECK_ELEMENTS) {
        const more = edges.collect(source, r, local, from, Math.min(last, from + CLOCK_CHECK_ELEMENTS), totals);
        if (clock.due()) yield;
        if (!more) break;
      }
    }
    // Edges in time order, ties in the order they were collected (the sort is stable).
    const order = yield* sortIndicesByTimeSteps(edges.times(), clock, scratch);
    const sharer = new PhaseSharer(edges, order, tracksOf(source.rows, group), startUs, endUs, phaseUs);
    while (!sharer.run(CLOCK_CHECK_ELEMENTS)) if (clock.due()) yield;
    totals.idleUs += sharer.idleUs;
  }
  const ranks = Math.max(
    1,
    groups.length > 0 && source.rows.some((l) => l.rank !== undefined) ? groups.length : source.ranksInMetadata,
  );
  const perRankPerUs = (bytes: number): number => (durationUs > 0 ? bytes / ranks / (durationUs * 1e3) : 0);
  return {
    startUs,
    endUs,
    phaseUs,
    idleUs: totals.idleUs,
    ranks,
    transferredBytes: totals.transferredBytes,
    collectiveBytes: totals.collectiveBytes,
    busbwGBps: perRankPerUs(totals.transferredBytes),
    algbwGBps: perRankPerUs(totals.collectiveBytes),
  };
}

/** At most how many edges a rank's rows have in the range: two per span that starts before its end. */
function edgeBound(source: RangeSource, group: readonly number[], startUs: number, endUs: number): number {
  let spans = 0;
  for (const r of group) {
    let lo = source.firstVisible(r, startUs);
    let hi = source.rowOffsets[r + 1];
    const first = lo;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (source.start[mid] < endUs) lo = mid + 1;
      else hi = mid;
    }
    spans += lo - first;
  }
  return 2 * spans;
}

/** One rank's edges as columns, filled span by span; the loops are plain methods, which V8 optimises. */
class RankEdges {
  count = 0;
  readonly timeUs: Float64Array;
  readonly phase: Uint8Array;
  readonly delta: Int8Array;
  /** Index of the span's row within its rank's group. */
  readonly track: Uint32Array;
  constructor(
    capacity: number,
    private readonly startUs: number,
    private readonly endUs: number,
  ) {
    this.timeUs = new Float64Array(capacity);
    this.phase = new Uint8Array(capacity);
    this.delta = new Int8Array(capacity);
    this.track = new Uint32Array(capacity);
  }

  times(): Float64Array {
    return this.timeUs.subarray(0, this.count);
  }

  /**
   * Adds the edges of row r's spans [from, to) clipped to the range, and their bytes to `totals`; false once a
   * span starts at or after the range's end (the rest of the row is outside it).
   */
  collect(
    source: RangeSource,
    r: number,
    local: number,
    from: number,
    to: number,
    totals: { transferredBytes: number; collectiveBytes: number },
  ): boolean {
    const { startUs, endUs } = this;
    for (let i = from; i < to; i++) {
      if (!(source.start[i] < endUs)) return false;
      const clippedFrom = Math.max(startUs, source.start[i]);
      const clippedTo = Math.min(endUs, source.end[i]);
      if (clippedTo <= clippedFrom) continue;
      this.add(clippedFrom, source.phase[i], 1, local);
      this.add(clippedTo, source.phase[i], -1, local);
      const bytes = source.bytesAt(i);
      const spanUs = source.end[i] - source.start[i];
      if (bytes > 0 && spanUs > 0) {
        const clipped = (bytes * (clippedTo - clippedFrom)) / spanUs;
        if (source.phase[i] === COLLECTIVE) totals.collectiveBytes += clipped;
        else totals.transferredBytes += clipped;
      }
    }
    return true;
  }

  private add(timeUs: number, phase: number, delta: number, track: number): void {
    this.timeUs[this.count] = timeUs;
    this.phase[this.count] = phase;
    this.delta[this.count] = delta;
    this.track[this.count++] = track;
  }
}

/** For each row of a group: its lane (several rows of one lane are its nesting depths) and its depth. */
function tracksOf(rows: readonly Lane[], group: readonly number[]): { lane: number; depth: number }[] {
  return group.map((r) => {
    const track = rows[r] as Lane & { laneId?: number; depth?: number };
    return { lane: track.laneId ?? track.id, depth: track.depth ?? 0 };
  });
}

/**
 * Walks one rank's edges in time order and gives each stretch to the phases active in it, equally: on each lane
 * the phases of its innermost busy track, and a collective span yields to its own exchange, reduce and broadcast
 * spans, which say more. Runs a bounded number of edges at a time, so the walk can be cut into slices.
 */
class PhaseSharer {
  idleUs = 0;
  private at: number;
  private k = 0;
  private readonly active: Int32Array;
  private readonly busy: Int32Array;
  /** Each track's lane as a dense index, and its depth. */
  private readonly laneOf: Int32Array;
  private readonly depthOf: Int32Array;
  /** Scratch of activePhases: the innermost busy depth per lane, the phases held, and the holders found. */
  private readonly innermost: Int32Array;
  private readonly held = new Uint8Array(PHASES.length);
  private readonly holders = new Int32Array(PHASES.length);

  constructor(
    private readonly edges: RankEdges,
    private readonly order: Uint32Array,
    tracks: readonly { lane: number; depth: number }[],
    startUs: number,
    private readonly endUs: number,
    private readonly phaseUs: Float64Array,
  ) {
    this.at = startUs;
    this.active = new Int32Array(tracks.length * PHASES.length);
    this.busy = new Int32Array(tracks.length);
    const lanes = new Map<number, number>();
    for (const track of tracks) if (!lanes.has(track.lane)) lanes.set(track.lane, lanes.size);
    this.laneOf = Int32Array.from(tracks, (track) => lanes.get(track.lane)!);
    this.depthOf = Int32Array.from(tracks, (track) => track.depth);
    this.innermost = new Int32Array(lanes.size);
  }

  /** Goes through at most `edgeBudget` more edges; true once the walk has reached the end of the range. */
  run(edgeBudget: number): boolean {
    const { edges, order, endUs, phaseUs } = this;
    const phases = PHASES.length;
    const count = edges.count;
    const stop = Math.min(count, this.k + edgeBudget);
    while (this.at < endUs) {
      const next = this.k < count ? edges.timeUs[order[this.k]] : endUs;
      if (next > this.at) {
        const holders = this.activePhases();
        if (holders === 0) this.idleUs += next - this.at;
        else for (let h = 0; h < holders; h++) phaseUs[this.holders[h]] += (next - this.at) / holders;
        this.at = next;
      }
      while (this.k < count && edges.timeUs[order[this.k]] <= this.at) {
        // A pause between edges of one instant is safe: the next run finds the time not moved and goes on.
        if (this.k >= stop) return false;
        const e = order[this.k];
        this.active[edges.track[e] * phases + edges.phase[e]] += edges.delta[e];
        this.busy[edges.track[e]] += edges.delta[e];
        this.k++;
      }
    }
    return true;
  }

  /** The phases holding the rank now, into this.holders in phase order; returns how many. */
  private activePhases(): number {
    const { active, busy, laneOf, depthOf, innermost, held, holders } = this;
    const phases = PHASES.length;
    // The innermost busy depth of each lane.
    innermost.fill(-1);
    for (let t = 0; t < busy.length; t++)
      if (busy[t] > 0 && depthOf[t] >= innermost[laneOf[t]]) innermost[laneOf[t]] = depthOf[t];
    held.fill(0);
    for (let t = 0; t < busy.length; t++) {
      if (busy[t] <= 0 || innermost[laneOf[t]] !== depthOf[t]) continue;
      for (let p = 0; p < phases; p++) if (active[t * phases + p] > 0) held[p] = 1;
    }
    let count = 0;
    let hasPart = false;
    for (let p = 0; p < phases; p++) {
      if (!held[p]) continue;
      holders[count++] = p;
      if (COLLECTIVE_PARTS.has(p)) hasPart = true;
    }
    if (!hasPart) return count;
    // A collective span yields to its own parts.
    let kept = 0;
    for (let h = 0; h < count; h++) if (holders[h] !== COLLECTIVE) holders[kept++] = holders[h];
    return kept;
  }
}

/** One line of the range summary; `phase` is set on the lines that describe a phase (they get a colour swatch). */
export interface RangeLine {
  readonly label: string;
  readonly text: string;
  readonly phase?: number;
}

/**
 * The summary the details pane shows for a range: length, the bytes and bandwidth that the spans inside account
 * for (over links, or as collective messages; nothing is claimed where no span moved bytes), and per phase its
 * share of the ranks' time and its time per rank. The shares include idle, so they add up to 100 %.
 */
export function rangeSummary(stats: RangeStats): RangeLine[] {
  const rankWord = stats.ranks === 1 ? t('1 rank') : t('{0} ranks', stats.ranks);
  const lines: RangeLine[] = [{ label: t('range'), text: formatMicros(asMicros(stats.endUs - stats.startUs)) }];
  if (stats.transferredBytes > 0) {
    lines.push({ label: t('moved'), text: t('{0} over links', formatBytes(asBytes(stats.transferredBytes))) });
    lines.push({ label: t('busbw'), text: t('{0} GB/s per rank over {1}', stats.busbwGBps.toFixed(1), rankWord) });
  }
  if (stats.collectiveBytes > 0) {
    lines.push({ label: t('collectives'), text: t('{0} of messages', formatBytes(asBytes(stats.collectiveBytes))) });
    lines.push({ label: t('algbw'), text: t('{0} GB/s per rank over {1}', stats.algbwGBps.toFixed(1), rankWord) });
  }
  if (stats.transferredBytes <= 0 && stats.collectiveBytes <= 0)
    lines.push({ label: t('moved'), text: t('no span in the range moved bytes') });
  const totalUs = stats.phaseUs.reduce((a, b) => a + b, 0) + stats.idleUs;
  const share = (us: number): string =>
    t(
      '{0} % · {1} per rank',
      totalUs > 0 ? ((100 * us) / totalUs).toFixed(1) : '0.0',
      formatMicros(asMicros(us / stats.ranks)),
    );
  PHASES.forEach((name, p) => {
    if (stats.phaseUs[p] > 0) lines.push({ label: name, text: share(stats.phaseUs[p]), phase: p });
  });
  if (stats.idleUs > 0) lines.push({ label: t('idle'), text: share(stats.idleUs) });
  return lines;
}

// Statistics of a selected time range, computed so that they add up: each rank's range is split into the time
// each phase held it and the time it was idle, so the phases of one rank never sum past the range even where a
// collective's spans overlap (channels run side by side, a collective span holds its own phase spans, a rank's
// reduce stream runs beside its transfers). A span yields to the spans nested inside it (a training step to its
// passes, a pass to its layers): on each lane only the innermost track that is busy counts. Bytes are the spans'
// own bytes, clipped to the range in proportion.
import { PHASES, formatBytes, formatMicros, type Lane, asMicros, asBytes } from '../../src/engine/index';
import { t } from '../shared/strings';

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
  const phaseUs = new Float64Array(PHASES.length);
  const groups = rankGroups(source.rows);
  const durationUs = Math.max(0, endUs - startUs);
  let idleUs = 0;
  let transferredBytes = 0;
  let collectiveBytes = 0;
  for (const group of groups) {
    // Boundaries of this rank's spans inside the range: +1 where a phase starts, -1 where it ends, on a track.
    const edges: Edge[] = [];
    for (let local = 0; local < group.length; local++) {
      const r = group[local];
      const last = source.rowOffsets[r + 1];
      for (let i = source.firstVisible(r, startUs); i < last && source.start[i] < endUs; i++) {
        const from = Math.max(startUs, source.start[i]);
        const to = Math.min(endUs, source.end[i]);
        if (to <= from) continue;
        edges.push(
          { timeUs: from, phase: source.phase[i], delta: 1, track: local },
          { timeUs: to, phase: source.phase[i], delta: -1, track: local },
        );
        const bytes = source.bytesAt(i);
        const spanUs = source.end[i] - source.start[i];
        if (bytes > 0 && spanUs > 0) {
          const clipped = (bytes * (to - from)) / spanUs;
          if (source.phase[i] === COLLECTIVE) collectiveBytes += clipped;
          else transferredBytes += clipped;
        }
      }
    }
    idleUs += shareOut(edges, tracksOf(source.rows, group), startUs, endUs, phaseUs);
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
    idleUs,
    ranks,
    transferredBytes,
    collectiveBytes,
    busbwGBps: perRankPerUs(transferredBytes),
    algbwGBps: perRankPerUs(collectiveBytes),
  };
}

interface Edge {
  readonly timeUs: number;
  readonly phase: number;
  readonly delta: number;
  /** Index of the span's row within its rank's group. */
  readonly track: number;
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
 * spans, which say more. Returns the idle time.
 */
function shareOut(
  edges: Edge[],
  tracks: readonly { lane: number; depth: number }[],
  startUs: number,
  endUs: number,
  phaseUs: Float64Array,
): number {
  edges.sort((a, b) => a.timeUs - b.timeUs);
  const phases = PHASES.length;
  const active = new Int32Array(tracks.length * phases);
  const busy = new Int32Array(tracks.length);
  let idleUs = 0;
  let at = startUs;
  let k = 0;
  while (at < endUs) {
    const next = k < edges.length ? edges[k].timeUs : endUs;
    if (next > at) {
      const holders = activePhases(active, busy, tracks);
      if (holders.length === 0) idleUs += next - at;
      else for (const p of holders) phaseUs[p] += (next - at) / holders.length;
      at = next;
    }
    while (k < edges.length && edges[k].timeUs <= at) {
      const edge = edges[k];
      active[edge.track * phases + edge.phase] += edge.delta;
      busy[edge.track] += edge.delta;
      k++;
    }
  }
  return idleUs;
}

function activePhases(
  active: Int32Array,
  busy: Int32Array,
  tracks: readonly { lane: number; depth: number }[],
): number[] {
  // The innermost busy depth of each lane.
  const innermost = new Map<number, number>();
  tracks.forEach((track, t) => {
    if (busy[t] > 0 && track.depth >= (innermost.get(track.lane) ?? -1)) innermost.set(track.lane, track.depth);
  });
  const held = new Uint8Array(PHASES.length);
  tracks.forEach((track, t) => {
    if (busy[t] <= 0 || innermost.get(track.lane) !== track.depth) return;
    for (let p = 0; p < PHASES.length; p++) if (active[t * PHASES.length + p] > 0) held[p] = 1;
  });
  const holders: number[] = [];
  let hasPart = false;
  for (let p = 0; p < PHASES.length; p++) {
    if (!held[p]) continue;
    holders.push(p);
    if (COLLECTIVE_PARTS.has(p)) hasPart = true;
  }
  return hasPart ? holders.filter((p) => p !== COLLECTIVE) : holders;
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

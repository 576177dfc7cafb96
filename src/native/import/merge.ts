// Merges Kineto traces of several ranks (PyTorch writes one file per rank) into one trace and one set of
// measurements: spans keep their rank lanes on a shared time axis, and each size's time is the median over ranks.
import { TraceBuilder, asMicros } from '../../engine/index';
import { rowFromTime, type CollectiveName, type ImportResult, type Measurement, type MeasurementRow } from './model';

export class MergeError extends Error {}

export function mergeRankTraces(results: readonly { name: string; result: ImportResult }[]): ImportResult {
  const notTraces = results.filter((r) => r.result.kind !== 'kineto' || !r.result.trace);
  if (notTraces.length > 0)
    throw new MergeError(
      `only PyTorch profiler traces can be merged; ${notTraces.map((r) => `${r.name} is ${r.result.kind}`).join(', ')}`,
    );
  const origins = results.map((r) => Number(r.result.trace!.metadata.facts?.originUs ?? 0));
  const start = Math.min(...origins);
  const ranks = Math.max(...results.map((r) => r.result.trace!.metadata.ranks));
  const builder = new TraceBuilder({
    origin: 'imported:kineto',
    title: `Kineto, ${results.length} files`,
    ranks,
    facts: { originUs: start },
  });
  const seenRanks = new Set<number>();
  results.forEach(({ result }, i) => {
    const trace = result.trace!;
    const shift = origins[i] - start;
    const laneMap = new Map(
      trace.lanes.map((lane) => [
        lane.id,
        builder.lane(lane.kind, lane.label, {
          ...(lane.rank !== undefined ? { rank: lane.rank } : {}),
          ...(lane.node !== undefined ? { node: lane.node } : {}),
        }),
      ]),
    );
    const first = builder.spanCount;
    for (const span of trace.spans) {
      seenRanks.add(span.rank);
      builder.add({
        ...span,
        lane: laneMap.get(span.lane)!,
        startUs: asMicros(span.startUs + shift),
        endUs: asMicros(span.endUs + shift),
      });
    }
    // Each file's flows move with its spans.
    for (const flow of trace.flows ?? []) builder.flow(first + flow.fromSpan, first + flow.toSpan, flow.name);
  });
  const warnings = results.flatMap(({ name, result }) => result.warnings.map((w) => `${name}: ${w}`));
  if (seenRanks.size < results.length)
    warnings.push(`${results.length} files but only ${seenRanks.size} distinct ranks: some files are the same rank`);
  return {
    kind: 'kineto',
    measurements: mergeMeasurements(results.map((r) => r.result.measurements)),
    trace: builder.build(),
    warnings,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function mergeMeasurements(perRank: readonly (readonly Measurement[])[]): Measurement[] {
  const byCollective = new Map<
    CollectiveName,
    { ranks: number; times: Map<number, number[]>; meta: Measurement['meta'] }
  >();
  for (const measurements of perRank) {
    for (const m of measurements) {
      const entry = byCollective.get(m.collective) ?? {
        ranks: m.ranks,
        times: new Map<number, number[]>(),
        meta: m.meta,
      };
      byCollective.set(m.collective, entry);
      for (const row of m.rows) {
        const list = entry.times.get(row.bytes);
        if (list) list.push(row.timeUs);
        else entry.times.set(row.bytes, [row.timeUs]);
      }
    }
  }
  return [...byCollective].map(([collective, entry]) => {
    const rows: MeasurementRow[] = [...entry.times]
      .sort((a, b) => a[0] - b[0])
      .map(([bytes, times]) => ({
        ...rowFromTime(bytes, median(times), collective, entry.ranks),
        calls: times.length,
      }));
    return { kind: 'kineto', collective, ranks: entry.ranks, rows, meta: { ...entry.meta, files: perRank.length } };
  });
}

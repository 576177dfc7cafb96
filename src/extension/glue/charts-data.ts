// Builds the charts panel's data from engine results. Pure: the engine is called with the resolved system, and
// the output is the protocol's ChartsData, so the tests check the numbers the panel will draw.
import {
  ALGORITHMS,
  PROTOCOLS,
  EngineError,
  simulateCollective,
  sweepAllReduce,
  type Bytes,
  type GBps,
  type Micros,
  type CollectiveResult,
  type System,
  type SweepRow,
  asBytes,
} from '../../engine/index';
import type {
  AlgorithmComparisonRow,
  MeasuredSeries,
  NodeScalingRow,
  PhaseBreakdownRow,
  SweepSeries,
} from '../../protocol';
import { formatBucket } from './lens-label';
import { l10n } from './l10n';

export const SWEEP_MIN_BYTES: Bytes = asBytes(8);
export const SWEEP_MAX_BYTES: Bytes = asBytes(8 * 1024 ** 3);

/** The model's auto curve plus one curve per algorithm the system can run, over 8 B … 8 GiB. */
export function sweepSeries(system: System, minBytes = SWEEP_MIN_BYTES, maxBytes = SWEEP_MAX_BYTES): SweepSeries[] {
  const series: SweepSeries[] = [
    { label: l10n.t('auto (what NCCL would pick)'), rows: sweepAllReduce(system, { minBytes, maxBytes, factor: 2 }) },
  ];
  for (const algorithm of ALGORITHMS) {
    let rows: SweepRow[];
    try {
      rows = sweepAllReduce(system, { minBytes, maxBytes, factor: 2, algorithm });
    } catch (error) {
      if (error instanceof EngineError) continue; // The algorithm does not run on this system (NVLS without NVSwitch).
      throw error;
    }
    if (rows.length > 0) series.push({ label: algorithm, rows });
  }
  return series;
}

/** Every algorithm × protocol pair the system supports at one size, fastest first, with the tuner's pick marked. */
export function compareAlgorithmsAt(system: System, bytes: Bytes): AlgorithmComparisonRow[] {
  const auto = simulateCollective(system, { bytes });
  const rows: AlgorithmComparisonRow[] = [];
  for (const algorithm of ALGORITHMS) {
    for (const protocol of PROTOCOLS) {
      try {
        const r = simulateCollective(system, { bytes, algorithm, protocol });
        rows.push({
          algorithm,
          protocol,
          timeUs: r.timeUs,
          busbwGBps: r.busbwGBps,
          chosen: algorithm === auto.algorithm && protocol === auto.protocol,
        });
      } catch (error) {
        if (!(error instanceof EngineError)) throw error;
      }
    }
  }
  return rows.sort((a, b) => a.timeUs - b.timeUs);
}

export function phaseRow(label: string, result: CollectiveResult): PhaseBreakdownRow {
  return {
    label,
    bytes: result.bytes,
    exchangeUs: result.phases.exchange,
    reduceUs: result.phases.reduce,
    broadcastUs: result.phases.broadcast,
  };
}

/** Phase breakdown over a ladder of sizes around a bucket size, so the chart shows where latency stops mattering. */
export function phaseLadder(system: System, centreBytes: Bytes): PhaseBreakdownRow[] {
  const sizes = [1 / 64, 1 / 16, 1 / 4, 1, 4, 16].map((f) => Math.max(8, Math.round(centreBytes * f)));
  return sizes.map((bytes) => phaseRow(formatBucket(bytes), simulateCollective(system, { bytes: asBytes(bytes) })));
}

/** How one collective's time and busbw change as nodes are added to a preset-shaped system. */
export function nodeScaling(
  build: (nodes: number) => System | undefined,
  bytes: Bytes,
  maxNodes = 128,
): NodeScalingRow[] {
  const rows: NodeScalingRow[] = [];
  for (let nodes = 1; nodes <= maxNodes; nodes *= 2) {
    const system = build(nodes);
    if (!system) break;
    const r = simulateCollective(system, { bytes });
    rows.push({ nodes, ranks: system.ranks, timeUs: r.timeUs, busbwGBps: r.busbwGBps });
  }
  return rows;
}

/** Measured rows as a chart series; rows without a positive time are dropped. */
export function measuredSeries(
  label: string,
  rows: readonly { bytes: Bytes; timeUs: Micros; busbwGBps: GBps }[],
): MeasuredSeries {
  return {
    label,
    points: rows
      .filter((r) => r.timeUs > 0 && r.bytes > 0)
      .map((r) => ({ bytes: r.bytes, timeUs: r.timeUs, busbwGBps: r.busbwGBps })),
  };
}

/**
 * The sizes the model line is swept over so that it spans every measured series, not only the one compared: a
 * DeepSpeed log holds all-gathers near 8 MiB beside all-reduces near 1 GiB, and a line over one of them leaves the
 * others with nothing to be read against. Doubling from the power of two at or below the smallest size, to the first
 * one at or above the largest, so the line's ends lie outside the measured points. Undefined without a point.
 */
export function modelSweepRange(series: readonly MeasuredSeries[]): { minBytes: Bytes; maxBytes: Bytes } | undefined {
  const sizes = series.flatMap((s) => s.points.map((p) => p.bytes)).filter((b) => b > 0);
  if (sizes.length === 0) return undefined;
  const smallest = Math.min(...sizes);
  const largest = Math.max(...sizes);
  const minBytes = 2 ** Math.floor(Math.log2(smallest));
  const doublings = Math.max(1, Math.ceil(Math.log2(largest / minBytes)));
  return { minBytes: asBytes(minBytes), maxBytes: asBytes(minBytes * 2 ** doublings) };
}

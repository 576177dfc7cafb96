// "Is my bandwidth normal?": lines a measured sweep up with the simulator's prediction for the same system and
// flags the sizes where the measured bus bandwidth falls further below what the model expects than the model's own
// uncertainty at that size allows (MODEL_UNCERTAINTY_BANDS, compare-bands.ts), for every algorithm NCCL may have
// run there: its cost model's choice, and the pairs it rates within 10 % of that.
import {
  EngineError,
  nearTiedChoices,
  simulateCollective,
  type Algorithm,
  type CollectiveKind,
  type Dtype,
  type Protocol,
  type System,
  type SystemSpec,
  asBytes,
} from '../engine/index';
import type { Measurement } from './import/model';
import { flagRatioFor } from './compare-bands';
import {
  CompareError,
  achieved,
  asResolved,
  collectiveKindOf,
  dtypeOf,
  forcedAlgorithm,
  loggedChoices,
  usableRows,
  withMeasuredNccl,
} from './compare-inputs';

/**
 * NCCL's choice rests on its topology search (channels, per-channel bandwidth), which a system description gives
 * only roughly: pairs its cost model rates within this factor of its choice may be what a real run took. The 4-node
 * H100 VM run (NCCL 2.26.2, its own NCCL_TOPO_FILE) took NVLSTree at 8 MiB, which the 2.27 tables rate 4.6 %
 * slower than tree/LL128.
 */
export const NEAR_TIE_FACTOR = 1.1;

export interface CompareRow {
  readonly bytes: number;
  readonly measuredTimeUs: number;
  readonly expectedTimeUs: number;
  readonly measuredBusbwGBps: number;
  readonly expectedBusbwGBps: number;
  /** measured / expected bus bandwidth (equivalently expected / measured time). */
  readonly ratio: number;
  readonly flagged: boolean;
  /** The ratio below which this size is flagged: 1 − k × the model's uncertainty at this size, or the flat --threshold. */
  readonly threshold: number;
  readonly algorithm: Algorithm;
  readonly protocol: string;
  /** Who picked the pair the row is judged against: NCCL's own log, NCCL_ALGO, or NCCL's cost model. */
  readonly chosenBy: 'nccl-log' | 'NCCL_ALGO' | 'model';
  /**
   * Where the measurement is below the threshold of NCCL's modelled choice but normal for another pair NCCL rates
   * near it: that pair, and the measurement's ratio to it. The row is then not flagged; NCCL took the other pair.
   */
  readonly explainedBy?: { readonly algorithm: Algorithm; readonly protocol: Protocol; readonly ratio: number };
}

export interface CompareResult {
  readonly system: string;
  readonly collective: CollectiveKind;
  readonly ranks: number;
  /** The flat ratio when one was given; undefined when each size is judged by its uncertainty band. */
  readonly threshold?: number;
  /** The NCCL release whose cost model ranked the algorithms (the measurement's own when it names one). */
  readonly ncclVersion: string;
  readonly rows: readonly CompareRow[];
  readonly flagged: number;
}

export function compareMeasurement(
  measurement: Measurement,
  spec: SystemSpec | System,
  options: { threshold?: number } = {},
): CompareResult {
  const system = withMeasuredNccl(asResolved(spec), measurement);
  const kind = collectiveKindOf(measurement);
  if (measurement.ranks !== system.ranks) {
    throw new CompareError(
      `the measurement has ${measurement.ranks} ranks but the system ${system.label} has ${system.ranks}; adjust --nodes/--gpus-per-node or the system file`,
    );
  }
  const algorithm = forcedAlgorithm(measurement);
  const logged = loggedChoices(measurement, kind);
  const rows = usableRows(measurement).map((row): CompareRow => {
    const dtype = dtypeOf(row);
    const ran = algorithm ? undefined : logged.get(row.bytes);
    const predicted =
      (ran && simulateIfRunnable(system, { kind, bytes: asBytes(row.bytes), dtype, ...ran })) ||
      simulateCollective(system, { kind, bytes: asBytes(row.bytes), dtype, ...(algorithm ? { algorithm } : {}) });
    const chosenBy = algorithm
      ? 'NCCL_ALGO'
      : ran && predicted.algorithm === ran.algorithm && predicted.protocol === ran.protocol
        ? 'nccl-log'
        : 'model';
    const best = achieved(row);
    const threshold = options.threshold ?? flagRatioFor(row.bytes, system.nodes, system.spec.intraNode);
    // Times carry more digits than nccl-tests' two-decimal busbw, so the ratio comes from them.
    const ratio = predicted.timeUs / best.timeUs;
    const measuredBusbw = best.busbwGBps > 0 ? best.busbwGBps : predicted.busbwGBps * ratio;
    const explainedBy =
      ratio < threshold && chosenBy === 'model'
        ? nearChoiceExplaining(system, kind, row.bytes, dtype, best.timeUs, threshold, predicted)
        : undefined;
    return {
      bytes: row.bytes,
      measuredTimeUs: best.timeUs,
      expectedTimeUs: predicted.timeUs,
      measuredBusbwGBps: measuredBusbw,
      expectedBusbwGBps: predicted.busbwGBps,
      ratio,
      flagged: ratio < threshold && !explainedBy,
      threshold,
      algorithm: predicted.algorithm,
      protocol: predicted.protocol,
      chosenBy,
      ...(explainedBy ? { explainedBy } : {}),
    };
  });
  return {
    system: system.label,
    collective: kind,
    ranks: system.ranks,
    ...(options.threshold !== undefined ? { threshold: options.threshold } : {}),
    ncclVersion: system.tuner.version,
    rows,
    flagged: rows.filter((r) => r.flagged).length,
  };
}

/** The simulation of a pair NCCL ran, or undefined when the model cannot run that pair on this system. */
export function simulateIfRunnable(
  system: System,
  request: Parameters<typeof simulateCollective>[1],
): ReturnType<typeof simulateCollective> | undefined {
  try {
    return simulateCollective(system, request);
  } catch (error) {
    if (error instanceof EngineError) return undefined;
    throw error;
  }
}

/** The near-tied pair (other than the model's choice) for which the measured time is normal, with the best ratio. */
function nearChoiceExplaining(
  system: System,
  kind: CollectiveKind,
  bytes: number,
  dtype: Dtype,
  measuredUs: number,
  threshold: number,
  chosen: { algorithm: Algorithm; protocol: string },
): CompareRow['explainedBy'] {
  if (system.fabric.idealised) return undefined;
  let found: CompareRow['explainedBy'];
  for (const near of nearTiedChoices(system, kind, asBytes(bytes), dtype, NEAR_TIE_FACTOR)) {
    if (near.algorithm === chosen.algorithm && near.protocol === chosen.protocol) continue;
    const ratio =
      simulateCollective(system, {
        kind,
        bytes: asBytes(bytes),
        dtype,
        algorithm: near.algorithm,
        protocol: near.protocol,
      }).timeUs / measuredUs;
    if (ratio >= threshold && (!found || ratio > found.ratio))
      found = { algorithm: near.algorithm, protocol: near.protocol, ratio };
  }
  return found;
}

/** Median of |predicted − measured| / measured over the rows: the calibration's figure of merit. */
export function medianRelativeError(rows: readonly { measuredTimeUs: number; expectedTimeUs: number }[]): number {
  const errors = rows
    .map((r) => Math.abs(r.expectedTimeUs - r.measuredTimeUs) / r.measuredTimeUs)
    .sort((a, b) => a - b);
  if (errors.length === 0) return 0;
  const mid = Math.floor(errors.length / 2);
  return errors.length % 2 ? errors[mid] : (errors[mid - 1] + errors[mid]) / 2;
}

// "Is my bandwidth normal?": lines a measured sweep up with the simulator's prediction for the same system and
// flags the sizes where the measured bus bandwidth falls below a fraction (70 %) of what the model expects.
import { resolveSystem, simulateCollective, type Algorithm, type CollectiveKind, type Dtype, type System, type SystemSpec } from '../engine/index';
import type { Measurement, MeasurementRow } from './import/model';

export const DEFAULT_FLAG_RATIO = 0.7;

export class CompareError extends Error {}

export interface CompareRow {
  readonly bytes: number;
  readonly measuredTimeUs: number;
  readonly expectedTimeUs: number;
  readonly measuredBusbwGBps: number;
  readonly expectedBusbwGBps: number;
  /** measured / expected bus bandwidth (equivalently expected / measured time). */
  readonly ratio: number;
  readonly flagged: boolean;
  readonly algorithm: Algorithm;
  readonly protocol: string;
}

export interface CompareResult {
  readonly system: string;
  readonly collective: CollectiveKind;
  readonly ranks: number;
  readonly threshold: number;
  readonly rows: readonly CompareRow[];
  readonly flagged: number;
}

const KINDS: Partial<Record<Measurement['collective'], CollectiveKind>> = { allreduce: 'allreduce', allgather: 'allgather', reducescatter: 'reducescatter' };
const DTYPES: Record<string, Dtype> = { float: 'fp32', float32: 'fp32', fp32: 'fp32', half: 'fp16', float16: 'fp16', fp16: 'fp16', bfloat16: 'bf16', bf16: 'bf16' };

export function collectiveKindOf(measurement: Measurement): CollectiveKind {
  const kind = KINDS[measurement.collective];
  if (!kind) throw new CompareError(`the model covers all-reduce, all-gather and reduce-scatter; this measurement is ${measurement.collective}`);
  return kind;
}

/** The algorithm a measurement forced (NCCL_ALGO in calibration JSON), so the model runs the same one. */
export function forcedAlgorithm(measurement: Measurement): Algorithm | undefined {
  const algo = String(measurement.meta.ncclAlgo ?? '').toLowerCase();
  return (['ring', 'tree', 'nvls', 'nvlstree'] as const).find((a) => a === algo);
}

export function usableRows(measurement: Measurement): MeasurementRow[] {
  return measurement.rows.filter((r) => r.bytes > 0 && r.timeUs > 0);
}

/**
 * nccl-tests times each size out of place and in place; the faster one is what the hardware reached. "Is my
 * bandwidth normal?" asks about the hardware, so compare and calibrate both measure against it.
 */
export function achieved(row: MeasurementRow): { readonly timeUs: number; readonly busbwGBps: number } {
  return row.inPlace && row.inPlace.timeUs > 0 && row.inPlace.timeUs < row.timeUs ? row.inPlace : row;
}

export function dtypeOf(row: MeasurementRow): Dtype {
  return DTYPES[(row.dtype ?? 'float').toLowerCase()] ?? 'fp32';
}

export function asResolved(system: SystemSpec | System): System {
  return 'topology' in system ? system : resolveSystem(system);
}

export function compareMeasurement(measurement: Measurement, spec: SystemSpec | System, options: { threshold?: number } = {}): CompareResult {
  const system = asResolved(spec);
  const kind = collectiveKindOf(measurement);
  if (measurement.ranks !== system.ranks) {
    throw new CompareError(`the measurement has ${measurement.ranks} ranks but the system ${system.label} has ${system.ranks}; adjust --nodes/--gpus-per-node or the system file`);
  }
  const threshold = options.threshold ?? DEFAULT_FLAG_RATIO;
  const algorithm = forcedAlgorithm(measurement);
  const rows = usableRows(measurement).map((row): CompareRow => {
    const predicted = simulateCollective(system, { kind, bytes: row.bytes, dtype: dtypeOf(row), ...(algorithm ? { algorithm } : {}) });
    const best = achieved(row);
    // Times carry more digits than nccl-tests' two-decimal busbw, so the ratio comes from them.
    const ratio = predicted.timeUs / best.timeUs;
    const measuredBusbw = best.busbwGBps > 0 ? best.busbwGBps : predicted.busbwGBps * ratio;
    return {
      bytes: row.bytes,
      measuredTimeUs: best.timeUs,
      expectedTimeUs: predicted.timeUs,
      measuredBusbwGBps: measuredBusbw,
      expectedBusbwGBps: predicted.busbwGBps,
      ratio,
      flagged: ratio < threshold,
      algorithm: predicted.algorithm,
      protocol: predicted.protocol,
    };
  });
  return { system: system.label, collective: kind, ranks: system.ranks, threshold, rows, flagged: rows.filter((r) => r.flagged).length };
}

/** Median of |predicted − measured| / measured over the rows: the calibration's figure of merit. */
export function medianRelativeError(rows: readonly { measuredTimeUs: number; expectedTimeUs: number }[]): number {
  const errors = rows.map((r) => Math.abs(r.expectedTimeUs - r.measuredTimeUs) / r.measuredTimeUs).sort((a, b) => a - b);
  if (errors.length === 0) return 0;
  const mid = Math.floor(errors.length / 2);
  return errors.length % 2 ? errors[mid] : (errors[mid - 1] + errors[mid]) / 2;
}

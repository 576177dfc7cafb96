// Compares simulated AllReduce busbw with a published all_reduce_perf run (../shared/calibration/nccl-tests/*.json):
// per row the relative busbw error, per dataset the median absolute error for sizes ≥ 1 MiB and < 1 MiB.
import { NCCL_ALGORITHM_NAMES, type Algorithm, type Protocol } from './collective-types';
import { EngineError } from './errors';
import { simulateCollective } from './simulate';
import { ncclChoiceUnder, ncclEnvLimits } from './nccl-env';
import type { System } from './topology/model';
import { asBytes, type Bytes, type GBps, type Micros, asGBps } from './units';

/** Pass bounds: median absolute busbw error for large (≥ 1 MiB) and small messages. */
export const LARGE_MESSAGE_BYTES = asBytes(1024 * 1024);
export const LARGE_BOUND_PCT = 10;
export const SMALL_BOUND_PCT = 25;

export interface MeasuredRow {
  readonly bytes: Bytes;
  readonly busbwGBps: GBps;
}

export interface ComparedRow extends MeasuredRow {
  readonly simulatedBusbwGBps: GBps;
  readonly errorPct: number;
  readonly algorithm: Algorithm;
  readonly protocol: Protocol;
}

export interface DatasetComparison {
  readonly rows: readonly ComparedRow[];
  /** Undefined when the dataset has no rows in that size class. */
  readonly largeMedianPct?: number;
  readonly smallMedianPct?: number;
  readonly pass: boolean;
  readonly suspect: boolean;
  readonly algorithm: Algorithm | 'auto';
}

interface RawRow {
  readonly [key: string]: unknown;
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

/**
 * The measured busbw of each row. Times carry more digits than the printed busbw, so a measured time is preferred
 * (the faster of out-of-place and in-place: both time the same operation); derived times fall back to busbw.
 */
export function measuredRows(dataset: {
  rows?: unknown;
  derived_fields?: unknown;
  total_ranks?: unknown;
}): MeasuredRow[] {
  if (!Array.isArray(dataset.rows)) throw new EngineError('dataset has no rows array');
  const ranks = num(dataset.total_ranks);
  if (!ranks) throw new EngineError('dataset has no total_ranks');
  const derived = new Set(Array.isArray(dataset.derived_fields) ? dataset.derived_fields.map(String) : []);
  const factor = (2 * (ranks - 1)) / ranks;
  const out: MeasuredRow[] = [];
  for (const row of dataset.rows as RawRow[]) {
    const size = num(row.bytes);
    if (!size) continue;
    const bytes = asBytes(size);
    const times = (['time_us', 'inplace_time_us'] as const)
      .filter((k) => !derived.has(k))
      .map((k) => num(row[k]))
      .filter((t): t is number => t !== undefined);
    if (times.length > 0) {
      out.push({ bytes, busbwGBps: asGBps((bytes / (Math.min(...times) * 1e3)) * factor) });
      continue;
    }
    const busbw = num(row.busbw_GBps) ?? num(row.inplace_busbw_GBps);
    if (busbw) out.push({ bytes, busbwGBps: asGBps(busbw) });
  }
  return out;
}

/** NCCL_ALGO when the dataset forced a single algorithm, else auto (lists and negations: see nccl-env.ts). */
export function forcedAlgorithm(env: unknown): Algorithm | 'auto' {
  const value = env && typeof env === 'object' ? (env as Record<string, unknown>).NCCL_ALGO : undefined;
  if (typeof value !== 'string') return 'auto';
  const algorithm = NCCL_ALGORITHM_NAMES[value.trim().toLowerCase()];
  return algorithm ?? 'auto';
}

function median(values: number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Hooks for refitting a constant without changing the engine (`validate --leave-one-out`): a constant that acts
 * after the simulation (how host and device time combine) is refit by replacing the simulated time, and a fit that
 * judges only some sizes skips simulating the others.
 */
export interface CompareOptions {
  /** Which measured sizes to compare; all when absent. */
  readonly includeBytes?: (bytes: Bytes) => boolean;
  /** Replaces the simulated time of a row, µs; busbw is rescaled from it. */
  readonly adjustTimeUs?: (timeUs: Micros, system: System, channels: number) => Micros;
}

export function compareDataset(
  system: System,
  dataset: { rows?: unknown; derived_fields?: unknown; total_ranks?: unknown; env?: unknown; suspect?: unknown },
  options: CompareOptions = {},
): DatasetComparison {
  const algorithm = forcedAlgorithm(dataset.env);
  const limits = ncclEnvLimits(dataset.env);
  const limited = limits.algorithms !== undefined || limits.protocols !== undefined;
  const include = options.includeBytes;
  const rows: ComparedRow[] = measuredRows(dataset)
    .filter((row) => include === undefined || include(row.bytes))
    .map((row) => {
      // A run that restricted NCCL (NCCL_ALGO, NCCL_PROTO, NCCL_NVLS_ENABLE=0) is compared with NCCL's choice under
      // the same restriction.
      const pick = limited ? ncclChoiceUnder(system, 'allreduce', row.bytes, 'fp32', limits) : undefined;
      const result = simulateCollective(system, {
        bytes: row.bytes,
        dtype: 'fp32',
        algorithm: pick?.algorithm ?? 'auto',
        protocol: pick?.protocol ?? 'auto',
        ncclProtoSet: limits.protocols !== undefined,
      });
      const busbwGBps = options.adjustTimeUs
        ? asGBps((result.busbwGBps * result.timeUs) / options.adjustTimeUs(result.timeUs, system, result.channels))
        : result.busbwGBps;
      const errorPct = (100 * (busbwGBps - row.busbwGBps)) / row.busbwGBps;
      return {
        ...row,
        simulatedBusbwGBps: busbwGBps,
        errorPct,
        algorithm: result.algorithm,
        protocol: result.protocol,
      };
    });
  const largeMedianPct = median(rows.filter((r) => r.bytes >= LARGE_MESSAGE_BYTES).map((r) => Math.abs(r.errorPct)));
  const smallMedianPct = median(rows.filter((r) => r.bytes < LARGE_MESSAGE_BYTES).map((r) => Math.abs(r.errorPct)));
  const pass =
    (largeMedianPct === undefined || largeMedianPct <= LARGE_BOUND_PCT) &&
    (smallMedianPct === undefined || smallMedianPct <= SMALL_BOUND_PCT);
  return { rows, largeMedianPct, smallMedianPct, pass, suspect: dataset.suspect === true, algorithm };
}

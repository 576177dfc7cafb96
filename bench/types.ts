// The contract every bench/<area>.bench.ts implements: `export const benchmarks: Benchmark[]`.
// bench/run.ts repeats each measurement, takes the median and compares it with the target.

export interface Benchmark {
  /** Unique across all files, e.g. "engine: 1 GiB AllReduce, 1,024 GPUs". */
  readonly name: string;
  /** Unit of the value measure() returns, e.g. "ms", "MB", "spans/s". */
  readonly unit: string;
  /** The target the median is compared with. */
  readonly target: number;
  /** Lower is better unless this is set. */
  readonly higherIsBetter?: boolean;
  /** Run by `npm run bench -- --quick` (CI): keep these to a second or two. */
  readonly quick?: boolean;
  /** How many times to measure (default 5; `--quick` caps it at 2). */
  readonly runs?: number;
  /** Runs the real code path once and returns the measured value in `unit`. */
  measure(): Promise<number> | number;
  /** Extra fields for the record (spans produced, peak memory, fit exponent...), read after the runs. */
  extra?: () => Record<string, unknown>;
}

/** One line of bench/results.json. */
export interface BenchRecord {
  readonly name: string;
  readonly unit: string;
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly runs: number;
  readonly target: number;
  readonly pass: boolean;
  readonly higherIsBetter?: boolean;
  readonly file: string;
  readonly runAt: string;
  readonly error?: string;
  readonly [extra: string]: unknown;
}

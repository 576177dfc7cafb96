// `sweep`: AllReduce over a range of sizes, printed in the layout of nccl-tests' all_reduce_perf (every column,
// out-of-place and in-place) so a prediction and a real log can be compared with diff or paste.
import {
  asBytes,
  type Bytes,
  EngineError,
  formatBytes,
  sweepAllReduce,
  type SweepOptions,
  type SweepRow,
  type System,
} from '../../engine/index';
import { UsageError, defineCommand, noPositionals, type CliCommand } from '../command';
import { flagValue, numberFlag, requiredFlag, sizeFlag } from '../flag-values';
import { LIMITS } from '../../config/limits';
import { loadSystem } from '../load-system';
import {
  ALGO_OPTION,
  catalogueHelp,
  collectiveOptions,
  DTYPE_OPTION,
  OP_OPTION,
  PROTO_OPTION,
  scalingFlags,
  SYSTEM_HELP,
  systemOptions,
} from '../collective-flags';
import { formatSweepTable } from '../nccl-tests-table';
import { CancelledError, runParallel, type PoolOptions } from '../parallel/pool';
import { startProgress, type Progress } from '../progress';
import { TOOL_VERSION } from '../version';

/** The `--json` row shape documented in docs/cli.md. */
export function sweepJsonRow(row: SweepRow): object {
  return {
    bytes: row.bytes,
    timeUs: row.timeUs,
    algbwGBps: row.algbwGBps,
    busbwGBps: row.busbwGBps,
    algorithm: row.algorithm,
    protocol: row.protocol,
  };
}

/** The sizes sweepAllReduce visits, in its order: minBytes, minBytes·factor, … ≤ maxBytes. */
function sweepSizes(options: SweepOptions): Bytes[] {
  const factor = options.factor ?? 2;
  const sizes: Bytes[] = [];
  for (let size: number = options.minBytes; size <= options.maxBytes; size *= factor) sizes.push(asBytes(size));
  return sizes;
}

/**
 * sweepAllReduce one size at a time, the same sizes in the same order (the engine's loop, repeated), spread over
 * worker threads (parallel/pool.ts) and reported as sizes finish: a multi-node sweep with a small factor takes
 * seconds. Each size is an independent simulation, so the rows are the serial loop's, in its order.
 */
export async function sweepInParallel(
  system: System,
  options: SweepOptions,
  progress: Progress,
  pool: Omit<PoolOptions, 'system' | 'onProgress'> = {},
): Promise<{ rows: SweepRow[]; workers: number }> {
  const factor = options.factor ?? 2;
  // The engine rejects these with its own message; the loop in sweepSizes would never end on them.
  if (!(factor > 1) || !(options.minBytes > 0)) return { rows: sweepAllReduce(system, options), workers: 0 };
  const sizes = sweepSizes(options);
  const tasks = sizes.map((size) => ({
    kind: 'allreduce-size' as const,
    spec: system.spec,
    options: { ...options, minBytes: size, maxBytes: size },
  }));
  const run = await runParallel(tasks, {
    ...pool,
    system,
    onProgress: (done, total, index) => progress.update(done, total, formatBytes(sizes[index])),
  });
  return { rows: run.results.flat(), workers: run.workers };
}

export const sweepCommand: CliCommand = defineCommand({
  name: 'sweep',
  summary: "Sweep AllReduce sizes on a preset or a system file and print nccl-tests' all_reduce_perf table",
  description: [
    "The table has all_reduce_perf's header and columns (nccl-tests 2.17 layout). #wrong is N/A (nothing is",
    'computed) and in-place repeats out-of-place. The first line marks the output as a prediction, and the',
    'algorithm and protocol chosen for each size follow the table as comment lines.',
  ],
  options: [
    ...systemOptions(SYSTEM_HELP, true),
    { name: 'min-bytes', value: 'size', help: 'Smallest buffer, like nccl-tests -b', default: '8' },
    {
      name: 'max-bytes',
      value: 'size',
      help: 'Largest buffer, like nccl-tests -e; K/M/G are powers of 1024 (1M = 1MiB)',
      default: '8G',
    },
    { name: 'factor', value: 'f', help: 'Multiply the size by f each step, like nccl-tests -f', default: '2' },
    ALGO_OPTION,
    PROTO_OPTION,
    DTYPE_OPTION,
    OP_OPTION,
    { name: 'json', help: 'Print rows {bytes, timeUs, algbwGBps, busbwGBps, algorithm, protocol}' },
    {
      name: 'jobs',
      value: 'n',
      help: 'Simulate sizes on at most n worker threads (default: one per two cores; 1 runs them one by one)',
    },
  ],
  epilog: catalogueHelp,
  async execute({ flags, positional }, io) {
    noPositionals('sweep', positional);
    const system = await loadSystem(requiredFlag(flags, 'system', 'dgx-h100'), scalingFlags(flags));
    const minBytes = sizeFlag('min-bytes', flagValue(flags, 'min-bytes') ?? '8');
    const maxBytes = sizeFlag('max-bytes', flagValue(flags, 'max-bytes') ?? '8G');
    if (minBytes > maxBytes) throw new UsageError(`--min-bytes (${minBytes}) is larger than --max-bytes (${maxBytes})`);
    const factorText = flagValue(flags, 'factor');
    const factor =
      factorText === undefined ? 2 : numberFlag('factor', factorText, (f) => f > 1, 'must be a number greater than 1');
    // A tiny factor over a wide range would print millions of rows; nobody wants that by accident.
    const steps = Math.floor(Math.log(maxBytes / minBytes) / Math.log(factor)) + 1;
    if (steps > LIMITS.sweepPoints.max)
      throw new UsageError(
        `--factor ${factor} from ${minBytes} to ${maxBytes} bytes gives ${steps} sizes, over the limit of ${LIMITS.sweepPoints.max} (docs/limits.md); use a larger factor`,
      );
    const jobsText = flagValue(flags, 'jobs');
    const jobs =
      jobsText === undefined
        ? undefined
        : numberFlag('jobs', jobsText, (n) => Number.isInteger(n) && n >= 1, 'must be a whole number ≥ 1');
    const { algorithm, protocol, dtype, op } = collectiveOptions(flags);
    let rows: SweepRow[];
    const progress = startProgress(io, 'sweep', !flags.has('json'));
    try {
      const options = {
        minBytes,
        maxBytes,
        factor,
        ...(dtype ? { dtype } : {}),
        ...(algorithm ? { algorithm } : {}),
        ...(protocol ? { protocol } : {}),
        ...(op ? { op } : {}),
      };
      rows = (await sweepInParallel(system, options, progress, { jobs, stopOnSigint: true })).rows;
    } catch (error) {
      // Interrupted: the workers are gone; exit as a program stopped by SIGINT does (128 + 2).
      if (error instanceof CancelledError) return 130;
      if (error instanceof EngineError) throw new UsageError(error.message);
      throw error;
    } finally {
      progress.finish();
    }
    const header = {
      toolVersion: TOOL_VERSION,
      systemLabel: system.label,
      ranks: system.ranks,
      nodes: system.nodes,
      gpusPerNode: system.gpusPerNode,
      ncclVersion: system.tuner.version,
      op: op ?? 'sum',
    };
    io.stdout(flags.has('json') ? JSON.stringify(rows.map(sweepJsonRow), null, 2) : formatSweepTable(header, rows));
    return 0;
  },
});

// `sweep`: AllReduce over a range of sizes, printed as a table in the layout of nccl-tests' all_reduce_perf so the
// two can be compared side by side.
import { EngineError, sweepAllReduce, type Dtype, type SweepRow, type System } from '../../engine/index';
import { UsageError, parseFlags, type CliCommand } from '../command';
import { flagValue, numberFlag, requiredFlag, sizeFlag } from '../flag-values';
import { LIMITS } from '../../config/limits';
import { loadSystem } from '../load-system';
import { catalogueHelp, collectiveOptions, scalingFlags, SYSTEM_FLAG_HELP } from '../collective-flags';

/** nccl-tests' names for the element types, so the `type` column reads the same as all_reduce_perf's. */
const NCCL_TYPE_NAMES: Record<Dtype, string> = {
  fp32: 'float',
  fp16: 'half',
  bf16: 'bfloat16',
  fp8e4m3: 'f8e4m3',
  fp8e5m2: 'f8e5m2',
};

/** The `--json` row shape promised in the README. */
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

/** Formats rows like all_reduce_perf's out-of-place columns, with the algorithm and protocol the engine picked. */
export function formatSweepTable(system: System, rows: readonly SweepRow[]): string {
  const columns = [12, 14, 10, 11, 8, 8, 11, 8];
  const line = (cells: string[]): string => cells.map((cell, i) => cell.padStart(columns[i])).join(' ');
  const out = [
    `# collective-profiler sweep: AllReduce on ${system.label}, ${system.ranks} ranks (${system.nodes} × ${system.gpusPerNode}); algorithms as NCCL ${system.tuner.version} chooses`,
    '#',
    `#${line(['size', 'count', 'type', 'time', 'algbw', 'busbw', 'algorithm', 'protocol']).slice(1)}`,
    `#${line(['(B)', '(elements)', '', '(us)', '(GB/s)', '(GB/s)', '', '']).slice(1)}`,
  ];
  for (const row of rows) {
    const time = row.timeUs >= 1e6 ? row.timeUs.toExponential(3) : row.timeUs.toFixed(2);
    out.push(
      line([
        String(row.bytes),
        String(row.count),
        NCCL_TYPE_NAMES[row.dtype],
        time,
        row.algbwGBps.toFixed(2),
        row.busbwGBps.toFixed(2),
        row.algorithm,
        row.protocol,
      ]),
    );
  }
  const averageBusbw = rows.length > 0 ? rows.reduce((sum, r) => sum + r.busbwGBps, 0) / rows.length : 0;
  out.push(`# Avg bus bandwidth    : ${averageBusbw.toFixed(4)}`);
  return out.join('\n');
}

export const sweepCommand: CliCommand = {
  name: 'sweep',
  summary: 'Sweep AllReduce sizes on a preset or a system file and print an nccl-tests style table',
  get usage(): string {
    return [
      'Usage: collective-profiler sweep --system <preset|file> --min-bytes <size> --max-bytes <size> [options]',
      '',
      'Options:',
      SYSTEM_FLAG_HELP,
      '  --min-bytes <size>       Smallest buffer (default 8)',
      '  --max-bytes <size>       Largest buffer (default 8G); sizes: 8, 64K, 8MiB, 8M, 8G',
      '  --factor <f>             Multiply the size by f each step (default 2)',
      '  --algo <name>            auto | ring | tree | nvls | nvlstree | hierarchical | direct (default auto)',
      '  --proto <name>           auto | LL | LL128 | Simple (default auto)',
      '  --dtype <type>           fp32 | fp16 | bf16 | fp8e4m3 | fp8e5m2 (default fp32)',
      '  --json                   Print rows {bytes, timeUs, algbwGBps, busbwGBps, algorithm, protocol}',
      '',
      catalogueHelp(),
    ].join('\n');
  },
  async run(args, io) {
    const { flags, positional } = parseFlags(args, {
      values: [
        'system',
        'nodes',
        'gpus-per-node',
        'nccl',
        'min-bytes',
        'max-bytes',
        'factor',
        'algo',
        'proto',
        'dtype',
      ],
      switches: ['json'],
    });
    if (positional.length > 0) throw new UsageError(`unexpected argument '${positional[0]}'; sweep takes only flags`);
    const system = loadSystem(requiredFlag(flags, 'system', 'dgx-h100'), scalingFlags(flags));
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
    const { algorithm, protocol, dtype } = collectiveOptions(flags);
    let rows: SweepRow[];
    try {
      rows = sweepAllReduce(system, {
        minBytes,
        maxBytes,
        factor,
        ...(dtype ? { dtype } : {}),
        ...(algorithm ? { algorithm } : {}),
        ...(protocol ? { protocol } : {}),
      });
    } catch (error) {
      if (error instanceof EngineError) throw new UsageError(error.message);
      throw error;
    }
    io.stdout(flags.has('json') ? JSON.stringify(rows.map(sweepJsonRow), null, 2) : formatSweepTable(system, rows));
    return 0;
  },
};

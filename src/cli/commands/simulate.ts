// `simulate`: one collective on a preset or a system file, printing time, bandwidths, the algorithm and protocol
// picked and the per-phase breakdown; `--trace` writes the spans as Chrome Trace Event JSON for Perfetto.
import {
  EngineError,
  formatBytes,
  formatMicros,
  simulateCollective,
  traceToChromeJson,
  type CollectiveKind,
  type CollectiveRequest,
  type CollectiveResult,
  type System,
} from '../../engine/index';
import { UsageError, parseFlags, type CliCommand } from '../command';
import { flagValue, requiredFlag, sizeFlag } from '../flag-values';
import { loadSystem } from '../load-system';
import { catalogueHelp, collectiveOptions, scalingFlags, SYSTEM_FLAG_HELP } from '../collective-flags';
import { writeOutput } from '../../native/files/output-file';
import { outputFlag } from '../output-flag';

const KINDS: readonly CollectiveKind[] = ['allreduce', 'reducescatter', 'allgather'];

/** The `--json` shape promised in the README: times in µs, bandwidths in GB/s. */
export function simulateJson(result: CollectiveResult): object {
  return {
    timeUs: result.timeUs,
    algbwGBps: result.algbwGBps,
    busbwGBps: result.busbwGBps,
    algorithm: result.algorithm,
    protocol: result.protocol,
    phases: { exchange: result.phases.exchange, reduce: result.phases.reduce, broadcast: result.phases.broadcast },
  };
}

function describe(system: System, request: CollectiveRequest, result: CollectiveResult): string {
  const phaseText = (['exchange', 'reduce', 'broadcast'] as const)
    .map((p) => `${p} ${formatMicros(result.phases[p])}`)
    .join('   ');
  const rows: [string, string][] = [
    [
      'system',
      `${system.label} (${system.ranks} ranks, ${system.nodes} node${system.nodes === 1 ? '' : 's'} × ${system.gpusPerNode} GPUs)`,
    ],
    [
      'collective',
      `${result.kind} of ${formatBytes(result.bytes)} (${result.bytes} B), ${request.dtype ?? 'fp32'}, op ${request.op ?? 'sum'}`,
    ],
    [
      'algorithm',
      `${result.algorithm} / ${result.protocol}, ${result.channels} channel${result.channels === 1 ? '' : 's'}${request.algorithm && request.algorithm !== 'auto' ? '' : `, as NCCL ${system.tuner.version} would choose`}`,
    ],
    ['time', `${formatMicros(result.timeUs)} (${result.timeUs.toFixed(2)} µs)`],
    ['algbw', `${result.algbwGBps.toFixed(2)} GB/s`],
    ['busbw', `${result.busbwGBps.toFixed(2)} GB/s`],
    ['phases', phaseText],
  ];
  return rows.map(([k, v]) => `${k.padEnd(11)} ${v}`).join('\n');
}

export const simulateCommand: CliCommand = {
  name: 'simulate',
  summary: 'Simulate one AllReduce (or reduce-scatter / all-gather) on a preset or a system file',
  get usage(): string {
    return [
      'Usage: collective-profiler simulate --system <preset|file> --bytes <size> [options]',
      '',
      'Options:',
      SYSTEM_FLAG_HELP,
      '  --bytes <size>           Buffer size: 8, 64K, 8MiB, 8M, 1G (K/M/G are binary)',
      '  --algo <name>            auto | ring | tree | nvls | nvlstree | hierarchical | direct (default auto)',
      '  --proto <name>           auto | LL | LL128 | Simple (default auto)',
      '  --dtype <type>           fp32 | fp16 | bf16 | fp8e4m3 | fp8e5m2 (default fp32)',
      '  --op <op>                sum | avg | premulsum (default sum)',
      '  --collective <kind>      allreduce | reducescatter | allgather (default allreduce)',
      '  --json                   Print {timeUs, algbwGBps, busbwGBps, algorithm, protocol, phases}',
      '  --trace <out.json>       Write the spans as Chrome Trace Event JSON (open in https://ui.perfetto.dev)',
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
        'bytes',
        'algo',
        'proto',
        'dtype',
        'op',
        'collective',
        'trace',
      ],
      switches: ['json'],
    });
    if (positional.length > 0)
      throw new UsageError(`unexpected argument '${positional[0]}'; simulate takes only flags`);
    const system = loadSystem(requiredFlag(flags, 'system', 'dgx-h100'), scalingFlags(flags));
    const kindText = flagValue(flags, 'collective') ?? 'allreduce';
    const kind = KINDS.find((k) => k === kindText.toLowerCase());
    if (!kind) throw new UsageError(`--collective '${kindText}' must be one of ${KINDS.join(', ')}`);
    const traceTarget = outputFlag(flags, 'trace', { allowStdout: true });
    const tracePath = traceTarget?.label;
    const request: CollectiveRequest = {
      kind,
      bytes: sizeFlag('bytes', requiredFlag(flags, 'bytes', '256MiB')),
      ...collectiveOptions(flags),
      trace: tracePath !== undefined,
    };
    let result: CollectiveResult;
    try {
      result = simulateCollective(system, request);
    } catch (error) {
      // An algorithm the system cannot run (NVLS without an NVSwitch, say) is a bad flag, not a crash.
      if (error instanceof EngineError) throw new UsageError(error.message);
      throw error;
    }
    const json = flags.has('json');
    // With the trace on stdout, the summary goes to stderr so stdout stays one JSON document.
    const summaryOut = traceTarget?.stdout ? io.stderr : io.stdout;
    summaryOut(json ? JSON.stringify(simulateJson(result), null, 2) : describe(system, request, result));
    if (traceTarget !== undefined) {
      if (!result.trace) throw new Error('the engine returned no trace although one was requested');
      let text: string;
      try {
        text = JSON.stringify(traceToChromeJson(result.trace));
      } catch (error) {
        // V8 strings stop at about 512 MiB; a trace that large cannot be written as one JSON document.
        if (error instanceof RangeError)
          throw new UsageError(
            `the trace of ${result.spanCount} spans is too large for one JSON file; simulate fewer ranks or bytes`,
          );
        throw error;
      }
      writeOutput(traceTarget, text);
      // With --json (or the trace on stdout), stdout must stay pure JSON, so the note goes to stderr.
      const note = `trace: ${result.spanCount} spans written to ${traceTarget.stdout ? 'stdout' : tracePath} (open it in https://ui.perfetto.dev)`;
      (json || traceTarget.stdout ? io.stderr : io.stdout)(note);
    }
    return 0;
  },
};

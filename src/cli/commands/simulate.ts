// `simulate`: one collective on a preset or a system file, printing time, bandwidths, the algorithm and protocol
// picked and the per-phase breakdown; `--trace` writes the spans as Chrome Trace Event JSON for Perfetto.
import {
  EngineError,
  drawnCollectiveTrace,
  formatBytes,
  formatMicros,
  simulateCollective,
  traceToChromeJson,
  type CollectiveKind,
  type CollectiveRequest,
  type CollectiveResult,
  type System,
} from '../../engine/index';
import { UsageError, defineCommand, noPositionals, type CliCommand } from '../command';
import { flagValue, requiredFlag, sizeFlag } from '../flag-values';
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
import { writeOutput } from '../../native/files/output-file';
import { FORCE_OPTION, outputFlag } from '../output-flag';
import { terminalInline } from '../terminal-text';

const KINDS: readonly CollectiveKind[] = ['allreduce', 'reducescatter', 'allgather'];

/** The `--json` shape promised in the README: times in µs, bandwidths in GB/s. */
export function simulateJson(result: CollectiveResult): object {
  return {
    timeUs: result.timeUs,
    algbwGBps: result.algbwGBps,
    busbwGBps: result.busbwGBps,
    algorithm: result.algorithm,
    protocol: result.protocol,
    phasesUs: { exchange: result.phases.exchange, reduce: result.phases.reduce, broadcast: result.phases.broadcast },
  };
}

function describe(system: System, request: CollectiveRequest, result: CollectiveResult): string {
  const phaseText = (['exchange', 'reduce', 'broadcast'] as const)
    .map((p) => `${p} ${formatMicros(result.phases[p])}`)
    .join('   ');
  const rows: [string, string][] = [
    [
      'system',
      `${terminalInline(system.label)} (${system.ranks} ranks, ${system.nodes} node${system.nodes === 1 ? '' : 's'} × ${system.gpusPerNode} GPUs)`,
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

export const simulateCommand: CliCommand = defineCommand({
  name: 'simulate',
  summary: 'Simulate one AllReduce (or reduce-scatter / all-gather) on a preset or a system file',
  options: [
    ...systemOptions(SYSTEM_HELP, true),
    {
      name: 'bytes',
      value: 'size',
      help: 'Buffer size: 8, 64K, 8MiB, 8M, 1G (K/M/G are powers of 1024)',
      required: true,
    },
    ALGO_OPTION,
    PROTO_OPTION,
    DTYPE_OPTION,
    OP_OPTION,
    { name: 'collective', value: 'kind', help: KINDS.join(' | '), default: 'allreduce' },
    { name: 'json', help: 'Print {timeUs, algbwGBps, busbwGBps, algorithm, protocol, phasesUs}' },
    {
      name: 'trace',
      value: 'out.json',
      help: 'Write the spans as Chrome Trace Event JSON (open in https://ui.perfetto.dev); - for stdout',
    },
    FORCE_OPTION,
  ],
  epilog: catalogueHelp,
  async execute({ flags, positional }, io) {
    noPositionals('simulate', positional);
    const system = await loadSystem(requiredFlag(flags, 'system', 'dgx-h100'), scalingFlags(flags));
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
      // The trace the extension's timeline draws: every rank filled from the rank it mirrors, and the launch and
      // pacing drawn, so it ends at the predicted time printed above.
      const drawn = drawnCollectiveTrace(system, result, result.trace);
      let text: string;
      try {
        text = JSON.stringify(traceToChromeJson(drawn));
      } catch (error) {
        // V8 strings stop at about 512 MiB; a trace that large cannot be written as one JSON document.
        if (error instanceof RangeError)
          throw new UsageError(
            `the trace of ${drawn.spans.length} spans is too large for one JSON file; simulate fewer ranks or bytes`,
          );
        throw error;
      }
      writeOutput(traceTarget, text);
      // With --json (or the trace on stdout), stdout must stay pure JSON, so the note goes to stderr.
      const note = `trace: ${drawn.spans.length} spans written to ${traceTarget.stdout ? 'stdout' : tracePath} (open it in https://ui.perfetto.dev)`;
      (json || traceTarget.stdout ? io.stderr : io.stdout)(note);
    }
    return 0;
  },
});

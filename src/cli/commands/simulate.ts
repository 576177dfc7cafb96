// `simulate`: one collective on a preset or a system file, printing time, bandwidths, the algorithm and protocol
// picked and the per-phase breakdown; `--trace` writes the spans as Chrome Trace Event JSON for Perfetto, every
// rank's or summarised per node (`--trace-detail`, cli/trace-output.ts).
import {
  EngineError,
  formatBytes,
  formatMicros,
  resolvedTraceDetail,
  simulateCollective,
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
import { TRACE_DETAIL_OPTION, TRACE_SIMULATED_SPANS, traceDetailFlag, writeTrace } from '../trace-output';
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
    TRACE_DETAIL_OPTION,
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
    const traceDetail = traceDetailFlag(flags);
    const tracePath = traceTarget?.label;
    const request: CollectiveRequest = {
      kind,
      bytes: sizeFlag('bytes', requiredFlag(flags, 'bytes', '256MiB')),
      ...collectiveOptions(flags),
      trace: tracePath !== undefined,
      ...(tracePath !== undefined ? { traceSpanLimit: TRACE_SIMULATED_SPANS } : {}),
      // A summary makes the spans of the nodes it draws only (engine/trace/summary.ts).
      traceForSummary: tracePath !== undefined && resolvedTraceDetail(traceDetail, system.ranks) === 'summary',
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
      const { spans, detail } = await writeTrace(traceTarget, system, result, traceDetail);
      // With --json (or the trace on stdout), stdout must stay pure JSON, so the note goes to stderr.
      const note = `trace (${detail}): ${spans} spans written to ${traceTarget.stdout ? 'stdout' : tracePath} (open it in https://ui.perfetto.dev)`;
      (json || traceTarget.stdout ? io.stderr : io.stdout)(note);
    }
    return 0;
  },
});

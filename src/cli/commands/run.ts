// `run --engine native`: real collectives through torch.distributed on this machine's GPUs (NCCL) or CPUs
// (gloo), with the fused all_reduce next to step-by-step ring and tree runs traced per rank and phase.
import { constants as osConstants } from 'node:os';
import { formatBytes, formatMicros, traceToChromeJson, asMicros, asBytes } from '../../engine/index';
import { nativeMeasurements, nativeTrace } from '../../native/convert';
import { NativeRunError } from '../../native/errors';
import { srunCommand, torchrunCommand } from '../../native/launch-commands';
import { checkEnvironment } from '../../native/python';
import { runNative, type NativeRunResult } from '../../native/runner';
import { UsageError, defineCommand, noPositionals, type CliCommand, type CliIo } from '../command';
import { choiceFlag, enforceLimit, flagValue, numberFlag, positiveIntegerFlag, sizeFlag } from '../flag-values';
import { LIMITS } from '../../config/limits';
import { loadTrainingRun } from '../load-training';
import { writeOutput } from '../../native/files/output-file';
import { FORCE_OPTION, outputFlag } from '../output-flag';
import { startProgress } from '../progress';

function sizeList(flag: string, text: string): number[] {
  const parts = text.split(',');
  enforceLimit('sizeCount', `--${flag} (${parts.length} sizes)`, parts.length);
  return parts.map((part) => sizeFlag(flag, part));
}

/** Every signal that asks a program to stop; SIGQUIT too, whose default would leave the ranks running. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
/** The environment check starts one Python that imports torch: a minute is plenty, the run's watchdog less. */
const ENV_CHECK_MS = 60_000;
/** Failures that are the user's environment, not the run: the same exit code (2) as a bad input. */
const USER_ERROR_KINDS: ReadonlySet<string> = new Set(['no-python', 'no-torch', 'no-distributed']);

function table(run: NativeRunResult): string {
  const out = [
    `# native run: ${run.env.worldSize} ranks, ${run.env.backend}, torch ${run.env.torch}${run.env.ncclVersion ? `, NCCL ${run.env.ncclVersion}` : ''}`,
  ];
  // The `for` column appears only when buckets were timed too; a table of sizes alone does not need it.
  const withBuckets = run.results.some((r) => r.label === 'bucket');
  const forColumn = (text: string): string => (withBuckets ? ` ${text.padStart(7)}` : '');
  out.push(
    `#${'size'.padStart(11)}${forColumn('for')} ${'fused'.padStart(11)} ${'rs+ag'.padStart(11)} ${'ring steps'.padStart(11)} ${'tree steps'.padStart(11)} ${'busbw'.padStart(9)}  verified`,
    `#${''.padStart(11)}${forColumn('')} ${'(time)'.padStart(11)} ${'(time)'.padStart(11)} ${'(time)'.padStart(11)} ${'(time)'.padStart(11)} ${'(GB/s)'.padStart(9)}`,
  );
  const keys = [...new Set(run.results.map((r) => `${r.label}:${r.bytes}`))];
  for (const key of keys) {
    const of = run.results.filter((r) => `${r.label}:${r.bytes}` === key);
    const get = (kind: string): string => {
      const r = of.find((x) => x.kind === kind);
      return r?.unsupported ? 'n/a' : r?.timeUs !== undefined ? formatMicros(asMicros(r.timeUs)) : '-';
    };
    const fused = of.find((r) => r.kind === 'fused');
    const verified = of.every((r) => r.unsupported || (r.verified?.sum && (r.verified.avg ?? true)));
    out.push(
      ` ${formatBytes(asBytes(of[0].bytes)).padStart(11)}${forColumn(of[0].label)} ${get('fused').padStart(11)} ${get('reduce_scatter+all_gather').padStart(11)} ${get('ring').padStart(11)} ${get('tree').padStart(11)} ${(fused?.busbwGBps ?? 0).toFixed(3).padStart(9)}  ${verified ? 'sum+avg ok' : 'MISMATCH'}`,
    );
  }
  const unsupported = run.results.find((r) => r.unsupported)?.unsupported;
  if (unsupported) out.push(`# rs+ag n/a: ${unsupported}`);
  return out.join('\n');
}

function printLaunch(flags: Map<string, string[]>, sizes: number[], buckets: number[]): string {
  const nodes = positiveIntegerFlag('nodes', flagValue(flags, 'nodes') ?? '2', 'nodes');
  const gpusPerNode = positiveIntegerFlag('gpus-per-node', flagValue(flags, 'gpus-per-node') ?? '8', 'gpusPerNode');
  const rendezvous = flagValue(flags, 'rendezvous') ?? '$MASTER_ADDR:29500';
  const launch = {
    nodes,
    gpusPerNode,
    rendezvous,
    sizesBytes: sizes,
    bucketsBytes: buckets,
    python: flagValue(flags, 'python'),
    output: 'collective-run.jsonl',
  };
  return [
    '# On every node (torchrun rendezvous):',
    torchrunCommand(launch),
    '',
    '# Or from a Slurm allocation:',
    srunCommand(launch),
    '',
    '# Then: collective-profiler import collective-run.jsonl',
  ].join('\n');
}

async function execute(flags: Map<string, string[]>, io: CliIo): Promise<number> {
  // The output path is checked first: a run takes minutes, and its results must not be lost to a bad path.
  const traceTarget =
    flags.has('print-launch') || flags.has('env-check') ? undefined : outputFlag(flags, 'trace', { allowStdout: true });
  const sizes = sizeList('sizes', flagValue(flags, 'sizes') ?? '1M');
  let buckets = flagValue(flags, 'buckets') ? sizeList('buckets', flagValue(flags, 'buckets')!) : [];
  const config = flagValue(flags, 'config');
  if (config) buckets = [...buckets, loadTrainingRun(config).run.training.bucketBytes];
  if (flags.has('print-launch')) {
    io.stdout(printLaunch(flags, sizes, buckets));
    return 0;
  }
  const python = flagValue(flags, 'python');
  if (flags.has('env-check')) {
    let env;
    try {
      env = await checkEnvironment({ ...(python ? { python } : {}), timeoutMs: ENV_CHECK_MS });
    } catch (error) {
      if (error instanceof NativeRunError) throw new UsageError(error.message);
      throw error;
    }
    io.stdout(
      flags.has('json')
        ? JSON.stringify(env, null, 2)
        : `python ${env.python} (${env.pythonVersion}), torch ${env.torch}, backend ${env.backend}, ${env.gpuCount} GPUs, NCCL ${env.ncclVersion ?? 'n/a'}`,
    );
    return 0;
  }
  // Every count is checked before the environment check, which starts Python and can take seconds.
  const nprocText = flagValue(flags, 'nproc');
  const givenNproc = nprocText === undefined ? undefined : positiveIntegerFlag('nproc', nprocText, 'processes');
  const timeoutS = numberFlag(
    'timeout',
    flagValue(flags, 'timeout') ?? '300',
    // Under a second no Python starts, so the watchdog would only ever report a hang that did not happen.
    (v) => v >= 1,
    'must be at least 1 second',
    'timeoutSeconds',
  );
  const iters = positiveIntegerFlag('iters', flagValue(flags, 'iters') ?? '5', 'iterations');
  const algorithms = (flagValue(flags, 'algorithms') ?? 'ring,tree')
    .split(',')
    .map((a) => choiceFlag('algorithms', a, ['ring', 'tree'] as const));
  const launcher = choiceFlag('launcher', flagValue(flags, 'launcher') ?? 'direct', ['direct', 'torchrun'] as const);
  const backend = choiceFlag('backend', flagValue(flags, 'backend') ?? 'auto', ['auto', 'gloo', 'nccl'] as const);
  // SIGINT, SIGTERM and SIGHUP alike stop every rank's process tree before the CLI exits, from here on: a signal
  // during the environment check ends the run before it starts.
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    received ??= signal;
    controller.abort();
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  try {
    // The check is bounded by the run's own watchdog and stopped by the same signals as the ranks.
    const env = await checkEnvironment({
      ...(python ? { python } : {}),
      timeoutMs: Math.min(ENV_CHECK_MS, timeoutS * 1000),
      signal: controller.signal,
    });
    if (received) throw new NativeRunError('cancelled', `stopped by ${received} before the ranks started`);
    const nproc = givenNproc ?? (env.gpuCount > 0 ? Math.min(env.gpuCount, LIMITS.processes.max) : 4);
    const progress = startProgress(io, 'run', !flags.has('json'));
    const run = await runNative({
      nproc,
      sizesBytes: sizes,
      bucketsBytes: buckets,
      python: env.python,
      timeoutMs: timeoutS * 1000,
      signal: controller.signal,
      iters,
      algorithms,
      launcher,
      backend,
      onProgress: (p) => {
        if (p.bytes !== undefined) progress.update(p.done, p.total, `${p.label} ${formatBytes(asBytes(p.bytes))}`);
      },
    }).finally(() => progress.finish());
    const trace = nativeTrace(run, `native all_reduce, ${nproc} ranks`);
    if (traceTarget) writeOutput(traceTarget, JSON.stringify(traceToChromeJson(trace)));
    const ok = run.results.every((r) => r.unsupported || (r.verified?.sum && (r.verified.avg ?? true)));
    if (flags.has('json')) {
      const measurements = nativeMeasurements(run);
      (traceTarget?.stdout ? io.stderr : io.stdout)(
        JSON.stringify(
          {
            kind: 'native',
            ranks: nproc,
            env: run.env,
            rows: measurements[0]?.rows ?? [],
            measurements,
            results: run.results,
            spans: trace.spans.length,
          },
          null,
          2,
        ),
      );
    } else (traceTarget?.stdout ? io.stderr : io.stdout)(table(run));
    return ok ? 0 : 1;
  } catch (error) {
    if (!(error instanceof NativeRunError)) throw error;
    io.stderr(
      `error (${error.kind}): ${received ? `stopped by ${received}; every rank's process tree was killed` : error.message}`,
    );
    // A signal ends the CLI as the signal would have (128 + its number); an environment without Python or torch
    // is an input problem (2); a run that failed is 1.
    if (received) return 128 + (osConstants.signals[received] ?? 15);
    return USER_ERROR_KINDS.has(error.kind) ? 2 : 1;
  } finally {
    for (const signal of STOP_SIGNALS) process.removeListener(signal, onSignal);
  }
}

export const runCommand: CliCommand = defineCommand({
  name: 'run',
  summary: 'Run real all_reduce collectives through torch.distributed (NCCL on GPUs, gloo on CPUs)',
  options: [
    {
      name: 'engine',
      value: 'native',
      help: 'The engine (only native: the simulator is `simulate`/`sweep`)',
      default: 'native',
    },
    { name: 'nproc', value: 'n', help: 'Ranks on this machine', default: 'the GPU count, else 4 gloo ranks' },
    { name: 'sizes', value: 'list', help: 'Message sizes, comma-separated (K/M/G are powers of 1024)', default: '1M' },
    { name: 'buckets', value: 'list', help: 'Gradient bucket sizes to time as well' },
    { name: 'config', value: 'file', help: 'Training config: its gradient bucket size is timed too' },
    {
      name: 'python',
      value: 'path',
      help: 'Python with torch',
      default: '$COLLECTIVE_PROFILER_PYTHON, /usr/bin/python3, python3',
    },
    { name: 'launcher', value: 'l', help: 'direct (one process per rank, env://) | torchrun', default: 'direct' },
    { name: 'backend', value: 'b', help: 'auto | gloo | nccl', default: 'auto' },
    { name: 'iters', value: 'n', help: 'Timed iterations per size for fused and rs+ag', default: '5' },
    { name: 'algorithms', value: 'list', help: 'Step-by-step algorithms to trace: ring, tree', default: 'ring,tree' },
    { name: 'timeout', value: 's', help: 'Watchdog: kill a run that has not finished after s seconds', default: '300' },
    {
      name: 'trace',
      value: 'file',
      help: 'Write the per-rank, per-step trace as Chrome Trace Event JSON; - for stdout',
    },
    FORCE_OPTION,
    { name: 'json', help: 'Print {kind, ranks, rows, measurements, results} as JSON' },
    { name: 'env-check', help: 'Report Python, torch, backend, GPU count and NCCL version, then exit' },
    {
      name: 'print-launch',
      help: 'Print torchrun and srun lines for a cluster (with --nodes, --gpus-per-node, --rendezvous)',
    },
    { name: 'nodes', value: 'n', help: 'Nodes of the cluster, for --print-launch', default: '2' },
    { name: 'gpus-per-node', value: 'g', help: 'GPUs per node of the cluster, for --print-launch', default: '8' },
    {
      name: 'rendezvous',
      value: 'host:port',
      help: 'Rendezvous endpoint of the cluster, for --print-launch',
      default: '$MASTER_ADDR:29500',
    },
  ],
  async execute({ flags, positional }, io) {
    noPositionals('run', positional);
    const engine = flagValue(flags, 'engine') ?? 'native';
    if (engine !== 'native')
      throw new UsageError(
        `--engine '${engine}': run drives the native engine only; use simulate or sweep for the simulator`,
      );
    return execute(flags, io);
  },
});

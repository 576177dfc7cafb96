// `compare <measured>`: "is my bandwidth normal?" Lines a measured sweep up with the simulator's prediction for
// the same system and flags the sizes where the measured bus bandwidth is below 70 % of the model's.
import { formatBytes } from '../../engine/index';
import { compareMeasurement, DEFAULT_FLAG_RATIO, medianRelativeError, type CompareResult } from '../../native/compare';
import { UsageError, parseFlags, type CliCommand } from '../command';
import { flagValue, numberFlag } from '../flag-values';
import { asUsageError, comparableMeasurement, systemForMeasurement } from '../measured-system';
import { loadMeasurementFile } from './import';

function table(result: CompareResult, path: string, source: string, assumptions: readonly string[]): string {
  const out = [
    `# ${path}: ${result.collective} on ${result.ranks} ranks vs the model of ${result.system} (${source}), NCCL ${result.ncclVersion}'s choices`,
    `#${'size'.padStart(11)} ${'measured'.padStart(10)} ${'expected'.padStart(10)} ${'ratio'.padStart(6)}`,
    `#${''.padStart(11)} ${'busbw GB/s'.padStart(10)} ${'busbw GB/s'.padStart(10)}`,
  ];
  for (const r of result.rows) {
    const note = r.flagged
      ? `  << below ${Math.round(result.threshold * 100)} % of the model`
      : r.explainedBy ? `  normal for ${r.explainedBy.algorithm}/${r.explainedBy.protocol} (${r.explainedBy.ratio.toFixed(2)}), which NCCL ${result.ncclVersion} rates near ${r.algorithm}/${r.protocol}` : '';
    out.push(` ${formatBytes(r.bytes).padStart(11)} ${r.measuredBusbwGBps.toFixed(2).padStart(10)} ${r.expectedBusbwGBps.toFixed(2).padStart(10)} ${r.ratio.toFixed(2).padStart(6)}${note}`);
  }
  const logged = result.rows.filter((r) => r.chosenBy === 'nccl-log').length;
  if (logged > 0) out.push(`# ${logged} of ${result.rows.length} sizes judged against the algorithm and protocol NCCL logged for them`);
  for (const note of assumptions) out.push(`# assumed: ${note}`);
  out.push(`# ${result.flagged} of ${result.rows.length} sizes flagged; median |model − measured| / measured time: ${(medianRelativeError(result.rows) * 100).toFixed(1)} %`);
  return out.join('\n');
}

export const compareCommand: CliCommand = {
  name: 'compare',
  summary: 'Compare a measurement with the model of its system and flag sizes below 70 % of the expected busbw',
  usage: [
    'Usage: collective-profiler compare <measured> [--system <preset|file>] [--json] [--threshold 0.7]',
    '',
    'Reads anything `import` reads (nccl-tests output, NCCL logs, Kineto traces, DeepSpeed logs, native runs) and',
    'calibration JSON. The system is --system, else calibration/systems/<basename>.json for calibration JSON, else',
    'what the file itself describes. Exit code 1 when a size is flagged.',
    '',
    'Options:',
    '  --system <preset|file>   The system the measurement ran on (a preset is scaled to the measured ranks)',
    '  --nodes <n>, --gpus-per-node <g>   Scale the system explicitly',
    '  --gpu <name>             GPU model for NCCL logs that do not name theirs',
    '  --nccl <version>         Rank algorithms as this NCCL release does (default: the measurement\'s, else 2.30)',
    `  --threshold <r>          Flag sizes whose measured busbw is below r × expected (default ${DEFAULT_FLAG_RATIO})`,
    '  --json                   Print {rows: [{bytes, measuredBusbwGBps, expectedBusbwGBps, ratio, flagged, explainedBy?}], flagged}',
    '',
    'A size is flagged when it is below the threshold for NCCL\'s modelled choice and for every pair NCCL\'s cost model',
    'rates within 10 % of it (explainedBy names the pair it is normal for); where an NCCL_DEBUG log names the pair',
    'NCCL ran at a size, that pair is the expectation (chosenBy: nccl-log). The cost model is that of the NCCL',
    'release the measurement names (ncclVersion in a system file overrides it), else the newest known.',
  ].join('\n'),
  async run(args, io) {
    const { flags, positional } = parseFlags(args, { values: ['system', 'nodes', 'gpus-per-node', 'nccl', 'gpu', 'threshold'], switches: ['json'] });
    if (positional.length !== 1) throw new UsageError('compare takes exactly one measured file');
    const path = positional[0];
    const threshold = numberFlag('threshold', flagValue(flags, 'threshold') ?? String(DEFAULT_FLAG_RATIO), (v) => v > 0 && v <= 1, 'must be a ratio in (0, 1]');
    const measurement = comparableMeasurement(loadMeasurementFile(path, flagValue(flags, 'gpu')), path);
    const { system, source } = systemForMeasurement(flags, measurement, path);
    const result = asUsageError(() => compareMeasurement(measurement, system, { threshold }));
    if (flags.has('json')) {
      const rows = result.rows.map((r) => ({ bytes: r.bytes, measuredBusbwGBps: r.measuredBusbwGBps, expectedBusbwGBps: r.expectedBusbwGBps, ratio: r.ratio, flagged: r.flagged, measuredTimeUs: r.measuredTimeUs, expectedTimeUs: r.expectedTimeUs, algorithm: r.algorithm, protocol: r.protocol, chosenBy: r.chosenBy, ...(r.explainedBy ? { explainedBy: r.explainedBy } : {}) }));
      io.stdout(JSON.stringify({ system: result.system, systemSource: source, ncclVersion: result.ncclVersion, collective: result.collective, ranks: result.ranks, threshold, rows, flagged: result.flagged, medianError: medianRelativeError(result.rows) }, null, 2));
    } else io.stdout(table(result, path, source, source.startsWith('described by') ? ((measurement.meta.assumptions as string[] | undefined) ?? []) : []));
    return result.flagged > 0 ? 1 : 0;
  },
};

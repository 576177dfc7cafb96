// `compare <measured>`: "is my bandwidth normal?" Lines a measured sweep up with the simulator's prediction for
// the same system and flags the sizes where the measured bus bandwidth is below what the model's uncertainty at
// that size allows, and says which part of the system would explain the flagged sizes.
import { formatBytes, asBytes } from '../../engine/index';
import { compareMeasurement, medianRelativeError, type CompareResult } from '../../native/compare';
import { UNCERTAINTY_K } from '../../native/compare-bands';
import { explainFlagged, type CompareVerdict } from '../../native/compare-verdict';
import { UsageError, defineCommand, type CliCommand } from '../command';
import { flagValue, numberFlag } from '../flag-values';
import { asUsageError, comparableMeasurement, systemForMeasurement } from '../measured-system';
import { loadMeasurementFile } from './import';
import { terminalInline } from '../terminal-text';

function table(
  result: CompareResult,
  verdict: CompareVerdict | undefined,
  path: string,
  source: string,
  assumptions: readonly string[],
): string {
  const out = [
    `# ${terminalInline(path)}: ${result.collective} on ${result.ranks} ranks vs the model of ${terminalInline(result.system)} (${terminalInline(source)}), NCCL ${result.ncclVersion}'s choices`,
    `#${'size'.padStart(11)} ${'measured'.padStart(10)} ${'expected'.padStart(10)} ${'ratio'.padStart(6)}`,
    `#${''.padStart(11)} ${'busbw GB/s'.padStart(10)} ${'busbw GB/s'.padStart(10)}`,
  ];
  for (const r of result.rows) {
    const note = r.flagged
      ? `  << below ${Math.round(r.threshold * 100)} % of the model${result.threshold === undefined ? ' (its uncertainty here)' : ''}`
      : r.explainedBy
        ? `  normal for ${r.explainedBy.algorithm}/${r.explainedBy.protocol} (${r.explainedBy.ratio.toFixed(2)}), which NCCL ${result.ncclVersion} rates near ${r.algorithm}/${r.protocol}`
        : '';
    out.push(
      ` ${formatBytes(asBytes(r.bytes)).padStart(11)} ${r.measuredBusbwGBps.toFixed(2).padStart(10)} ${r.expectedBusbwGBps.toFixed(2).padStart(10)} ${r.ratio.toFixed(2).padStart(6)}${note}`,
    );
  }
  const logged = result.rows.filter((r) => r.chosenBy === 'nccl-log').length;
  if (logged > 0)
    out.push(
      `# ${logged} of ${result.rows.length} sizes judged against the algorithm and protocol NCCL logged for them`,
    );
  for (const note of assumptions) out.push(`# assumed: ${note}`);
  out.push(
    `# ${result.flagged} of ${result.rows.length} sizes flagged; median |model − measured| / measured time: ${(medianRelativeError(result.rows) * 100).toFixed(1)} %`,
  );
  if (verdict) out.push(`# verdict: ${verdict.sentence}`);
  return out.join('\n');
}

export const compareCommand: CliCommand = defineCommand({
  name: 'compare',
  summary:
    "Compare a measurement with the model of its system and flag sizes below what the model's uncertainty allows",
  positionals: '<measured>',
  description: [
    'Reads anything `import` reads (nccl-tests output, NCCL logs, Kineto traces, DeepSpeed logs, native runs) and',
    'calibration JSON. The system is --system, else calibration/systems/<basename>.json for calibration JSON, else',
    'what the file itself describes. Exit code 1 when a size is flagged.',
    '',
    "The model's uncertainty per size band (single or multi node; < 1 MiB, 1-64 MiB, >= 64 MiB) is the worst shortfall",
    'of the healthy published runs (docs/calibration.md). A flagged run gets a verdict: the part (NIC, GPU-to-NIC PCIe',
    'path, NVLink) whose release below its healthy bound explains the flagged sizes, as calibrate finds it, or the',
    'algorithm NCCL chose when another pair matches them.',
    '',
    "A size is flagged when it is below the threshold for NCCL's modelled choice and for every pair NCCL's cost model",
    'rates within 10 % of it (explainedBy names the pair it is normal for); where an NCCL_DEBUG log names the pair',
    'NCCL ran at a size, that pair is the expectation (chosenBy: nccl-log). The cost model is that of the NCCL',
    'release the measurement names (ncclVersion in a system file overrides it), else the newest known.',
  ],
  options: [
    {
      name: 'system',
      value: 'preset|file',
      help: 'The system the measurement ran on (a preset is scaled to the measured ranks)',
    },
    { name: 'nodes', value: 'n', help: 'Scale the system to n nodes' },
    { name: 'gpus-per-node', value: 'g', help: 'Use g GPUs in each node' },
    {
      name: 'gpu',
      value: 'name',
      help: 'GPU model for NCCL logs that do not name theirs (catalogue name, e.g. H100-SXM)',
    },
    {
      name: 'nccl',
      value: 'version',
      help: "Rank algorithms as this NCCL release does (default: the measurement's, else 2.30)",
    },
    {
      name: 'threshold',
      value: 'r',
      help: 'Flag sizes whose measured busbw is below r × expected',
      default: `per size band, 1 − ${UNCERTAINTY_K} × the model's uncertainty`,
    },
    {
      name: 'json',
      help: 'Print {rows: [{bytes, measuredBusbwGBps, expectedBusbwGBps, ratio, flagged, threshold, explainedBy?}], flagged, verdict?}',
    },
  ],
  async execute({ flags, positional }, io) {
    if (positional.length !== 1) throw new UsageError('compare takes exactly one measured file');
    const path = positional[0];
    const given = flagValue(flags, 'threshold');
    const threshold =
      given === undefined
        ? undefined
        : numberFlag('threshold', given, (v) => v > 0 && v <= 1, 'must be a ratio in (0, 1]');
    const measurement = comparableMeasurement(loadMeasurementFile(path, flagValue(flags, 'gpu')), path);
    const { system, source } = await systemForMeasurement(flags, measurement, path);
    const result = asUsageError(() =>
      compareMeasurement(measurement, system, threshold === undefined ? {} : { threshold }),
    );
    const verdict = asUsageError(() => explainFlagged(measurement, system, result));
    if (flags.has('json')) {
      const rows = result.rows.map((r) => ({
        bytes: r.bytes,
        measuredBusbwGBps: r.measuredBusbwGBps,
        expectedBusbwGBps: r.expectedBusbwGBps,
        ratio: r.ratio,
        flagged: r.flagged,
        threshold: r.threshold,
        measuredTimeUs: r.measuredTimeUs,
        expectedTimeUs: r.expectedTimeUs,
        algorithm: r.algorithm,
        protocol: r.protocol,
        chosenBy: r.chosenBy,
        ...(r.explainedBy ? { explainedBy: r.explainedBy } : {}),
      }));
      io.stdout(
        JSON.stringify(
          {
            system: result.system,
            systemSource: source,
            ncclVersion: result.ncclVersion,
            collective: result.collective,
            ranks: result.ranks,
            ...(threshold === undefined ? {} : { threshold }),
            rows,
            flagged: result.flagged,
            ...(verdict ? { verdict } : {}),
            medianErrorPct: medianRelativeError(result.rows) * 100,
          },
          null,
          2,
        ),
      );
    } else
      io.stdout(
        table(
          result,
          verdict,
          path,
          source,
          source.startsWith('described by') ? ((measurement.meta.assumptions as string[] | undefined) ?? []) : [],
        ),
      );
    return result.flagged > 0 ? 1 : 0;
  },
});

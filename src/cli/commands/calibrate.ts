// `calibrate <measured> --system ..`: fits the system's bandwidths and latencies to a measurement and writes a
// system file the simulator (simulate, sweep, profile) then uses. Fitted values stay inside the hardware's bounds;
// a run that no bounded system explains is reported, not fitted, and exits 1.
import type { CalibrationResult } from '../../native/calibrate';
import { calibrateInParallel } from '../parallel/calibrate-pool';
import { CancelledError } from '../parallel/pool';
import { UsageError, defineCommand, type CliCommand } from '../command';
import { flagValue, numberFlag, sizeFlag } from '../flag-values';
import { comparableMeasurement, systemForMeasurement, usageErrorOf } from '../measured-system';
import { writeOutput } from '../../native/files/output-file';
import { outputFlag } from '../output-flag';
import { loadMeasurementFile } from './import';
import { startProgress } from '../progress';

export const calibrateCommand: CliCommand = defineCommand({
  name: 'calibrate',
  summary: 'Fit a system’s bandwidths and latencies to a measurement and write the fitted system file',
  positionals: '<measured>',
  description: [
    'Fits overrides (launch, NVLink, PCIe and NIC bandwidths and latencies, whichever the system has) by',
    'coordinate descent on the log error of predicted vs measured times, then reports the median error before',
    'and after. Without --out the fitted system is printed.',
    '',
    "Every fitted value stays physical: bandwidths between 0.7 of their line rate and the line rate (the NIC's",
    'from the system file, NVLink and PCIe from their generation), latencies at or above published minimums.',
    'A fit that raises the median error below 1 MiB is rejected and the unfitted system kept.',
    '',
    'Exit codes: 0 fitted (or the unfitted system kept, with the reason); 1 no system inside the bounds explains',
    'the run (the part that would have to be slower or faster is named; nothing is written or printed as a',
    'system unless --force); 2 usage or input error.',
  ],
  options: [
    { name: 'system', value: 'preset|file', help: 'The starting system', default: 'as for compare' },
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
      help: "Follow this NCCL release's choices (default: the measurement's, else 2.30)",
    },
    { name: 'out', value: 'file', help: 'Write the fitted system file here' },
    {
      name: 'fit-min-bytes',
      value: 'size',
      help: 'Fit only sizes of at least this many bytes (every size is still judged)',
    },
    {
      name: 'force',
      help: 'Replace an existing --out file, and write the best bounded fit even when it explains nothing',
    },
    { name: 'json', help: 'Print {system, medianErrorBeforePct, medianErrorAfterPct, parameters, unidentified}' },
    {
      name: 'jobs',
      value: 'n',
      help: 'Simulate the rows of each evaluation on at most n worker threads (default: one per core; 1 runs them here)',
    },
  ],
  async execute({ flags, positional }, io) {
    if (positional.length !== 1) throw new UsageError('calibrate takes exactly one measured file');
    const path = positional[0];
    const outTarget = outputFlag(flags, 'out', { allowStdout: false });
    const out = outTarget?.label;
    const measurement = comparableMeasurement(loadMeasurementFile(path, flagValue(flags, 'gpu')), path);
    const { system } = await systemForMeasurement(flags, measurement, path);
    const minText = flagValue(flags, 'fit-min-bytes');
    const minBytes = minText === undefined ? undefined : sizeFlag('fit-min-bytes', minText);
    const jobsText = flagValue(flags, 'jobs');
    const jobs =
      jobsText === undefined
        ? undefined
        : numberFlag('jobs', jobsText, (n) => Number.isInteger(n) && n >= 1, 'must be a whole number ≥ 1');
    const progress = startProgress(io, 'calibrate', !flags.has('json'));
    const onProgress = progress.update.bind(progress);
    let result: CalibrationResult;
    try {
      // The rows of each evaluation run on worker threads when the system is large enough to gain from them.
      const options = minBytes === undefined ? { onProgress } : { minBytes, onProgress };
      result = (await calibrateInParallel(measurement, system.spec, options, { jobs, stopOnSigint: true })).result;
    } catch (error) {
      // Interrupted on worker threads: they are gone; exit as SIGINT would (128 + 2).
      if (error instanceof CancelledError) return 130;
      throw usageErrorOf(error);
    } finally {
      progress.finish();
    }
    const text = `${JSON.stringify(result.system, null, 2)}\n`;
    // A fit that explains nothing is not a system anyone has: it is kept from files unless asked for.
    const write = !result.unexplained || flags.has('force');
    if (outTarget && write) writeOutput(outTarget, text);
    const code = result.unexplained ? 1 : 0;
    if (flags.has('json')) {
      io.stdout(
        JSON.stringify(
          {
            system: result.system,
            // Percentages, as every error figure in the CLI's JSON (validate's largeMedianPct, errorPct).
            medianErrorBeforePct: result.medianErrorBefore * 100,
            medianErrorAfterPct: result.medianErrorAfter * 100,
            parameters: result.parameters,
            unidentified: result.unidentified,
            evaluations: result.evaluations,
            bounds: result.bounds,
            fitMinBytes: result.fitMinBytes,
            ...(result.smallSizeError ? { smallSizeError: result.smallSizeError } : {}),
            ...(result.rejected ? { rejected: result.rejected } : {}),
            ...(result.unexplained ? { unexplained: result.unexplained } : {}),
            ...(out && write ? { out } : {}),
          },
          null,
          2,
        ),
      );
      return code;
    }
    const lines = [
      `# median error ${(result.medianErrorBefore * 100).toFixed(1)} % -> ${(result.medianErrorAfter * 100).toFixed(1)} % on ${measurement.rows.length} sizes`,
    ];
    if (result.fitMinBytes > 0) lines.push(`# fitted on sizes >= ${result.fitMinBytes} B`);
    if (result.smallSizeError)
      lines.push(
        `# below 1 MiB: ${(result.smallSizeError.before * 100).toFixed(1)} % -> ${(result.smallSizeError.after * 100).toFixed(1)} %`,
      );
    for (const [name, p] of Object.entries(result.parameters)) {
      const bound = result.bounds[name as keyof typeof result.bounds];
      const range = bound
        ? `   (bounds ${Number(bound.min.toPrecision(4))} .. ${Number.isFinite(bound.max) ? Number(bound.max.toPrecision(4)) : '∞'}: ${bound.source})`
        : '';
      lines.push(`#   ${name.padEnd(18)} ${p!.from.toPrecision(4).padStart(10)} -> ${p!.to.toPrecision(4)}${range}`);
    }
    if (result.unidentified.length > 0)
      lines.push(
        `# not fitted (a factor of 4 either way moves no measured size by 5 %): ${result.unidentified.join(', ')}`,
      );
    if (result.rejected) lines.push(`# fit rejected, the unfitted system stands: ${result.rejected}`);
    if (result.unexplained) {
      io.stderr(`${result.unexplained.sentence}\n`);
      if (!write)
        lines.push(
          `# no system ${out ? `written to ${out}` : 'printed'}: pass --force to ${out ? 'write' : 'print'} the best bounded fit anyway`,
        );
    }
    const shown = write ? (out ? `\n# wrote ${out}` : `\n${text}`) : '';
    io.stdout(`${lines.join('\n')}${shown}`);
    return code;
  },
});

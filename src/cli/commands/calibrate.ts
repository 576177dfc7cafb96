// `calibrate <measured> --system ..`: fits the system's bandwidths and latencies to a measurement and writes a
// system file the simulator (simulate, sweep, profile) then uses.
import { existsSync } from 'node:fs';
import { calibrateSystem } from '../../native/calibrate';
import { UsageError, parseFlags, type CliCommand } from '../command';
import { flagValue } from '../flag-values';
import { asUsageError, comparableMeasurement, systemForMeasurement } from '../measured-system';
import { writeFileAtomic } from '../write-atomic';
import { loadMeasurementFile } from './import';

export const calibrateCommand: CliCommand = {
  name: 'calibrate',
  summary: 'Fit a system’s bandwidths and latencies to a measurement and write the fitted system file',
  usage: [
    'Usage: collective-profiler calibrate <measured> --system <preset|file> [--out fitted.json] [--force] [--json]',
    '',
    'Fits overrides (launch, NVLink, PCIe and NIC bandwidths and latencies, whichever the system has) by',
    'coordinate descent on the log error of predicted vs measured times, then reports the median error before',
    'and after. Without --out the fitted system is printed.',
    '',
    'Options:',
    '  --system <preset|file>   The starting system (default: as for compare)',
    '  --nodes <n>, --gpus-per-node <g>   Scale the system explicitly',
    '  --gpu <name>             GPU model for NCCL logs that do not name theirs',
    '  --nccl <version>         Follow this NCCL release\'s choices (default: the measurement\'s, else 2.30)',
    '  --out <file>             Write the fitted system file here (refuses to overwrite without --force)',
    '  --force                  Overwrite --out',
    '  --json                   Print {system, medianErrorBefore, medianErrorAfter, parameters, unidentified}',
  ].join('\n'),
  async run(args, io) {
    const { flags, positional } = parseFlags(args, { values: ['system', 'nodes', 'gpus-per-node', 'nccl', 'gpu', 'out'], switches: ['json', 'force'] });
    if (positional.length !== 1) throw new UsageError('calibrate takes exactly one measured file');
    const path = positional[0];
    const out = flagValue(flags, 'out');
    if (out && existsSync(out) && !flags.has('force')) throw new UsageError(`${out} exists; pass --force to overwrite it`);
    const measurement = comparableMeasurement(loadMeasurementFile(path, flagValue(flags, 'gpu')), path);
    const { system } = systemForMeasurement(flags, measurement, path);
    const result = asUsageError(() => calibrateSystem(measurement, system.spec));
    const text = `${JSON.stringify(result.system, null, 2)}\n`;
    if (out) writeFileAtomic(out, text);
    if (flags.has('json')) {
      io.stdout(JSON.stringify({ system: result.system, medianErrorBefore: result.medianErrorBefore, medianErrorAfter: result.medianErrorAfter, parameters: result.parameters, unidentified: result.unidentified, evaluations: result.evaluations, ...(out ? { out } : {}) }, null, 2));
      return 0;
    }
    const lines = [`# median error ${(result.medianErrorBefore * 100).toFixed(1)} % -> ${(result.medianErrorAfter * 100).toFixed(1)} % on ${measurement.rows.length} sizes`];
    for (const [name, p] of Object.entries(result.parameters)) lines.push(`#   ${name.padEnd(18)} ${p!.from.toPrecision(4).padStart(10)} -> ${p!.to.toPrecision(4)}`);
    if (result.unidentified.length > 0) lines.push(`# not fitted (a factor of 4 either way moves no measured size by 5 %): ${result.unidentified.join(', ')}`);
    io.stdout(out ? `${lines.join('\n')}\n# wrote ${out}` : `${lines.join('\n')}\n${text}`);
    return 0;
  },
};

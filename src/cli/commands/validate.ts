// `validate`: sweeps every published all_reduce_perf run in the calibration folder on a system file describing its
// hardware and prints, per dataset, the median absolute busbw error for messages ≥ 1 MiB and < 1 MiB.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { readInputText } from '../../native/files/input-file';
import { basename, join, resolve } from 'node:path';
import {
  compareDataset,
  EngineError,
  withNcclVersion,
  LARGE_BOUND_PCT,
  resolveSystem,
  SMALL_BOUND_PCT,
  systemFromDescription,
  type DatasetComparison,
  type SystemSpec,
} from '../../engine/index';
import { ConfigError } from '../../config/positioned';
import { parseSystemFile } from '../../config/system-file';
import { UsageError, defineCommand, noPositionals, type CliCommand } from '../command';
import { configUsageError } from '../command-errors';
import { startProgress, type Progress } from '../progress';
import { loadFixtureDatasets } from '../fixture-datasets';
import { leaveOneOut, type CalibrationDataset, type LeaveOneOutRow, type RefitValue } from '../../native/loo-refit';

export interface ValidationRow {
  readonly dataset: string;
  readonly systemSource: string;
  readonly label: string;
  readonly ranks: number;
  readonly comparison: DatasetComparison;
}

function defaultCalibrationDir(): string {
  for (const candidate of ['../shared/calibration', 'shared/calibration', 'calibration']) {
    if (existsSync(join(candidate, 'nccl-tests'))) return candidate;
  }
  return '../shared/calibration';
}

function datasetFiles(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UsageError(`--calibration-dir '${dir}' is not a folder`);
  const inner = join(dir, 'nccl-tests');
  const folder = existsSync(inner) && statSync(inner).isDirectory() ? inner : dir;
  const files = readdirSync(folder)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => join(folder, f));
  if (files.length === 0) throw new UsageError(`no dataset (*.json) in '${folder}'`);
  return files;
}

/** The hand-written system file for a dataset, or one read from the dataset's own hardware description. */
function systemFor(
  datasetPath: string,
  dataset: Record<string, unknown>,
  systemsDir: string,
): { spec: SystemSpec; source: string } {
  const path = join(systemsDir, basename(datasetPath));
  if (existsSync(path)) {
    try {
      return {
        spec: parseSystemFile(readInputText(path, { kind: 'config', what: 'system file' }), path),
        source: path,
      };
    } catch (error) {
      if (error instanceof ConfigError) throw configUsageError(error);
      throw error;
    }
  }
  const derived = systemFromDescription(dataset);
  if (!derived)
    throw new UsageError(`${basename(datasetPath)}: no system file at ${path}, and its description names no known GPU`);
  return { spec: derived, source: 'derived from the dataset description' };
}

interface LoadedDataset extends CalibrationDataset {
  readonly file: string;
  readonly systemSource: string;
}

/** Reads every dataset and its system; NCCL's choices follow its release, so each spec names the NCCL that ran it. */
export function loadDatasets(calibrationDir: string, systemsDir: string): LoadedDataset[] {
  const fixtures = loadFixtureDatasets(calibrationDir, systemsDir).map((f) => {
    const { spec, source } = systemFor(`${f.name}.json`, f.dataset, systemsDir);
    return {
      name: f.name,
      file: f.file,
      dataset: f.dataset,
      spec: withNcclVersion(spec, f.dataset.nccl_version),
      systemSource: source,
    };
  });
  const published = datasetFiles(calibrationDir).map((file) => {
    let dataset: Record<string, unknown>;
    const text = readInputText(file, { kind: 'dataset', what: 'data set' });
    try {
      dataset = JSON.parse(text) as Record<string, unknown>;
    } catch (error) {
      throw new UsageError(`${file}: not valid JSON (${(error as Error).message})`);
    }
    const { spec, source } = systemFor(file, dataset, systemsDir);
    return {
      name: basename(file, '.json'),
      file,
      dataset,
      spec: withNcclVersion(spec, dataset.nccl_version),
      systemSource: source,
    };
  });
  return [...published, ...fixtures].sort((a, b) => a.name.localeCompare(b.name));
}

/** Runs `body`, naming the dataset in the usage error when the engine rejects it. */
function judged<T>(d: LoadedDataset, body: () => T): T {
  try {
    return body();
  } catch (error) {
    if (error instanceof EngineError) throw new UsageError(`${basename(d.file)}: ${error.message}`);
    throw error;
  }
}

function validateLoaded(datasets: readonly LoadedDataset[], progress?: Progress): ValidationRow[] {
  return datasets.map((d, i) =>
    judged(d, () => {
      progress?.update(i, datasets.length, d.name);
      const system = resolveSystem(d.spec);
      return {
        dataset: d.name,
        systemSource: d.systemSource,
        label: system.label,
        ranks: system.ranks,
        comparison: compareDataset(system, d.dataset),
      };
    }),
  );
}

export function validateAll(calibrationDir: string, systemsDir: string, progress?: Progress): ValidationRow[] {
  return validateLoaded(loadDatasets(calibrationDir, systemsDir), progress);
}

/** Both judgements of every dataset: with the engine's constants, and with those fitted on it refit without it. */
export function validateLeaveOneOut(
  calibrationDir: string,
  systemsDir: string,
  progress?: Progress,
): { rows: ValidationRow[]; loo: LeaveOneOutRow[] } {
  const datasets = loadDatasets(calibrationDir, systemsDir);
  const rows = validateLoaded(datasets, progress);
  const byName = new Map(
    leaveOneOut(
      datasets.map((d) =>
        judged(d, () => {
          resolveSystem(d.spec);
          return d;
        }),
      ),
    ).map((r) => [r.dataset, r]),
  );
  return { rows, loo: datasets.map((d) => byName.get(d.name)!) };
}

const refitText = (r: RefitValue): string =>
  `${r.constant}=${r.value}${r.fallback ? ' (only this dataset supports it: hardware facts)' : ''}`;

export function formatLeaveOneOut(rows: readonly ValidationRow[], loo: readonly LeaveOneOutRow[]): string {
  const width = Math.max(...rows.map((r) => r.dataset.length), 7);
  const lines = [
    "Median |busbw error| per dataset: in-sample (the engine's constants) and leave-one-out (every constant fitted",
    'on the dataset refit without it; where no other dataset supports one, the hardware facts alone)',
    `${'dataset'.padEnd(width)}  ${'≥1MiB in'.padStart(9)}  ${'≥1MiB LOO'.padStart(9)}  ${'<1MiB in'.padStart(9)}  ${'<1MiB LOO'.padStart(9)}  LOO verdict  refit without it`,
  ];
  rows.forEach((row, i) => {
    const a = row.comparison;
    const b = loo[i].leaveOneOut;
    const verdict = a.suspect ? 'suspect' : b.pass ? 'PASS' : 'FAIL';
    const refits =
      loo[i].refits.length === 0 ? '— (no constant fitted on it)' : loo[i].refits.map(refitText).join('; ');
    lines.push(
      `${row.dataset.padEnd(width)}  ${pct(a.largeMedianPct).padStart(9)}  ${pct(b.largeMedianPct).padStart(9)}  ${pct(a.smallMedianPct).padStart(9)}  ${pct(b.smallMedianPct).padStart(9)}  ${verdict.padEnd(11)}  ${refits}`,
    );
  });
  const judgedRows = loo.filter((r) => !r.leaveOneOut.suspect);
  lines.push(
    `${judgedRows.filter((r) => r.leaveOneOut.pass).length}/${judgedRows.length} judged datasets pass leave-one-out (${rows.filter((r) => !r.comparison.suspect && r.comparison.pass).length} in-sample)`,
  );
  return lines.join('\n');
}

const pct = (value: number | undefined): string => (value === undefined ? '—' : `${value.toFixed(1)}%`);

export function formatValidation(rows: readonly ValidationRow[]): string {
  const width = Math.max(...rows.map((r) => r.dataset.length), 7);
  const lines = [
    `Median |busbw error| per dataset (pass: ≤ ${LARGE_BOUND_PCT}% for sizes ≥ 1 MiB, ≤ ${SMALL_BOUND_PCT}% below)`,
    `${'dataset'.padEnd(width)}  ${'ranks'.padStart(5)}  ${'≥1MiB'.padStart(7)}  ${'<1MiB'.padStart(7)}  verdict`,
  ];
  for (const row of rows) {
    const c = row.comparison;
    const verdict = c.suspect ? 'suspect (not judged)' : c.pass ? 'PASS' : 'FAIL';
    lines.push(
      `${row.dataset.padEnd(width)}  ${String(row.ranks).padStart(5)}  ${pct(c.largeMedianPct).padStart(7)}  ${pct(c.smallMedianPct).padStart(7)}  ${verdict}`,
    );
  }
  const judged = rows.filter((r) => !r.comparison.suspect);
  lines.push(`${judged.filter((r) => r.comparison.pass).length}/${judged.length} judged datasets pass`);
  return lines.join('\n');
}

export const validateCommand: CliCommand = defineCommand({
  name: 'validate',
  summary: 'Compare simulated sweeps with published nccl-tests runs and print the busbw error per dataset',
  description: [
    'Sweeps the sizes of every dataset in DIR/nccl-tests (default ../shared/calibration) on its system file',
    '(--systems-dir, default calibration/systems/<dataset>.json; without one, the hardware its description',
    'names), honouring a forced NCCL_ALGO, and prints the median absolute busbw error for sizes ≥ 1 MiB and',
    `< 1 MiB. A dataset passes at ≤ ${LARGE_BOUND_PCT}% and ≤ ${SMALL_BOUND_PCT}%; suspect datasets are listed but not judged.`,
    'Runs among ../shared/fixtures-real that calibration/fixture-datasets.json describes (beside --systems-dir)',
    'are judged too, their rows read from the fixture in place.',
    '--leave-one-out also judges each dataset with every constant that was fitted on it refit on the other',
    'datasets (or, where none supports it, set from the hardware facts), beside the in-sample error.',
    'Exit code 1 when a judged dataset fails (in-sample).',
  ],
  options: [
    {
      name: 'calibration-dir',
      value: 'dir',
      help: 'The published runs (DIR/nccl-tests/*.json)',
      default: '../shared/calibration',
    },
    { name: 'systems-dir', value: 'dir', help: 'System files, one per dataset', default: 'calibration/systems' },
    { name: 'leave-one-out', help: 'Also judge each dataset with the constants fitted on it refit without it' },
    { name: 'json', help: 'Print the datasets and their errors as JSON' },
  ],
  async execute({ flags, positional }, io) {
    noPositionals('validate', positional);
    const calibrationDir = resolve(flags.get('calibration-dir')?.[0] ?? defaultCalibrationDir());
    const systemsDir = resolve(flags.get('systems-dir')?.[0] ?? 'calibration/systems');
    const progress = startProgress(io, 'validate', !flags.has('json'));
    if (flags.has('leave-one-out')) {
      const { rows, loo } = validateLeaveOneOut(calibrationDir, systemsDir, progress);
      progress.finish();
      if (flags.has('json')) {
        // Per-row figures too: compare's uncertainty bands are derived from the leave-one-out rows.
        const summary = (c: DatasetComparison) => ({
          largeMedianPct: c.largeMedianPct ?? null,
          smallMedianPct: c.smallMedianPct ?? null,
          pass: c.pass,
          rows: c.rows.map((r) => ({
            bytes: r.bytes,
            measuredBusbwGBps: r.busbwGBps,
            simulatedBusbwGBps: r.simulatedBusbwGBps,
            errorPct: r.errorPct,
          })),
        });
        io.stdout(
          JSON.stringify(
            rows.map((r, i) => ({
              dataset: r.dataset,
              system: r.label,
              ranks: r.ranks,
              suspect: r.comparison.suspect,
              inSample: summary(r.comparison),
              leaveOneOut: summary(loo[i].leaveOneOut),
              refits: loo[i].refits.map((x) => ({
                constant: x.constant,
                value: Number.isFinite(x.value) ? x.value : null,
                refitOn: x.refitOn,
                fallback: x.fallback ?? null,
              })),
            })),
            null,
            2,
          ),
        );
      } else {
        io.stdout(formatLeaveOneOut(rows, loo));
      }
      return rows.some((r) => !r.comparison.suspect && !r.comparison.pass) ? 1 : 0;
    }
    const rows = validateAll(calibrationDir, systemsDir, progress);
    progress.finish();
    if (flags.has('json')) {
      io.stdout(
        JSON.stringify(
          rows.map((r) => ({
            dataset: r.dataset,
            system: r.label,
            systemSource: r.systemSource,
            ranks: r.ranks,
            algorithm: r.comparison.algorithm,
            largeMedianPct: r.comparison.largeMedianPct ?? null,
            smallMedianPct: r.comparison.smallMedianPct ?? null,
            suspect: r.comparison.suspect,
            pass: r.comparison.pass,
            rows: r.comparison.rows.map((x) => ({
              bytes: x.bytes,
              measuredBusbwGBps: x.busbwGBps,
              simulatedBusbwGBps: x.simulatedBusbwGBps,
              errorPct: x.errorPct,
              algorithm: x.algorithm,
              protocol: x.protocol,
            })),
          })),
          null,
          2,
        ),
      );
    } else {
      io.stdout(formatValidation(rows));
    }
    return rows.some((r) => !r.comparison.suspect && !r.comparison.pass) ? 1 : 0;
  },
});

// Published all_reduce_perf runs that live among ../shared/fixtures-real (parser fixtures, read in place) rather
// than in ../shared/calibration: calibration/fixture-datasets.json names each file and describes its hardware (the
// description fields of a calibration dataset, no measured number), and this turns the file's table into a dataset
// that `validate` judges and the leave-one-out refit can use like any other.
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { importMeasurementText } from '../native/import/index';
import { UsageError } from './command';

/** One entry of calibration/fixture-datasets.json. */
interface FixtureEntry {
  readonly name: string;
  /** The file, relative to the folder that holds ../shared/calibration (e.g. "fixtures-real/x.txt"). */
  readonly fixture: string;
  readonly [field: string]: unknown;
}

export interface FixtureDataset {
  readonly name: string;
  readonly file: string;
  readonly dataset: Record<string, unknown>;
}

/** The manifest beside the systems folder (calibration/fixture-datasets.json for calibration/systems). */
export function fixtureManifestPath(systemsDir: string): string {
  return join(dirname(systemsDir), 'fixture-datasets.json');
}

/** The shared folder a calibration folder lives in: ../shared for ../shared/calibration(/nccl-tests). */
function sharedRoot(calibrationDir: string): string {
  const dir = basename(calibrationDir) === 'nccl-tests' ? dirname(calibrationDir) : calibrationDir;
  return dirname(dir);
}

/** The manifest's datasets whose fixture file is present; none when there is no manifest. */
export function loadFixtureDatasets(calibrationDir: string, systemsDir: string): FixtureDataset[] {
  const manifest = fixtureManifestPath(systemsDir);
  if (!existsSync(manifest)) return [];
  let entries: FixtureEntry[];
  try {
    entries = JSON.parse(readFileSync(manifest, 'utf8')) as FixtureEntry[];
  } catch (error) {
    throw new UsageError(`${manifest}: not valid JSON (${(error as Error).message})`);
  }
  const out: FixtureDataset[] = [];
  for (const entry of entries) {
    const file = join(sharedRoot(calibrationDir), entry.fixture);
    if (!existsSync(file)) continue;
    const imported = importMeasurementText(readFileSync(file, 'utf8'), { fileName: basename(file) });
    const run = imported.measurements.find((m) => m.collective === 'allreduce');
    if (!run) throw new UsageError(`${file}: no all_reduce table`);
    // Zero-byte rows time only the launch; the calibration datasets start at one element too.
    const rows = run.rows
      .filter((r) => r.bytes > 0)
      .map((r) => ({
        bytes: r.bytes,
        count: r.count ?? null,
        time_us: r.timeUs,
        algbw_GBps: r.algbwGBps,
        busbw_GBps: r.busbwGBps,
        inplace_time_us: r.inPlace?.timeUs ?? null,
        inplace_algbw_GBps: r.inPlace?.algbwGBps ?? null,
        inplace_busbw_GBps: r.inPlace?.busbwGBps ?? null,
      }));
    const { fixture: _fixture, ...description } = entry;
    out.push({
      name: entry.name,
      file,
      dataset: { ...description, total_ranks: entry.total_ranks ?? run.ranks, derived_fields: [], rows },
    });
  }
  return out;
}

// Picks the system a measurement is judged against: --system (a preset, scaled to the measurement's ranks, or a
// file), else the repository's calibration/systems/<basename>.json for calibration JSON, else the system the
// file itself describes (NCCL logs, calibration JSON's hardware fields).
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { EngineError, type System } from '../engine/index';
import type { ImportResult, Measurement } from '../native/import/model';
import { UsageError } from './command';
import { scalingFlags } from './collective-flags';
import { loadSystem } from './load-system';
import { flagValue } from './flag-values';
import { CompareError, asResolved, collectiveKindOf } from '../native/compare-inputs';

/** Runs model work, turning the engine's and the comparison's input errors into one-line usage errors. */
export function asUsageError<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw usageErrorOf(error);
  }
}

/** A CompareError or EngineError as the UsageError it is to the user (exit 2); any other error unchanged. */
export function usageErrorOf(error: unknown): unknown {
  return error instanceof CompareError || error instanceof EngineError ? new UsageError(error.message) : error;
}

/** Folders that may hold calibration/systems: next to the bundle, next to the sources, and the working folder. */
function calibrationSystemsDirs(): string[] {
  const here = typeof __dirname === 'string' ? __dirname : process.cwd();
  return [
    join(here, '..', 'calibration', 'systems'),
    join(here, '..', '..', 'calibration', 'systems'),
    join(process.cwd(), 'calibration', 'systems'),
  ];
}

export function calibrationSystemFor(measuredPath: string): string | undefined {
  const name = basename(measuredPath).replace(/\.(ya?ml|json)$/i, '');
  for (const dir of calibrationSystemsDirs()) {
    for (const ext of ['.json', '.yaml', '.yml']) if (existsSync(join(dir, name + ext))) return join(dir, name + ext);
  }
  return undefined;
}

/** The measurement the model can judge: the first all-reduce, all-gather or reduce-scatter with rows. */
export function comparableMeasurement(result: ImportResult, path: string): Measurement {
  const found = result.measurements.find(
    (m) => m.rows.length > 0 && ['allreduce', 'allgather', 'reducescatter'].includes(m.collective),
  );
  if (!found) {
    const what =
      result.measurements.map((m) => `${m.collective} (${m.rows.length} sizes)`).join(', ') || 'nothing timed';
    throw new UsageError(`${path}: no all-reduce, all-gather or reduce-scatter sizes to compare (found ${what})`);
  }
  asUsageError(() => collectiveKindOf(found));
  return found;
}

export async function systemForMeasurement(
  flags: Map<string, string[]>,
  measurement: Measurement,
  measuredPath: string,
): Promise<{ system: System; source: string }> {
  const arg = flagValue(flags, 'system');
  const scaling = scalingFlags(flags);
  const release = scaling.ncclVersion !== undefined ? { ncclVersion: scaling.ncclVersion } : {};
  if (arg) {
    // A preset describes one box; stretch it to the measured ranks unless the user said otherwise.
    const nodes = Number(measurement.meta.nodes ?? 0);
    const auto =
      scaling.nodes === undefined &&
      scaling.gpusPerNode === undefined &&
      nodes > 0 &&
      measurement.ranks % nodes === 0 &&
      !/[\\/.]/.test(arg)
        ? { nodes, gpusPerNode: measurement.ranks / nodes, ...release }
        : scaling;
    return { system: await loadSystem(arg, auto), source: arg };
  }
  if (measurement.kind === 'calibration-json') {
    const file = calibrationSystemFor(measuredPath);
    if (file) return { system: await loadSystem(file, release), source: file };
  }
  if (measurement.system)
    return {
      system: asUsageError(() => asResolved({ ...measurement.system!, ...release })),
      source: `described by ${basename(measuredPath)}`,
    };
  throw new UsageError(`${measuredPath} does not say what system it ran on; pass --system <preset|file>`);
}

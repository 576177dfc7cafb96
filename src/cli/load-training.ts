// Reads a training config and the files it names from disk, adds what the command line says (--model,
// --system, --nodes, --gpus-per-node) and assembles one TrainingRun. Every problem becomes a UsageError whose
// text is `file:line:col: message` where there is a position, so the CLI exits with code 2.
import type { TrainingRun } from '../engine/index';
import { ConfigError } from '../config/positioned';
import type { RunPart } from '../config/run-part';
import { modelArgument, readReference, systemArgument, type FileReader } from '../config/training-files';
import { readTrainingConfig, type TrainingConfigFormat } from '../config/training-config';
import { assembleTrainingRun } from '../config/training-run';
import { readInputText } from '../native/files/input-file';
import { UserFileError } from '../native/files/file-errors';
import { UsageError } from './command';
import { configUsageError } from './command-errors';

export interface TrainingOverrides {
  readonly model?: string;
  readonly system?: string;
  readonly nodes?: number;
  readonly gpusPerNode?: number;
}

/** Reads files for the config layer, with the reasons users understand. */
export const diskFiles: FileReader = {
  read(path) {
    // The config layer puts the file name and position in front, so the reason alone is passed on.
    try {
      return readInputText(path, { kind: 'config' });
    } catch (error) {
      if (error instanceof UserFileError) throw new Error(error.reason, { cause: error });
      throw error;
    }
  },
};

/** Turns config errors into one-line usage errors (exit 2) and passes anything else through. */
export function asUsageError<T>(work: () => T, context?: string): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof ConfigError) throw configUsageError(error);
    if (context && error instanceof Error && !(error instanceof UsageError))
      throw new UsageError(`${context}: ${error.message}`);
    throw error;
  }
}

export function loadTrainingRun(
  configPath: string,
  overrides: TrainingOverrides = {},
): { run: TrainingRun; format: TrainingConfigFormat } {
  const text = asUsageError(() => diskFiles.read(configPath), `cannot read config '${configPath}'`);
  const { format, part } = asUsageError(() => readTrainingConfig(text, configPath));
  const parts: RunPart[] = [
    part,
    ...(part.references ?? []).map((ref) => asUsageError(() => readReference(ref, diskFiles))),
  ];
  if (overrides.model)
    parts.push(asUsageError(() => modelArgument(overrides.model!, diskFiles), `--model ${overrides.model}`));
  if (overrides.system)
    parts.push(asUsageError(() => systemArgument(overrides.system!, diskFiles), `--system ${overrides.system}`));
  if (overrides.nodes !== undefined || overrides.gpusPerNode !== undefined) {
    parts.push({
      source: { format: 'flags', file: 'command line' },
      nodes: overrides.nodes !== undefined ? { value: overrides.nodes } : undefined,
      gpusPerNode: overrides.gpusPerNode !== undefined ? { value: overrides.gpusPerNode } : undefined,
    });
  }
  return { run: asUsageError(() => assembleTrainingRun(parts)), format };
}

// Reads a training config and the files it names (model config.json, system file) from disk, adds what the
// command line says (--model, --system, --nodes, --gpus-per-node) and assembles one TrainingRun. Every problem
// becomes a UsageError whose text is `file:line:col: message`, so the CLI exits with code 2.
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { PRESETS, type TrainingRun } from '../engine/index';
import { parseHfModelConfig } from '../config/hf-model';
import { MODEL_PRESETS, modelPreset } from '../config/model-presets';
import { ConfigError, positionOf } from '../config/positioned';
import type { FileReference, RunPart } from '../config/run-part';
import { parseSystemFile } from '../config/system-file';
import { readTrainingConfig, type TrainingConfigFormat } from '../config/training-config';
import { assembleTrainingRun } from '../config/training-run';
import { UsageError } from './command';

export interface TrainingOverrides {
  readonly model?: string;
  readonly system?: string;
  readonly nodes?: number;
  readonly gpusPerNode?: number;
}

function readText(path: string, what: string): string {
  try {
    if (statSync(path).isDirectory()) throw new UsageError(`${what} '${path}' is a folder, not a file`);
    return readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read ${what} '${path}': ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
}

/** Turns config errors into one-line usage errors (exit 2) and passes anything else through. */
export function asUsageError<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.toString());
    throw error;
  }
}

/** Reads a file another config names; a missing file is reported at the line that names it. */
function readReference(ref: FileReference): RunPart {
  const path = isAbsolute(ref.path) ? ref.path : resolve(dirname(ref.doc.fileName), ref.path);
  let text: string;
  try {
    text = readText(path, ref.kind === 'model' ? 'model config' : 'system file');
  } catch (error) {
    const { line, column } = positionOf(ref.doc, ref.at);
    throw new UsageError(`${ref.doc.fileName}:${line}:${column}: ${(error as Error).message}`);
  }
  return asUsageError(() =>
    ref.kind === 'model'
      ? { source: { format: 'hf-model', file: path }, model: parseHfModelConfig(text, path) }
      : { source: { format: 'system', file: path }, system: parseSystemFile(text, path) },
  );
}

function modelPart(arg: string): RunPart {
  if (modelPreset(arg)) return { source: { format: 'model-preset', file: arg }, modelPreset: { value: arg } };
  if (!/[\\/.]/.test(arg)) throw new UsageError(`--model '${arg}' is neither a model preset (${MODEL_PRESETS.join(', ')}) nor a file`);
  const text = readText(arg, 'model config');
  return asUsageError(() => ({ source: { format: 'hf-model', file: arg }, model: parseHfModelConfig(text, arg) }));
}

function systemPart(arg: string): RunPart {
  const preset = Object.keys(PRESETS).find((name) => name.toLowerCase() === arg.toLowerCase());
  if (preset && !/[\\/]/.test(arg)) return { source: { format: 'system-preset', file: preset }, systemPreset: { value: preset } };
  if (!/[\\/.]/.test(arg)) throw new UsageError(`--system '${arg}' is neither a preset (${Object.keys(PRESETS).join(', ')}) nor a file`);
  const text = readText(arg, 'system file');
  return asUsageError(() => ({ source: { format: 'system', file: arg }, system: parseSystemFile(text, arg) }));
}

export function loadTrainingRun(configPath: string, overrides: TrainingOverrides = {}): { run: TrainingRun; format: TrainingConfigFormat } {
  const text = readText(configPath, 'config');
  const { format, part } = asUsageError(() => readTrainingConfig(text, configPath));
  const parts: RunPart[] = [part, ...(part.references ?? []).map(readReference)];
  if (overrides.model) parts.push(modelPart(overrides.model));
  if (overrides.system) parts.push(systemPart(overrides.system));
  if (overrides.nodes !== undefined || overrides.gpusPerNode !== undefined) {
    parts.push({
      source: { format: 'flags', file: 'command line' },
      nodes: overrides.nodes !== undefined ? { value: overrides.nodes } : undefined,
      gpusPerNode: overrides.gpusPerNode !== undefined ? { value: overrides.gpusPerNode } : undefined,
    });
  }
  return { run: asUsageError(() => assembleTrainingRun(parts)), format };
}

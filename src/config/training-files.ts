// Follows the files a training config names (a model config.json, a system file) and reads the model and
// system a user names by flag or setting, through a file reader the caller passes in: the CLI reads with node,
// the extension through VS Code's file system, and this layer stays free of I/O.
import { PRESETS, type TrainingRun } from '../engine/index';
import { parseDeepSpeedConfig } from './deepspeed';
import { parseHfModelConfig } from './hf-model';
import { MODEL_PRESETS, modelPreset } from './model-presets';
import { ConfigError, positionOf } from './positioned';
import type { FileReference, RunPart } from './run-part';
import { parseSystemFile } from './system-file';
import { readTrainingConfig, type TrainingConfigFormat } from './training-config';
import { assembleTrainingRun } from './training-run';

export interface FileReader {
  /** The file's text; throws an Error whose message says why it cannot be read. */
  read(path: string): string;
}

/** Resolves `relative` against the folder of `fromFile`, for both / and \\ separators; absolute paths stay. */
export function resolveRelative(fromFile: string, relative: string): string {
  if (/^([a-zA-Z]:)?[\\/]/.test(relative)) return relative;
  const cut = Math.max(fromFile.lastIndexOf('/'), fromFile.lastIndexOf('\\'));
  return cut >= 0 ? `${fromFile.slice(0, cut + 1)}${relative}` : relative;
}

/** Reads a file another config names; a file that cannot be read is reported at the line that names it. */
export function readReference(ref: FileReference, files: FileReader): RunPart {
  const path = resolveRelative(ref.doc.fileName, ref.path);
  let text: string;
  try {
    text = files.read(path);
  } catch (error) {
    const what = { model: 'model config', system: 'system file', deepspeed: 'DeepSpeed config' }[ref.kind];
    throw new ConfigError(ref.doc.fileName, [
      {
        message: `cannot read ${what} '${ref.path}': ${(error as Error).message}`,
        path: ref.at,
        ...positionOf(ref.doc, ref.at),
      },
    ]);
  }
  if (ref.kind === 'deepspeed') return parseDeepSpeedConfig(text, path);
  return ref.kind === 'model'
    ? { source: { format: 'hf-model', file: path }, model: parseHfModelConfig(text, path) }
    : { source: { format: 'system', file: path }, system: parseSystemFile(text, path) };
}

const looksLikePath = (arg: string): boolean => /[\\/]|\.(json|ya?ml)$/i.test(arg);

/** A model given by name (a preset) or by a config.json path. Throws an Error that says what was expected. */
export function modelArgument(arg: string, files: FileReader): RunPart {
  if (modelPreset(arg)) return { source: { format: 'model-preset', file: arg }, modelPreset: { value: arg } };
  if (!looksLikePath(arg))
    throw new Error(`model '${arg}' is neither a model preset (${MODEL_PRESETS.join(', ')}) nor a config.json path`);
  return { source: { format: 'hf-model', file: arg }, model: parseHfModelConfig(files.read(arg), arg) };
}

/** A system given by preset name or system-file path. */
export function systemArgument(arg: string, files: FileReader): RunPart {
  const preset = Object.keys(PRESETS).find((name) => name.toLowerCase() === arg.toLowerCase());
  if (preset) return { source: { format: 'system-preset', file: preset }, systemPreset: { value: preset } };
  if (!looksLikePath(arg))
    throw new Error(`system '${arg}' is neither a preset (${Object.keys(PRESETS).join(', ')}) nor a system file path`);
  return { source: { format: 'system', file: arg }, system: parseSystemFile(files.read(arg), arg) };
}

/**
 * Everything `profile` does before the engine runs, for callers without a command line (the extension): read
 * the config, follow the files it names, add a model and system chosen elsewhere, and assemble the run.
 * Throws ConfigError for positioned problems and Error for unreadable files named outside any config.
 */
export function loadTrainingRunFromText(
  text: string,
  fileName: string,
  files: FileReader,
  chosen: { readonly model?: string; readonly system?: string } = {},
): { run: TrainingRun; format: TrainingConfigFormat } {
  const { format, part } = readTrainingConfig(text, fileName);
  const parts: RunPart[] = [part, ...(part.references ?? []).map((ref) => readReference(ref, files))];
  if (chosen.model) parts.push(modelArgument(chosen.model, files));
  if (chosen.system) parts.push(systemArgument(chosen.system, files));
  return { run: assembleTrainingRun(parts), format };
}

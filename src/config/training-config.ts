// Recognises which kind of training config a file is and reads it into a RunPart. Files that name other files
// (a model config, a system file) leave those as references for the caller, who can read files; the config
// layer itself stays free of I/O.
import { acceleratePart, looksLikeAccelerate } from './accelerate';
import { collectivePart, isCollectiveFileName } from './collective-file';
import { deepSpeedPart, looksLikeDeepSpeed } from './deepspeed';
import { looksLikeHfModelConfig, modelFromHfDocument } from './hf-model';
import { looksLikeLauncherScript, parseLauncherScript } from './launcher';
import { ConfigError, parseDocument } from './positioned';
import type { RunPart } from './run-part';

export type TrainingConfigFormat = 'collective' | 'deepspeed' | 'accelerate' | 'hf-model' | 'launcher';

const WHAT_WE_READ =
  'a *.collective.yaml, a DeepSpeed JSON config, an Accelerate YAML config, a Hugging Face config.json, or a torchrun/srun script';

/** Reads any supported training config. Throws ConfigError (file, line, column) when it cannot. */
export function readTrainingConfig(text: string, fileName: string): { format: TrainingConfigFormat; part: RunPart } {
  if (
    !isCollectiveFileName(fileName) &&
    !/\.(json|ya?ml)$/i.test(fileName) &&
    looksLikeLauncherScript(text, fileName)
  ) {
    return { format: 'launcher', part: parseLauncherScript(text, fileName) };
  }
  const doc = parseDocument(text, fileName);
  if (isCollectiveFileName(fileName)) return { format: 'collective', part: collectivePart(doc) };
  const value = doc.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(fileName, [
      { message: `expected a mapping of keys; this file is not ${WHAT_WE_READ}`, line: 1, column: 1, path: [] },
    ]);
  }
  if (looksLikeHfModelConfig(value)) {
    return {
      format: 'hf-model',
      part: { source: { format: 'hf-model', file: fileName }, model: modelFromHfDocument(doc) },
    };
  }
  if (doc.format === 'json' && (looksLikeDeepSpeed(value) || /ds_config|deepspeed/i.test(fileName)))
    return { format: 'deepspeed', part: deepSpeedPart(doc) };
  if (looksLikeAccelerate(value)) return { format: 'accelerate', part: acceleratePart(doc) };
  if (/ds_config|deepspeed/i.test(fileName)) return { format: 'deepspeed', part: deepSpeedPart(doc) };
  throw new ConfigError(fileName, [
    { message: `cannot tell what kind of config this is; expected ${WHAT_WE_READ}`, line: 1, column: 1, path: [] },
  ]);
}

// What one config file contributes to a TrainingRun. Each format's reader returns a RunPart; the assembler
// (training-run.ts) merges the parts, fills the gaps with defaults it names, and checks that they agree.
import type { EngineKind, ModelSpec, SystemSpec, TrainingRunSource, TrainingSpec } from '../engine/index';
import type { ConfigPath, PositionedDocument } from './positioned';

/** A file another file names (a model config, a system file), resolved by the caller, who can read files. */
export interface FileReference {
  readonly kind: 'model' | 'system' | 'deepspeed';
  /** As written, relative to the referring file. */
  readonly path: string;
  readonly doc: PositionedDocument;
  readonly at: ConfigPath;
}

/** Where in its file a value came from, so cross-file checks can point at it. */
export interface Located<T> {
  readonly value: T;
  readonly doc?: PositionedDocument;
  readonly at?: ConfigPath;
  /** For text formats (shell scripts) that have no document: the position directly. */
  readonly line?: number;
  readonly column?: number;
  readonly file?: string;
}

export interface RunPart {
  readonly source: TrainingRunSource;
  readonly model?: ModelSpec;
  readonly modelPreset?: Located<string>;
  readonly references?: readonly FileReference[];
  readonly training?: Partial<TrainingSpec>;
  readonly globalBatchSize?: Located<number>;
  readonly system?: SystemSpec;
  readonly systemPreset?: Located<string>;
  readonly nodes?: Located<number>;
  readonly gpusPerNode?: Located<number>;
  /** Total processes, when the file states it rather than nodes × GPUs per node (Accelerate's num_processes). */
  readonly worldSize?: Located<number>;
  readonly engine?: EngineKind;
  /** Facts the file implies that the user should see, e.g. "DeepSpeed ZeRO-2 without overlap_comm". */
  readonly notes?: readonly string[];
}

export function located<T>(value: T, doc: PositionedDocument, at: ConfigPath): Located<T> {
  return { value, doc, at };
}

// What-if knobs: `key=value` edits to a TrainingRun, and the sweep ranges `key=lo..hi`. Keys use the names
// people know from their configs (bucket_cap_mb, nodes) with a few aliases.
import {
  ALGORITHMS,
  DTYPES,
  PROTOCOLS,
  type Algorithm,
  type Dtype,
  type Protocol,
  type ReduceOp,
} from '../collective-types';
import { EngineError } from '../errors';
import { findGpu } from '../hardware/gpus';
import { presetSystem, PRESETS } from '../topology/presets';
import { LR_RULES, WRAPPERS, type LrRule, type TrainingRun, type TrainingSpec, type Wrapper } from './types';
import { asBytes } from '../units';

const MiB = 1024 * 1024;

const ALIASES: Readonly<Record<string, string>> = {
  bucket: 'bucket_cap_mb',
  bucket_mb: 'bucket_cap_mb',
  bucket_cap: 'bucket_cap_mb',
  node: 'nodes',
  num_machines: 'nodes',
  nnodes: 'nodes',
  gpus: 'gpus_per_node',
  nproc_per_node: 'gpus_per_node',
  gpuspernode: 'gpus_per_node',
  grad_dtype: 'dtype',
  gradient_dtype: 'dtype',
  communication_data_type: 'dtype',
  algo: 'algorithm',
  proto: 'protocol',
  micro_batch: 'micro_batch_size',
  train_micro_batch_size_per_gpu: 'micro_batch_size',
  grad_accum: 'gradient_accumulation_steps',
  accumulation: 'gradient_accumulation_steps',
  seq_len: 'sequence_length',
  seq: 'sequence_length',
  efficiency: 'compute_efficiency',
  op: 'reduce_op',
  lr: 'lr_rule',
};

export const WHAT_IF_KEYS: readonly string[] = [
  'bucket_cap_mb',
  'nodes',
  'gpus_per_node',
  'system',
  'gpu',
  'dtype',
  'compute_dtype',
  'algorithm',
  'protocol',
  'micro_batch_size',
  'gradient_accumulation_steps',
  'sequence_length',
  'wrapper',
  'reduce_op',
  'lr_rule',
  'compute_efficiency',
  'overlap_comm',
];

export function canonicalWhatIfKey(key: string): string {
  const k = key.trim().toLowerCase().replace(/-/g, '_');
  return ALIASES[k] ?? k;
}

function positive(key: string, text: string, integer: boolean): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new EngineError(`${key}=${text}: expected a positive ${integer ? 'integer' : 'number'}`);
  }
  return value;
}

function oneOf<T extends string>(key: string, text: string, allowed: readonly T[]): T {
  const match = allowed.find((a) => a.toLowerCase() === text.toLowerCase());
  if (!match) throw new EngineError(`${key}=${text}: expected one of ${allowed.join(', ')}`);
  return match;
}

/** Returns a copy of `run` with one knob changed; throws EngineError naming the key for an unknown key or bad value. */
export function applyWhatIf(run: TrainingRun, rawKey: string, text: string): TrainingRun {
  const key = canonicalWhatIfKey(rawKey);
  const training = (patch: Partial<TrainingSpec>): TrainingRun => ({ ...run, training: { ...run.training, ...patch } });
  switch (key) {
    case 'bucket_cap_mb':
      return training({ bucketBytes: asBytes(Math.round(positive(key, text, false) * MiB)) });
    case 'nodes':
      return { ...run, system: { ...run.system, nodes: positive(key, text, true) } };
    case 'gpus_per_node':
      return { ...run, system: { ...run.system, gpusPerNode: positive(key, text, true) } };
    case 'system': {
      const system = presetSystem(text, { nodes: run.system.nodes });
      if (!system)
        throw new EngineError(
          `system=${text}: unknown preset; presets: ${Object.keys(PRESETS).join(', ')} (or pass a system file with --system)`,
        );
      return { ...run, system };
    }
    case 'gpu': {
      const gpu = findGpu(text);
      if (!gpu) throw new EngineError(`gpu=${text}: not in the GPU catalogue`);
      return { ...run, system: { ...run.system, gpu: gpu.name } };
    }
    case 'dtype':
      return training({ gradDtype: oneOf<Dtype>(key, text, DTYPES) });
    case 'compute_dtype':
      return training({ computeDtype: oneOf<Dtype>(key, text, DTYPES) });
    case 'algorithm':
      return training({ algorithm: oneOf<Algorithm | 'auto'>(key, text, ['auto', ...ALGORITHMS]) });
    case 'protocol':
      return training({ protocol: oneOf<Protocol | 'auto'>(key, text, ['auto', ...PROTOCOLS]) });
    case 'micro_batch_size':
      return training({ microBatchSize: positive(key, text, true) });
    case 'gradient_accumulation_steps':
      return training({ gradAccumulationSteps: positive(key, text, true) });
    case 'sequence_length':
      return training({ sequenceLength: positive(key, text, true) });
    case 'wrapper':
      return training({ wrapper: oneOf<Wrapper>(key, text, WRAPPERS) });
    case 'reduce_op':
      return training({ reduceOp: oneOf<ReduceOp>(key, text, ['sum', 'avg', 'premulsum']) });
    case 'lr_rule':
      return training({ lrRule: oneOf<LrRule>(key, text, LR_RULES) });
    case 'compute_efficiency': {
      const value = positive(key, text, false);
      if (value > 1) throw new EngineError(`compute_efficiency=${text}: a fraction of peak, at most 1`);
      return training({ computeEfficiency: value });
    }
    case 'overlap_comm':
      return training({ overlapComm: oneOf(key, text, ['true', 'false']) === 'true' });
    default:
      throw new EngineError(`unknown what-if key '${rawKey}'; keys: ${WHAT_IF_KEYS.join(', ')}`);
  }
}

/** Splits "key=value", for --what-if. */
export function parseAssignment(text: string): { key: string; value: string } {
  const eq = text.indexOf('=');
  if (eq <= 0 || eq === text.length - 1) throw new EngineError(`'${text}': expected key=value, e.g. bucket_cap_mb=50`);
  return { key: text.slice(0, eq).trim(), value: text.slice(eq + 1).trim() };
}

export interface SweepRange {
  readonly key: 'bucket_cap_mb' | 'nodes';
  readonly values: readonly number[];
}

/**
 * Parses "bucket_cap_mb=1..1024" or "nodes=1..128" into powers of two from lo to hi (hi included even when it
 * is not a power of two), or an explicit list "bucket_cap_mb=10,25,50".
 */
export function parseSweep(text: string): SweepRange {
  const { key: rawKey, value } = parseAssignment(text);
  const key = canonicalWhatIfKey(rawKey);
  if (key !== 'bucket_cap_mb' && key !== 'nodes')
    throw new EngineError(`cannot sweep '${rawKey}'; sweep bucket_cap_mb or nodes`);
  const integer = key === 'nodes';
  if (value.includes(',')) {
    const values = value.split(',').map((v) => positive(key, v.trim(), integer));
    return { key, values: [...new Set(values)].sort((a, b) => a - b) };
  }
  const range = /^(\d+(?:\.\d+)?)\s*\.\.\s*(\d+(?:\.\d+)?)$/.exec(value);
  if (!range) throw new EngineError(`${key}=${value}: expected lo..hi (e.g. 1..1024) or a list (10,25,50)`);
  const lo = positive(key, range[1], integer);
  const hi = positive(key, range[2], integer);
  if (hi < lo) throw new EngineError(`${key}=${value}: the range ends before it starts`);
  const values: number[] = [];
  for (let v = lo; v < hi && values.length < 64; v *= 2) values.push(v);
  values.push(hi);
  return { key, values };
}

// Assembles one TrainingRun from the parts config files contribute: later parts override earlier ones, gaps are
// filled with defaults that are written down in `assumed`, and the batch arithmetic is checked across files.
import {
  DDP_DEFAULT_BUCKET_BYTES,
  DDP_FIRST_BUCKET_BYTES,
  DEEPSPEED_DEFAULT_BUCKET_ELEMENTS,
  DTYPE_BYTES,
  HOROVOD_DEFAULT_FUSION_BYTES,
  findGpu,
  formatBytes,
  presetSystem,
  type SystemSpec,
  type TrainingRun,
  type TrainingSpec,
  type Wrapper,
  type DefaultedValue,
  asBytes,
} from '../engine/index';
import { limitProblem } from './limits';
import { modelPreset } from './model-presets';
import { ConfigError, positionOf, type ConfigIssue } from './positioned';
import type { Located, RunPart } from './run-part';

export const DEFAULT_SYSTEM_PRESET = 'dgx-h100';
export const DEFAULT_MODEL_PRESET = 'llama-2-7b';
/** A typical model FLOPs utilisation for large transformer training. */
export const DEFAULT_COMPUTE_EFFICIENCY = 0.45;
/** Longest sequence assumed when no config says: long enough for modern decoders, within every model's context. */
export const DEFAULT_MAX_SEQUENCE = 4096;

/** Throws a positioned ConfigError at a located value (or at the file's top when it has no position). */
export function failAt(where: Located<unknown> | undefined, fallbackFile: string, message: string): never {
  const file = where?.doc?.fileName ?? where?.file ?? fallbackFile;
  const position = where?.doc
    ? positionOf(where.doc, where.at ?? [], { key: false })
    : { line: where?.line ?? 1, column: where?.column ?? 1 };
  const issue: ConfigIssue = { message, path: where?.at ?? [], ...position };
  throw new ConfigError(file, [issue]);
}

function lastOf<T>(parts: readonly RunPart[], pick: (p: RunPart) => T | undefined): T | undefined {
  for (let i = parts.length - 1; i >= 0; i--) {
    const value = pick(parts[i]);
    if (value !== undefined) return value;
  }
  return undefined;
}

function defaultBucketBytes(wrapper: Wrapper, gradBytes: number): { bytes: number; why: string } {
  if (wrapper === 'horovod') return { bytes: HOROVOD_DEFAULT_FUSION_BYTES, why: "Horovod's 64 MiB fusion threshold" };
  if (wrapper.startsWith('zero'))
    return {
      bytes: DEEPSPEED_DEFAULT_BUCKET_ELEMENTS * gradBytes,
      why: "DeepSpeed's reduce_bucket_size default of 5e8 elements",
    };
  return { bytes: DDP_DEFAULT_BUCKET_BYTES, why: "DDP's bucket_cap_mb default" };
}

/** Decides nodes and GPUs per node from what the files say, against the system they run on. */
function placeRanks(parts: readonly RunPart[], base: SystemSpec, file: string): { nodes: number; gpusPerNode: number } {
  const nodes = lastOf(parts, (p) => p.nodes);
  const perNode = lastOf(parts, (p) => p.gpusPerNode);
  const world = lastOf(parts, (p) => p.worldSize);
  let n = nodes?.value;
  let g = perNode?.value;
  if (world) {
    if (n !== undefined && g === undefined) {
      if (world.value % n !== 0) failAt(world, file, `${world.value} processes do not split evenly over ${n} machines`);
      g = world.value / n;
    } else if (n === undefined && g !== undefined) {
      if (world.value % g !== 0) failAt(world, file, `${world.value} processes do not fill nodes of ${g} GPUs`);
      n = world.value / g;
    } else if (n === undefined && g === undefined) {
      if (world.value <= base.gpusPerNode) [n, g] = [1, world.value];
      else if (world.value % base.gpusPerNode === 0) [n, g] = [world.value / base.gpusPerNode, base.gpusPerNode];
      else
        failAt(
          world,
          file,
          `${world.value} processes do not fill nodes of ${base.gpusPerNode} GPUs; say how many machines`,
        );
    } else if (n! * g! !== world.value) {
      failAt(world, file, `${world.value} processes, but ${n} nodes × ${g} GPUs per node is ${n! * g!}`);
    }
  }
  return { nodes: n ?? base.nodes, gpusPerNode: g ?? base.gpusPerNode };
}

/** DeepSpeed configs state the world size only implicitly: train_batch_size = micro × accumulation × world. */
function worldFromBatch(parts: readonly RunPart[], training: Partial<TrainingSpec>): Located<number> | undefined {
  if (parts.some((p) => p.nodes || p.gpusPerNode || p.worldSize)) return undefined;
  const global = lastOf(parts, (p) => p.globalBatchSize);
  const micro = training.microBatchSize;
  const accumulation = training.gradAccumulationSteps;
  if (!global || micro === undefined || accumulation === undefined) return undefined;
  const world = global.value / (micro * accumulation);
  if (!Number.isInteger(world) || world < 1)
    failAt(
      global,
      parts[0].source.file,
      `global batch ${global.value} is not a whole number of micro-batches of ${micro} × ${accumulation} accumulation steps`,
    );
  return { ...global, value: world };
}

export function assembleTrainingRun(parts: readonly RunPart[]): TrainingRun {
  const assumed: string[] = [];
  const defaulted: Partial<Record<DefaultedValue, string>> = {};
  /** Records a default that filled a gap: in words for `assumed`, and by name for editors. */
  const assume = (value: DefaultedValue, words?: string): void => {
    if (words) assumed.push(words);
    defaulted[value] = words ?? '';
  };
  const file = parts[0]?.source.file ?? 'config';
  const training: Partial<TrainingSpec> = Object.assign({}, ...parts.map((p) => p.training ?? {}));

  // Model: the last file that gives one, else a preset, else the stated default.
  let model = lastOf(parts, (p) => p.model);
  if (!model) {
    const preset = lastOf(parts, (p) => p.modelPreset);
    model = modelPreset(preset?.value ?? DEFAULT_MODEL_PRESET);
    if (!model) failAt(preset, file, `unknown model preset '${preset?.value}'`);
    if (!preset) {
      assume('model', `model ${model.name} (no model given; pass --model config.json)`);
    }
  }

  // System: an inline or file system wins over a preset; nodes and GPUs per node from any file scale it.
  const systemSource = lastOf(parts, (p) => (p.system || p.systemPreset ? p : undefined));
  const inline = systemSource?.system;
  const presetName = systemSource?.systemPreset;
  let base: SystemSpec | undefined = inline;
  if (!base) {
    base = presetSystem(presetName?.value ?? DEFAULT_SYSTEM_PRESET);
    if (!base) failAt(presetName, file, `unknown system preset '${presetName?.value}'`);
    if (!presetName) {
      assume('system', `system ${DEFAULT_SYSTEM_PRESET} (pass --system to change it)`);
    }
  }
  const derived = worldFromBatch(parts, training);
  if (derived) assumed.push(`world size ${derived.value} (train batch ÷ micro-batch ÷ accumulation steps)`);
  const { nodes, gpusPerNode } = placeRanks(
    derived ? [...parts, { source: parts[0].source, worldSize: derived }] : parts,
    base,
    file,
  );
  let system: SystemSpec = base;
  if (nodes !== base.nodes || gpusPerNode !== base.gpusPerNode) {
    system = (!inline && presetSystem(presetName?.value ?? DEFAULT_SYSTEM_PRESET, { nodes, gpusPerNode })) || {
      ...base,
      nodes,
      gpusPerNode,
    };
  }
  const world = system.nodes * system.gpusPerNode;
  const tooMany = limitProblem('ranks', `${system.nodes} nodes × ${system.gpusPerNode} GPUs per node`, world);
  if (tooMany)
    failAt(
      lastOf(parts, (p) => p.nodes ?? p.worldSize ?? p.gpusPerNode),
      file,
      tooMany,
    );

  const wrapper = training.wrapper ?? 'ddp';
  if (!training.wrapper) {
    assume('wrapper', 'DDP data parallelism');
  }
  // GPUs without bf16 tensor cores (V100) train in fp16.
  const hasBf16 = (findGpu(system.gpu)?.bf16Tflops ?? 1) > 0;
  const gradDtype = training.gradDtype ?? (hasBf16 ? 'bf16' : 'fp16');
  if (!training.gradDtype) {
    assume('gradDtype', `${gradDtype} gradients`);
  }
  const computeDtype =
    training.computeDtype ??
    (gradDtype === 'fp32' || gradDtype.startsWith('fp8') ? (hasBf16 ? 'bf16' : 'fp16') : gradDtype);
  if (!training.computeDtype) {
    assume('computeDtype', `${computeDtype} matmuls`);
  }
  if (computeDtype === 'bf16' && !hasBf16)
    failAt(undefined, file, `${system.gpu} has no bf16 tensor cores; set the compute dtype to fp16`);
  let bucketBytes = training.bucketBytes;
  if (bucketBytes === undefined) {
    const d = defaultBucketBytes(wrapper, DTYPE_BYTES[gradDtype]);
    bucketBytes = asBytes(d.bytes);
    // FSDP and ZeRO-3 gather and scatter per unit, so their bucket is no assumption the user reads about.
    assume(
      'bucketBytes',
      wrapper !== 'fsdp' && wrapper !== 'zero3' ? `${formatBytes(bucketBytes)} buckets (${d.why})` : undefined,
    );
  }
  const maxSequence = model.maxSequenceLength ?? DEFAULT_MAX_SEQUENCE;
  const sequenceLength = training.sequenceLength ?? Math.min(maxSequence, DEFAULT_MAX_SEQUENCE);
  if (!training.sequenceLength) {
    assume('sequenceLength', `sequence length ${sequenceLength}`);
  }

  // Batch arithmetic, as DeepSpeed checks it: global = micro × accumulation × world.
  const global = lastOf(parts, (p) => p.globalBatchSize);
  let micro = training.microBatchSize;
  let accumulation = training.gradAccumulationSteps;
  if (global) {
    const g = global.value;
    if (micro !== undefined && accumulation === undefined) {
      accumulation = g / (micro * world);
      if (!Number.isInteger(accumulation) || accumulation < 1)
        failAt(global, file, `global batch ${g} is not a whole number of micro-batches of ${micro} on ${world} GPUs`);
    } else if (micro === undefined && accumulation !== undefined) {
      micro = g / (accumulation * world);
      if (!Number.isInteger(micro) || micro < 1)
        failAt(
          global,
          file,
          `global batch ${g} does not divide into ${accumulation} accumulation steps on ${world} GPUs`,
        );
    } else if (micro === undefined && accumulation === undefined) {
      accumulation = 1;
      micro = g / world;
      if (!Number.isInteger(micro) || micro < 1)
        failAt(global, file, `global batch ${g} does not divide over ${world} GPUs`);
      assume('gradAccumulationSteps', 'no gradient accumulation');
    } else if (micro! * accumulation! * world !== g) {
      failAt(
        global,
        file,
        `global batch ${g} ≠ micro-batch ${micro} × accumulation ${accumulation} × ${world} GPUs = ${micro! * accumulation! * world}`,
      );
    }
  }
  if (micro === undefined) {
    micro = 1;
    assume('microBatchSize', 'micro-batch of 1 sequence per GPU');
  }
  if (accumulation === undefined) {
    accumulation = 1;
    assume('gradAccumulationSteps', 'no gradient accumulation');
  }
  const efficiency = training.computeEfficiency ?? DEFAULT_COMPUTE_EFFICIENCY;
  if (training.computeEfficiency === undefined) {
    assume('computeEfficiency', `compute at ${Math.round(efficiency * 100)}% of the GPU's peak matmul throughput`);
  }
  const reduceOp = training.reduceOp ?? 'avg';
  if (!training.reduceOp) {
    assume('reduceOp', 'gradients averaged across ranks');
  }

  const spec: TrainingSpec = {
    microBatchSize: micro,
    gradAccumulationSteps: accumulation,
    sequenceLength,
    gradDtype,
    computeDtype,
    bucketBytes,
    firstBucketBytes: training.firstBucketBytes ?? (wrapper === 'ddp' ? DDP_FIRST_BUCKET_BYTES : asBytes(0)),
    wrapper,
    overlapComm: training.overlapComm ?? (wrapper !== 'zero1' && wrapper !== 'zero2'),
    reduceOp,
    lrRule: training.lrRule ?? 'constant',
    baseLr: training.baseLr,
    computeEfficiency: efficiency,
    algorithm: training.algorithm ?? 'auto',
    protocol: training.protocol ?? 'auto',
    allgatherBucketBytes:
      training.allgatherBucketBytes ??
      (wrapper === 'zero1' || wrapper === 'zero2'
        ? asBytes(DEEPSPEED_DEFAULT_BUCKET_ELEMENTS * DTYPE_BYTES[computeDtype])
        : undefined),
    gradientPredivideFactor: training.gradientPredivideFactor,
  };
  const notes = parts.flatMap((p) => p.notes ?? []);
  return {
    sources: parts.map((p) => p.source),
    model,
    training: spec,
    system,
    engine: lastOf(parts, (p) => p.engine) ?? 'simulated',
    assumed,
    defaulted,
    notes,
  };
}

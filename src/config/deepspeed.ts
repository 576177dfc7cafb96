// Reads a DeepSpeed JSON config (ds_config.json) into a RunPart: batch sizes, precision, the ZeRO stage and its
// buckets, and how gradients are scaled. Values the Hugging Face Trainer fills in ("auto") are left to defaults.
import {
  DEEPSPEED_DEFAULT_BUCKET_ELEMENTS,
  DTYPE_BYTES,
  type Dtype,
  type TrainingSpec,
  type Wrapper,
  asBytes,
} from '../engine/index';
import { ConfigError, issueAtPath, parseDocument, validateAgainstSchema, type PositionedDocument } from './positioned';
import { located, type RunPart } from './run-part';

const AUTO = { const: 'auto' };
const count = (description: string): object => ({ anyOf: [{ type: 'integer', minimum: 1 }, AUTO], description });
const elements = (description: string): object => ({ anyOf: [{ type: 'number', minimum: 1 }, AUTO], description });
const precision = { type: 'object', properties: { enabled: { anyOf: [{ type: 'boolean' }, AUTO] } } };
const open = { type: 'object' };

/** Top-level keys DeepSpeed documents; anything else is most likely a typo, which DeepSpeed would also reject. */
export const DEEPSPEED_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    train_batch_size: count('samples per optimizer step across all GPUs'),
    train_micro_batch_size_per_gpu: count('samples per GPU per forward/backward'),
    gradient_accumulation_steps: count('micro-batches per optimizer step'),
    fp16: precision,
    bf16: precision,
    amp: open,
    zero_optimization: {
      type: 'object',
      additionalProperties: false,
      properties: {
        stage: { enum: [0, 1, 2, 3] },
        allgather_partitions: { type: 'boolean' },
        allgather_bucket_size: elements('elements gathered per all-gather'),
        overlap_comm: { anyOf: [{ type: 'boolean' }, AUTO] },
        reduce_scatter: { type: 'boolean' },
        reduce_bucket_size: elements('elements per gradient reduction'),
        allreduce_bucket_size: elements('elements per gradient all-reduce'),
        contiguous_gradients: { type: 'boolean' },
        offload_param: open,
        offload_optimizer: open,
        cpu_offload: { type: 'boolean' },
        sub_group_size: elements('optimizer sub-group size'),
        stage3_max_live_parameters: elements('ZeRO-3 live parameters'),
        stage3_max_reuse_distance: elements('ZeRO-3 reuse distance'),
        stage3_prefetch_bucket_size: elements('ZeRO-3 prefetch bucket'),
        stage3_param_persistence_threshold: elements('ZeRO-3 persistence threshold'),
        stage3_gather_16bit_weights_on_model_save: { type: 'boolean' },
        stage3_gather_fp16_weights_on_model_save: { type: 'boolean' },
        elastic_checkpoint: { type: 'boolean' },
        ignore_unused_parameters: { type: 'boolean' },
        round_robin_gradients: { type: 'boolean' },
        load_from_fp32_weights: { type: 'boolean' },
        zero_hpz_partition_size: { type: 'integer', minimum: 1 },
        zero_quantized_weights: { type: 'boolean' },
        zero_quantized_gradients: { type: 'boolean' },
        mics_shard_size: { type: 'integer' },
        mics_hierarchical_params_gather: { type: 'boolean' },
        memory_efficient_linear: { type: 'boolean' },
        use_multi_rank_bucket_allreduce: { type: 'boolean' },
      },
    },
    allreduce_bucket_size: elements('elements per gradient all-reduce'),
    reduce_bucket_size: elements('elements per gradient reduction'),
    communication_data_type: { enum: ['fp32', 'fp16', 'bf16', null] },
    prescale_gradients: { type: 'boolean' },
    gradient_predivide_factor: { type: 'number', exclusiveMinimum: 0 },
    gradient_clipping: { anyOf: [{ type: 'number', minimum: 0 }, AUTO] },
    optimizer: open,
    scheduler: open,
    sparse_gradients: { type: 'boolean' },
    steps_per_print: { type: 'integer' },
    wall_clock_breakdown: { type: 'boolean' },
    dump_state: { type: 'boolean' },
    memory_breakdown: { type: 'boolean' },
    zero_allow_untested_optimizer: { type: 'boolean' },
    zero_force_ds_cpu_optimizer: { type: 'boolean' },
    activation_checkpointing: open,
    flops_profiler: open,
    comms_logger: open,
    tensorboard: open,
    wandb: open,
    csv_monitor: open,
    comet: open,
    sparse_attention: open,
    data_efficiency: open,
    curriculum_learning: open,
    elasticity: open,
    autotuning: open,
    checkpoint: open,
    data_types: open,
    compression_training: open,
    aio: open,
    nebula: open,
    pipeline: open,
    seq_parallel_communication_data_type: { type: 'string' },
    disable_allgather: { type: 'boolean' },
    timers: open,
  },
};

/** True when a parsed JSON object has keys only DeepSpeed configs use. */
export function looksLikeDeepSpeed(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  return [
    'train_batch_size',
    'train_micro_batch_size_per_gpu',
    'zero_optimization',
    'gradient_accumulation_steps',
  ].some((k) => k in value);
}

type Raw = Record<string, unknown>;
const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

export function deepSpeedPart(doc: PositionedDocument): RunPart {
  const issues = validateAgainstSchema(doc, DEEPSPEED_SCHEMA);
  if (issues.length > 0) throw new ConfigError(doc.fileName, issues);
  const c = doc.value as Raw;
  const zero = (c.zero_optimization ?? {}) as Raw;
  const fp16 = (c.fp16 ?? {}) as Raw;
  const bf16 = (c.bf16 ?? {}) as Raw;
  const notes: string[] = [];
  if (fp16.enabled === true && bf16.enabled === true) {
    throw new ConfigError(doc.fileName, [
      issueAtPath(doc, ['bf16', 'enabled'], 'bf16.enabled: fp16 and bf16 cannot both be enabled'),
    ]);
  }
  const computeDtype: Dtype | undefined =
    fp16.enabled === true
      ? 'fp16'
      : bf16.enabled === true
        ? 'bf16'
        : fp16.enabled === false && bf16.enabled !== 'auto'
          ? 'fp32'
          : undefined;
  const gradDtype = (c.communication_data_type as Dtype | null | undefined) ?? computeDtype;
  const stage = num(zero.stage) ?? 0;
  const wrapper: Wrapper = stage === 0 ? 'ddp' : (`zero${stage}` as Wrapper);
  const bytesPerElement = DTYPE_BYTES[gradDtype ?? 'bf16'];
  // Stage 0 all-reduces in allreduce_bucket_size pieces; ZeRO-1/2 reduce in reduce_bucket_size pieces.
  const bucketElements =
    stage === 0
      ? (num(c.allreduce_bucket_size) ?? num(zero.allreduce_bucket_size))
      : (num(zero.reduce_bucket_size) ?? num(c.reduce_bucket_size));
  const overlap = typeof zero.overlap_comm === 'boolean' ? zero.overlap_comm : stage === 3;
  if (stage === 0)
    notes.push('DeepSpeed without ZeRO all-reduces gradients after backward, in fixed-size buckets (no overlap)');
  else
    notes.push(
      `DeepSpeed ZeRO-${stage}${stage < 3 ? (overlap ? ' with overlap_comm' : ' without overlap_comm: gradients are reduced after backward') : ''}`,
    );
  const predivide = num(c.gradient_predivide_factor);
  if (c.prescale_gradients === true)
    notes.push(`gradients pre-divided by ${predivide ?? 1} before the sum and by the rest of the world size after it`);
  for (const key of ['train_batch_size', 'train_micro_batch_size_per_gpu', 'gradient_accumulation_steps'] as const) {
    if (c[key] === 'auto') notes.push(`${key} is "auto" (the Hugging Face Trainer fills it in)`);
  }
  const training: Partial<TrainingSpec> = {
    wrapper,
    overlapComm: stage === 0 ? false : overlap,
    firstBucketBytes: asBytes(0),
    reduceOp: 'avg',
    ...(computeDtype ? { computeDtype } : {}),
    ...(gradDtype ? { gradDtype } : {}),
    ...(num(c.train_micro_batch_size_per_gpu) ? { microBatchSize: num(c.train_micro_batch_size_per_gpu) } : {}),
    ...(num(c.gradient_accumulation_steps) ? { gradAccumulationSteps: num(c.gradient_accumulation_steps) } : {}),
    ...(bucketElements
      ? { bucketBytes: asBytes(bucketElements * bytesPerElement) }
      : stage < 3
        ? { bucketBytes: asBytes(DEEPSPEED_DEFAULT_BUCKET_ELEMENTS * bytesPerElement) }
        : {}),
    ...(num(zero.allgather_bucket_size)
      ? { allgatherBucketBytes: asBytes(num(zero.allgather_bucket_size)! * DTYPE_BYTES[computeDtype ?? 'bf16']) }
      : {}),
    ...(predivide ? { gradientPredivideFactor: predivide } : {}),
  };
  if (!bucketElements && stage < 3)
    notes.push(`${stage === 0 ? 'allreduce' : 'reduce'}_bucket_size not set: DeepSpeed's default of 5e8 elements`);
  const batch = num(c.train_batch_size);
  return {
    source: { format: 'deepspeed', file: doc.fileName },
    training,
    globalBatchSize: batch ? located(batch, doc, ['train_batch_size']) : undefined,
    notes,
  };
}

export function parseDeepSpeedConfig(text: string, fileName: string): RunPart {
  return deepSpeedPart(parseDocument(text, fileName));
}

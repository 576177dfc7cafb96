// Reads a Hugging Face Accelerate config (the YAML `accelerate config` writes) into a RunPart: the kind of
// parallelism, how many processes on how many machines, and the mixed-precision mode.
import { type Dtype, type TrainingSpec, type Wrapper, asBytes } from '../engine/index';
import { ConfigError, issueAtPath, parseDocument, validateAgainstSchema, type PositionedDocument } from './positioned';
import { located, type FileReference, type RunPart } from './run-part';

const DISTRIBUTED_TYPES = [
  'NO',
  'MULTI_GPU',
  'MULTI_CPU',
  'MULTI_XPU',
  'MULTI_NPU',
  'MULTI_MLU',
  'MULTI_MUSA',
  'MULTI_HPU',
  'DEEPSPEED',
  'FSDP',
  'XLA',
  'TPU',
  'MEGATRON_LM',
];
const open = { type: 'object' };
const anything = {};

export const ACCELERATE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    compute_environment: { enum: ['LOCAL_MACHINE', 'AMAZON_SAGEMAKER'] },
    distributed_type: { enum: DISTRIBUTED_TYPES },
    num_processes: { type: 'integer', minimum: 1 },
    num_machines: { type: 'integer', minimum: 1 },
    mixed_precision: { enum: ['no', 'fp16', 'bf16', 'fp8'] },
    machine_rank: { type: 'integer', minimum: 0 },
    main_process_ip: { type: ['string', 'null'] },
    main_process_port: { type: ['integer', 'null'] },
    main_training_function: { type: 'string' },
    rdzv_backend: { type: 'string' },
    same_network: { type: 'boolean' },
    gpu_ids: { type: ['string', 'integer'] },
    use_cpu: { type: 'boolean' },
    debug: { type: 'boolean' },
    downcast_bf16: anything,
    enable_cpu_affinity: { type: 'boolean' },
    tpu_env: { type: 'array' },
    tpu_use_cluster: { type: 'boolean' },
    tpu_use_sudo: { type: 'boolean' },
    tpu_name: anything,
    tpu_zone: anything,
    command_file: anything,
    commands: anything,
    dynamo_backend: { type: 'string' },
    dynamo_config: open,
    deepspeed_config: {
      type: 'object',
      properties: {
        zero_stage: { enum: [0, 1, 2, 3] },
        gradient_accumulation_steps: { type: 'integer', minimum: 1 },
        deepspeed_config_file: { type: 'string' },
      },
    },
    fsdp_config: { type: 'object', properties: { fsdp_sharding_strategy: { type: ['string', 'integer'] } } },
    megatron_lm_config: open,
    ipex_config: open,
    mpirun_config: open,
    fp8_config: open,
  },
};

/** True when a parsed YAML document has keys only Accelerate configs use. */
export function looksLikeAccelerate(value: unknown): boolean {
  return typeof value === 'object' && value !== null && ('distributed_type' in value || 'compute_environment' in value);
}

export function acceleratePart(doc: PositionedDocument): RunPart {
  const issues = validateAgainstSchema(doc, ACCELERATE_SCHEMA);
  if (issues.length > 0) throw new ConfigError(doc.fileName, issues);
  const c = doc.value as Record<string, unknown>;
  const notes: string[] = [];
  const kind = (c.distributed_type as string | undefined) ?? 'NO';
  const precision = (c.mixed_precision as string | undefined) ?? 'no';
  const computeDtype: Dtype = precision === 'fp16' ? 'fp16' : precision === 'no' ? 'fp32' : 'bf16';
  if (precision === 'fp8') notes.push('fp8 mixed precision is priced at the bf16 rate');
  let wrapper: Wrapper = 'ddp';
  let gradDtype: Dtype = computeDtype;
  const training: { -readonly [K in keyof TrainingSpec]?: TrainingSpec[K] } = {};
  const references: FileReference[] = [];
  if (kind === 'MULTI_GPU' || kind === 'NO') {
    // DDP under autocast keeps fp32 parameters, so its gradients, and its AllReduces, are fp32.
    gradDtype = 'fp32';
    if (precision !== 'no')
      notes.push(`mixed_precision ${precision} with DDP: matmuls in ${computeDtype}, gradients reduced in fp32`);
  } else if (kind === 'DEEPSPEED') {
    const ds = (c.deepspeed_config ?? {}) as Record<string, unknown>;
    const stage = typeof ds.zero_stage === 'number' ? ds.zero_stage : 0;
    wrapper = stage === 0 ? 'ddp' : (`zero${stage}` as Wrapper);
    if (typeof ds.gradient_accumulation_steps === 'number')
      training.gradAccumulationSteps = ds.gradient_accumulation_steps;
    training.firstBucketBytes = asBytes(0);
    training.overlapComm = stage === 3;
    // The DeepSpeed file, when named, holds the real batch and bucket settings; it is read after this part.
    if (typeof ds.deepspeed_config_file === 'string' && ds.deepspeed_config_file) {
      references.push({
        kind: 'deepspeed',
        path: ds.deepspeed_config_file,
        doc,
        at: ['deepspeed_config', 'deepspeed_config_file'],
      });
    }
  } else if (kind === 'FSDP') {
    const strategy = String(((c.fsdp_config ?? {}) as Record<string, unknown>).fsdp_sharding_strategy ?? 'FULL_SHARD');
    // SHARD_GRAD_OP shards gradients and optimizer state but keeps parameters whole: ZeRO-2's collectives.
    wrapper = /SHARD_GRAD_OP|^2$/.test(strategy) ? 'zero2' : /NO_SHARD|^3$/.test(strategy) ? 'ddp' : 'fsdp';
    if (wrapper !== 'fsdp')
      notes.push(`FSDP ${strategy} runs the collectives of ${wrapper === 'ddp' ? 'DDP' : 'ZeRO-2'}`);
    if (/HYBRID/.test(strategy)) notes.push('FSDP hybrid sharding is modelled as full sharding across all ranks');
    if (wrapper === 'zero2') training.overlapComm = true;
  } else {
    throw new ConfigError(doc.fileName, [
      issueAtPath(
        doc,
        ['distributed_type'],
        `distributed_type: ${kind} is not GPU data parallelism; use MULTI_GPU, DEEPSPEED or FSDP`,
      ),
    ]);
  }
  training.wrapper = wrapper;
  training.computeDtype = computeDtype;
  training.gradDtype = gradDtype;
  const processes = typeof c.num_processes === 'number' ? c.num_processes : kind === 'NO' ? 1 : undefined;
  const machines = typeof c.num_machines === 'number' ? c.num_machines : undefined;
  return {
    source: { format: 'accelerate', file: doc.fileName },
    training,
    worldSize:
      processes !== undefined
        ? c.num_processes !== undefined
          ? located(processes, doc, ['num_processes'])
          : { value: processes }
        : undefined,
    nodes: machines !== undefined ? located(machines, doc, ['num_machines']) : undefined,
    references,
    notes,
  };
}

export function parseAccelerateConfig(text: string, fileName: string): RunPart {
  return acceleratePart(parseDocument(text, fileName));
}

// The training-run model every config format parses into, and the step model consumes.
// Config readers (src/config) fill it from text; the engine only reads it, so it lives here with the engine.
import type { Algorithm, Dtype, Protocol, ReduceOp } from '../collective-types';
import type { SystemSpec } from '../topology/spec';
import type { Bytes } from '../units';

/** The data-parallel wrapper, which decides which collectives a step runs and when. */
export type Wrapper = 'ddp' | 'fsdp' | 'zero1' | 'zero2' | 'zero3' | 'horovod';
export const WRAPPERS: readonly Wrapper[] = ['ddp', 'fsdp', 'zero1', 'zero2', 'zero3', 'horovod'];

/** How the learning rate follows the world size: fixed, linear scaling (Goyal et al.), or square-root scaling. */
export type LrRule = 'constant' | 'linear' | 'sqrt';
export const LR_RULES: readonly LrRule[] = ['constant', 'linear', 'sqrt'];

export type EngineKind = 'simulated' | 'native';

/**
 * One parameter tensor (or, with `params` = 0, a parameter-free op such as attention's score matmuls) in the
 * order the model registers it. Backward visits these in reverse, which is also the order DDP buckets them.
 */
export interface ParamTensor {
  readonly name: string;
  readonly params: number;
  /** Forward FLOPs per token this tensor's op costs (2 × params for a matmul weight, 0 for norms and biases). */
  readonly forwardFlopsPerToken: number;
  /**
   * Forward FLOPs per token that grow with the context: attention's QKᵀ and AV matmuls cost 4 × width FLOPs per
   * token for every token of the sequence. Multiplied by the sequence length when a step is modelled.
   */
  readonly forwardFlopsPerTokenPerSequenceToken?: number;
}

/** A block of the model (embeddings, one transformer layer, the head) with its tensors. */
export interface LayerSpec {
  readonly name: string;
  readonly tensors: readonly ParamTensor[];
}

export interface ModelSpec {
  /** Human name, e.g. "Llama-2-7B (LlamaForCausalLM)". */
  readonly name: string;
  /** gpt2 | bert | llama | mistral | mixtral | generic. */
  readonly family: string;
  readonly layers: readonly LayerSpec[];
  /** The longest sequence the model accepts, when its config says. */
  readonly maxSequenceLength?: number;
}

export interface TrainingSpec {
  readonly microBatchSize: number;
  readonly gradAccumulationSteps: number;
  /** Tokens per sample. */
  readonly sequenceLength: number;
  /** Dtype in which gradients are reduced: sets the bytes of every collective. */
  readonly gradDtype: Dtype;
  /** Dtype the matmuls run in: picks the GPU's peak throughput. */
  readonly computeDtype: Dtype;
  /** The bucket cap (DDP's bucket_cap_mb, DeepSpeed's reduce/allreduce_bucket_size, Horovod's fusion threshold). */
  readonly bucketBytes: Bytes;
  /** DDP closes its first bucket early (1 MiB) so the first AllReduce starts sooner; 0 disables it. */
  readonly firstBucketBytes: Bytes;
  readonly wrapper: Wrapper;
  /** Whether gradient collectives start during backward (DDP, ZeRO overlap_comm) or only after it. */
  readonly overlapComm: boolean;
  readonly reduceOp: ReduceOp;
  readonly lrRule: LrRule;
  /** Learning rate at one GPU, when the config gives it (the gradient-scaling check uses it). */
  readonly baseLr?: number;
  /** Achieved fraction of the GPU's peak matmul throughput. */
  readonly computeEfficiency: number;
  readonly algorithm: Algorithm | 'auto';
  readonly protocol: Protocol | 'auto';
  /** ZeRO-1/2 gather the updated parameters after the optimizer in pieces of this size (allgather_bucket_size). */
  readonly allgatherBucketBytes?: Bytes;
  /** DeepSpeed's gradient_predivide_factor, when set: gradients are divided by this before the sum. */
  readonly gradientPredivideFactor?: number;
}

export interface TrainingRunSource {
  /** collective | deepspeed | accelerate | hf-model | torchrun | srun. */
  readonly format: string;
  readonly file: string;
}

/** The values of a run that a default can fill when no config gives them. */
export type DefaultedValue =
  | 'model'
  | 'system'
  | 'sequenceLength'
  | 'microBatchSize'
  | 'gradAccumulationSteps'
  | 'computeEfficiency'
  | 'bucketBytes'
  | 'gradDtype'
  | 'computeDtype'
  | 'wrapper'
  | 'reduceOp';

export interface TrainingRun {
  readonly sources: readonly TrainingRunSource[];
  readonly model: ModelSpec;
  readonly training: TrainingSpec;
  readonly system: SystemSpec;
  readonly engine: EngineKind;
  /** Every default that filled a gap, in words, e.g. "25 MiB buckets (DDP's default bucket_cap_mb)". */
  readonly assumed: readonly string[];
  /**
   * Which values no config gave, by name, each with its words in `assumed` ('' when none is shown), so an editor
   * can tell a default from a value a file states.
   */
  readonly defaulted?: Readonly<Partial<Record<DefaultedValue, string>>>;
  /** What the configs imply that changes the step, in words, e.g. "DeepSpeed ZeRO-2 without overlap_comm". */
  readonly notes: readonly string[];
}

export function modelParameters(model: ModelSpec): number {
  let total = 0;
  for (const layer of model.layers) for (const tensor of layer.tensors) total += tensor.params;
  return total;
}

export function modelForwardFlopsPerToken(model: ModelSpec, sequenceLength: number): number {
  let total = 0;
  for (const layer of model.layers) {
    for (const tensor of layer.tensors)
      total += tensor.forwardFlopsPerToken + (tensor.forwardFlopsPerTokenPerSequenceToken ?? 0) * sequenceLength;
  }
  return total;
}

export function worldSizeOf(system: SystemSpec): number {
  return system.nodes * system.gpusPerNode;
}

/** Samples per optimizer step across all ranks. */
export function globalBatchSize(run: TrainingRun): number {
  return run.training.microBatchSize * run.training.gradAccumulationSteps * worldSizeOf(run.system);
}

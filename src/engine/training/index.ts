// The training-step model's public surface, re-exported by src/engine/index.ts.
export * from './types';
export {
  assignBuckets,
  flattenModel,
  chunkSizes,
  DDP_FIRST_BUCKET_BYTES,
  DDP_DEFAULT_BUCKET_BYTES,
  HOROVOD_DEFAULT_FUSION_BYTES,
  DEEPSPEED_DEFAULT_BUCKET_ELEMENTS,
} from './buckets';
export type { FlatModel, GradientBucket } from './buckets';
export {
  simulateTrainingStep,
  defaultFirstBucketBytes,
  ADAM_HBM_BYTES_PER_PARAM,
  BACKWARD_TO_FORWARD_FLOPS,
} from './step';
export type { StepResult, StepCollective, ComputeSpan, StepOptions } from './step';
export { CollectiveCoster, simulatedPrice } from './collective-cost';
export type { CollectivePricer, CollectiveCost, CostOptions } from './collective-cost';
export { stepTrace, DEFAULT_TRACE_RANKS } from './step-trace';
export type { StepTraceOptions } from './step-trace';
export { applyWhatIf, parseAssignment, parseSweep, canonicalWhatIfKey, WHAT_IF_KEYS } from './what-if';
export type { SweepRange } from './what-if';
export {
  sweepTraining,
  trainingSweepPoint,
  summariseTrainingSweep,
  bestIndex,
  TIE_TOLERANCE,
  EFFICIENT_SCALING,
} from './sweep';
export type { SweepPoint, TrainingSweep } from './sweep';

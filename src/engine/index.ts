// The engine's only public surface. Other layers import from here, never from files inside src/engine.
export * from './units';
export * from './collective-types';
export type { Flow, Phase, Lane, LaneKind, Span, Trace, TraceMetadata } from './trace/model';
export { PHASES } from './trace/model';
export { TraceBuilder } from './trace/builder';
export type {
  SystemSpec,
  IntraNodeFabric,
  NicSpec,
  NetworkSpec,
  SystemOverrides,
  P2pLevel,
  CpuVendor,
} from './topology/spec';
// Numeric reduction: dtype emulation and AllReduce in each algorithm's order of operations.
export { FORMATS, roundToDtype, encodeDtype, decodeDtype, overflowsDtype } from './numeric/formats';
export type { FloatFormat, OverflowMode } from './numeric/formats';
export { reduceNumerically, errorBound } from './numeric/reduce';
export type { NumericReductionResult, OverflowReport } from './numeric/reduce';
export { sequentialReference } from './numeric/reference';
export { NumericOptionError } from './numeric/plan';
export type { NumericReductionOptions } from './numeric/plan';
export { runScalingCheck, SCALING_REDUCE_OPS } from './scaling-check';
export type { ScalingCheckOptions, ScalingCheckResult, ScalingReduceOp, ScalingLrRule } from './scaling-check';
export { confirmFinding, CONFIRMABLE_CODES } from './scaling/confirm';
export type { FindingConfirmation } from './scaling/confirm';
export { EngineError } from './errors';
export { GPU_CATALOGUE, GPU_NAMES, findGpu, type GpuSpec } from './hardware/gpus';
export { PRESETS, presetSystem } from './topology/presets';
export { hostWorkSlotUs, launchPerProcessUs, resolveSystem } from './topology/resolve';
export { ncclTuner, isNcclVersion, withNcclVersion, DEFAULT_TUNER, type NcclTuner } from './nccl-versions';
export { nearTiedChoices, type NearChoice } from './near-choices';
export type { System, Topology, Vertex, Link, VertexKind, LinkKind } from './topology/model';
export {
  simulateCollective,
  sweepAllReduce,
  sweepCollective,
  hostUs,
  type SimulateOptions,
  type SweepOptions,
} from './simulate';
export { traceToChromeJson, type ChromeTrace } from './trace/chrome';
export { LAUNCH_SPAN_NAME, PACING_SPAN_NAME, drawnCollectiveTrace } from './trace/drawn';
export { MAX_TRACE_SPANS } from './constants';
// Each channel's ring or tree on the topology, from the same builders the simulator runs (the topology panel's overlay).
export { channelPaths, channelPlan, type ChannelPath, type ChannelPlan } from './channel-paths';
// The training-step model: buckets, the step schedule, its trace, what-ifs and sweeps.
export * from './training/index';
export {
  compareDataset,
  measuredRows,
  forcedAlgorithm,
  LARGE_BOUND_PCT,
  SMALL_BOUND_PCT,
  LARGE_MESSAGE_BYTES,
  type DatasetComparison,
  type ComparedRow,
} from './calibration';
export { systemFromDescription, gpusPerProcessFromDataset } from './calibration-system';
export { gpuFromDescription } from './hardware/gpu-description';
export { LazyDrawnTrace, type TraceItem } from './trace/lazy';
export {
  FULL_TRACE_MAX_RANKS,
  TRACE_DETAILS,
  nodeGroups,
  resolvedTraceDetail,
  standsFor,
  summarisedCollectiveTrace,
  type NodeGroup,
  type TraceDetail,
} from './trace/summary';
export type { RecordedSpans } from './trace/simulated-index';
export { chromeTraceChunks } from './trace/chrome-stream';

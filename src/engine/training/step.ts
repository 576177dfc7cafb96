// The training-step model: forward, backward and optimizer on the compute stream; every gradient and parameter
// collective on one communication stream, in the order the wrapper issues them. A collective starts when its
// inputs are ready and the stream is free; compute waits only where it needs a collective's output (gathered
// parameters before a layer, reduced gradients before the optimizer). All ranks run the same schedule, so one
// rank's timeline stands for all of them.
import {
  DTYPE_BYTES,
  type CollectiveKind,
  type Dtype,
  type PhaseTimes,
  type Algorithm,
  type Protocol,
} from '../collective-types';
import { type Bytes, type Micros, asMicros, asBytes } from '../units';
import { resolveSystem } from '../topology/resolve';
import type { System } from '../topology/model';
import { assignBuckets, chunkSizes, DDP_FIRST_BUCKET_BYTES, flattenModel, type FlatModel } from './buckets';
import { CollectiveCoster, type CollectivePricer } from './collective-cost';
import type { TrainingRun } from './types';

/** Adam in mixed precision reads and writes fp32 master weights, both moments and the gradient: ~32 bytes a parameter. */
export const ADAM_HBM_BYTES_PER_PARAM = 32;
/** Backward costs about twice the forward (one matmul for the input gradient, one for the weight gradient). */
export const BACKWARD_TO_FORWARD_FLOPS = 2;

export interface StepCollective {
  readonly index: number;
  readonly kind: CollectiveKind;
  readonly purpose: 'gradients' | 'parameters';
  readonly label: string;
  readonly bytes: Bytes;
  readonly microStep: number;
  readonly readyUs: Micros;
  readonly startUs: Micros;
  readonly endUs: Micros;
  readonly algorithm: Algorithm;
  readonly protocol: Protocol;
  readonly phases: PhaseTimes;
}

export interface ComputeSpan {
  readonly kind: 'forward' | 'backward' | 'optimizer';
  readonly label: string;
  readonly microStep: number;
  readonly startUs: Micros;
  readonly endUs: Micros;
}

export interface StepResult {
  readonly parameters: number;
  readonly gradientBytes: Bytes;
  readonly worldSize: number;
  readonly systemLabel: string;
  readonly microSteps: number;
  readonly stepTimeUs: Micros;
  /** Forward + backward over every micro-step, plus the optimizer. */
  readonly computeUs: Micros;
  readonly forwardUs: Micros;
  readonly backwardUs: Micros;
  readonly optimizerUs: Micros;
  /** Sum of every collective's duration. */
  readonly commUs: Micros;
  /** Time the compute stream waited on collectives: step time minus compute time. */
  readonly exposedCommUs: Micros;
  /** Share of communication hidden behind compute, 0–100 (100 when there is none to hide). */
  readonly overlapPct: number;
  /** The same per-GPU batch on one GPU: no collectives, and the whole optimizer step unsharded. */
  readonly singleGpuStepUs: Micros;
  /**
   * computeUs / stepTimeUs: each GPU's throughput relative to one GPU running the same per-GPU work without
   * communication (weak scaling). Sharding the optimizer can make N GPUs beat singleGpuStepUs; this ratio counts
   * only what communication costs, so it never exceeds 1.
   */
  readonly scalingEfficiency: number;
  readonly gradientBuckets: number;
  readonly collectives: readonly StepCollective[];
  readonly compute: readonly ComputeSpan[];
  /** Distinct collectives the simulator priced (the rest came from its cache). */
  readonly simulations: number;
}

function peakTflops(system: System, dtype: Dtype): number {
  const gpu = system.gpu;
  if (dtype === 'fp32') return gpu.fp32Tflops;
  if (dtype === 'fp16') return gpu.fp16Tflops;
  // fp8 training is not modelled: its matmuls are priced at the bf16 rate.
  return gpu.bf16Tflops;
}

export interface StepOptions {
  /** The resolved system, when the caller already has it. */
  readonly system?: System;
  /** The flattened model, reused across a sweep (it must match the run's sequence length). */
  readonly flat?: FlatModel;
  /** Prices collectives; defaults to the simulator. */
  readonly price?: CollectivePricer;
  /** A coster to reuse (and share its cache) across steps on the same system with the same collective options. */
  readonly coster?: CollectiveCoster;
}

export function simulateTrainingStep(run: TrainingRun, options: StepOptions = {}): StepResult {
  const t = run.training;
  const system = options.system ?? resolveSystem(run.system);
  const flat = options.flat ?? flattenModel(run.model, t.sequenceLength);
  const ranks = system.ranks;
  const sharded = t.wrapper === 'fsdp' || t.wrapper === 'zero3';
  const zeroOptimizer = t.wrapper !== 'ddp' && t.wrapper !== 'horovod';
  const gradBytesPerParam = DTYPE_BYTES[t.gradDtype];
  const paramBytesPerParam = DTYPE_BYTES[t.computeDtype];
  const tokens = t.microBatchSize * t.sequenceLength;
  const flopsPerUs = peakTflops(system, t.computeDtype) * 1e6 * t.computeEfficiency;
  if (!(flopsPerUs > 0))
    throw new RangeError('the GPU has no throughput for this dtype, or the efficiency is not positive');
  const layerCount = flat.layerStart.length - 1;

  const coster =
    options.coster ??
    new CollectiveCoster(system, { algorithm: t.algorithm, protocol: t.protocol, op: t.reduceOp }, options.price);
  const simulationsBefore = coster.simulations;
  const collectives: StepCollective[] = [];
  const compute: ComputeSpan[] = [];
  let commFree = 0;
  const issue = (
    kind: CollectiveKind,
    purpose: StepCollective['purpose'],
    label: string,
    bytes: Bytes,
    dtype: Dtype,
    readyUs: Micros,
    microStep: number,
  ): Micros => {
    const cost = coster.cost(kind, bytes, dtype);
    const startUs = asMicros(Math.max(commFree, readyUs));
    const endUs = asMicros(startUs + cost.timeUs);
    commFree = endUs;
    collectives.push({
      index: collectives.length,
      kind,
      purpose,
      label,
      bytes,
      microStep,
      readyUs,
      startUs,
      endUs,
      algorithm: cost.algorithm,
      protocol: cost.protocol,
      phases: cost.phases,
    });
    return endUs;
  };

  const layerParams = new Float64Array(layerCount);
  const layerForwardUs = new Float64Array(layerCount);
  for (let l = 0; l < layerCount; l++) {
    for (let i = flat.layerStart[l]; i < flat.layerStart[l + 1]; i++) {
      layerParams[l] += flat.params[i];
      layerForwardUs[l] += (flat.forwardFlopsPerToken[i] * tokens) / flopsPerUs;
    }
  }
  const firstBucket = t.wrapper === 'ddp' && t.firstBucketBytes > 0 ? t.firstBucketBytes : asBytes(0);
  const buckets = sharded ? [] : assignBuckets(flat, gradBytesPerParam, t.bucketBytes, firstBucket);
  const gradKind: CollectiveKind = zeroOptimizer ? 'reducescatter' : 'allreduce';
  // DeepSpeed ZeRO-2/3 keep only their gradient shard, so they reduce after every micro-step; DDP, ZeRO-1 and
  // FSDP under no_sync accumulate locally and reduce once, on the last micro-step.
  const reduceEveryMicroStep = t.wrapper === 'zero2' || t.wrapper === 'zero3';
  const gatherLayer = (l: number, readyUs: Micros, m: number, pass: string): Micros =>
    issue(
      'allgather',
      'parameters',
      `${pass} gather ${flat.layerNames[l]}`,
      asBytes(layerParams[l] * paramBytesPerParam),
      t.computeDtype,
      readyUs,
      m,
    );

  let now = 0;
  let forwardUs = 0;
  let backwardUs = 0;
  const tensorReadyUs = new Float64Array(flat.params.length);
  for (let m = 0; m < t.gradAccumulationSteps; m++) {
    const sync = reduceEveryMicroStep || m === t.gradAccumulationSteps - 1;
    // Forward. Sharded wrappers gather each layer's parameters first, prefetching one layer ahead.
    let gathered = sharded ? gatherLayer(0, asMicros(now), m, 'forward') : 0;
    for (let l = 0; l < layerCount; l++) {
      const start = asMicros(Math.max(now, gathered));
      if (sharded && l + 1 < layerCount) gathered = gatherLayer(l + 1, start, m, 'forward');
      now = start + layerForwardUs[l];
      forwardUs += layerForwardUs[l];
      compute.push({
        kind: 'forward',
        label: `forward ${flat.layerNames[l]}`,
        microStep: m,
        startUs: start,
        endUs: asMicros(now),
      });
    }
    // Backward, last layer first; DDP-style buckets go out as soon as their last gradient is written.
    let nextBucket = 0;
    gathered = sharded ? gatherLayer(layerCount - 1, asMicros(now), m, 'backward') : 0;
    for (let l = layerCount - 1; l >= 0; l--) {
      const start = asMicros(Math.max(now, gathered));
      if (sharded && l > 0) gathered = gatherLayer(l - 1, start, m, 'backward');
      now = start;
      for (let i = flat.layerStart[l + 1] - 1; i >= flat.layerStart[l]; i--) {
        now += (BACKWARD_TO_FORWARD_FLOPS * flat.forwardFlopsPerToken[i] * tokens) / flopsPerUs;
        tensorReadyUs[i] = now;
      }
      backwardUs += now - start;
      compute.push({
        kind: 'backward',
        label: `backward ${flat.layerNames[l]}`,
        microStep: m,
        startUs: start,
        endUs: asMicros(now),
      });
      if (!sync) continue;
      if (sharded) {
        issue(
          'reducescatter',
          'gradients',
          `reduce-scatter ${flat.layerNames[l]}`,
          asBytes(layerParams[l] * gradBytesPerParam),
          t.gradDtype,
          asMicros(now),
          m,
        );
      } else if (t.overlapComm) {
        while (nextBucket < buckets.length && buckets[nextBucket].lastTensor >= flat.layerStart[l]) {
          const b = buckets[nextBucket++];
          issue(
            gradKind,
            'gradients',
            `bucket ${b.index}`,
            b.bytes,
            t.gradDtype,
            asMicros(tensorReadyUs[b.lastTensor]),
            m,
          );
        }
      }
    }
    if (sync && !sharded && !t.overlapComm) {
      for (const b of buckets)
        issue(gradKind, 'gradients', `bucket ${b.index}`, b.bytes, t.gradDtype, asMicros(now), m);
    }
  }

  // The optimizer needs every reduced gradient; ZeRO and FSDP update only this rank's shard.
  now = Math.max(now, commFree);
  const fullOptimizerUs = (flat.totalParams * ADAM_HBM_BYTES_PER_PARAM) / (system.gpu.hbmGBps * 1e3);
  const optimizerUs = asMicros(zeroOptimizer ? fullOptimizerUs / ranks : fullOptimizerUs);
  compute.push({
    kind: 'optimizer',
    label: 'optimizer step',
    microStep: t.gradAccumulationSteps - 1,
    startUs: asMicros(now),
    endUs: asMicros(now + optimizerUs),
  });
  now += optimizerUs;
  if (t.wrapper === 'zero1' || t.wrapper === 'zero2') {
    // ZeRO-1/2 keep full parameters, so every rank gathers the updated shards before the next forward.
    const pieceBytes = asBytes(t.allgatherBucketBytes ?? flat.totalParams * paramBytesPerParam);
    chunkSizes(asBytes(flat.totalParams * paramBytesPerParam), pieceBytes).forEach((bytes, i) => {
      issue(
        'allgather',
        'parameters',
        `gather updated parameters ${i}`,
        bytes,
        t.computeDtype,
        asMicros(now),
        t.gradAccumulationSteps - 1,
      );
    });
    now = Math.max(now, commFree);
  }

  const stepTimeUs = asMicros(now);
  const computeUs = asMicros(forwardUs + backwardUs + optimizerUs);
  const commUs = asMicros(collectives.reduce((sum, c) => sum + (c.endUs - c.startUs), 0));
  const exposedCommUs = asMicros(Math.max(0, stepTimeUs - computeUs));
  const singleGpuStepUs = asMicros(forwardUs + backwardUs + fullOptimizerUs);
  return {
    parameters: flat.totalParams,
    gradientBytes: asBytes(flat.totalParams * gradBytesPerParam),
    worldSize: ranks,
    systemLabel: system.label,
    microSteps: t.gradAccumulationSteps,
    stepTimeUs,
    computeUs,
    forwardUs: asMicros(forwardUs),
    backwardUs: asMicros(backwardUs),
    optimizerUs,
    commUs,
    exposedCommUs,
    overlapPct: commUs > 0 ? Math.min(100, Math.max(0, 100 * (1 - exposedCommUs / commUs))) : 100,
    singleGpuStepUs,
    scalingEfficiency: stepTimeUs > 0 ? Math.min(1, computeUs / stepTimeUs) : 1,
    gradientBuckets: buckets.length,
    collectives,
    compute,
    simulations: coster.simulations - simulationsBefore,
  };
}

/** The first-bucket rule applies to DDP only; other wrappers fill every bucket to the cap. */
export function defaultFirstBucketBytes(wrapper: TrainingRun['training']['wrapper']): Bytes {
  return wrapper === 'ddp' ? DDP_FIRST_BUCKET_BYTES : asBytes(0);
}

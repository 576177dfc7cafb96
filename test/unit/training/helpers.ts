// Shared fixtures for the training-step tests: small models, runs, and a closed-form collective price (a ring
// at a fixed bus bandwidth) so property tests can run hundreds of steps without the full simulator.
import type { CollectivePricer } from '../../../src/engine/training/collective-cost';
import type { LayerSpec, ModelSpec, TrainingRun, TrainingSpec } from '../../../src/engine/training/types';
import { DDP_DEFAULT_BUCKET_BYTES, DDP_FIRST_BUCKET_BYTES } from '../../../src/engine/training/buckets';
import { asMicros } from '../../../src/engine/index';

/** Ring time at 40 GB/s bus bandwidth across nodes and 300 GB/s inside one, plus 15 µs of latency. */
export const ringPrice: CollectivePricer = (system, kind, bytes) => {
  const n = system.ranks;
  const busGBps = system.nodes > 1 ? 40 : 300;
  const factor = kind === 'allreduce' ? (2 * (n - 1)) / n : (n - 1) / n;
  const timeUs = asMicros(15 + (factor * bytes) / (busGBps * 1e3));
  return {
    timeUs,
    algorithm: 'ring',
    protocol: 'Simple',
    phases: {
      exchange: asMicros(timeUs / 2),
      reduce: asMicros(kind === 'allgather' ? 0 : timeUs / 4),
      broadcast: asMicros(kind === 'reducescatter' ? 0 : timeUs / 4),
    },
  };
};

/** A transformer-like model: `layers` blocks of the given width, each with attention and MLP weights. */
export function toyModel(layers: number, hidden: number, vocab = 32000): ModelSpec {
  const list: LayerSpec[] = [
    { name: 'embed', tensors: [{ name: 'embed', params: vocab * hidden, forwardFlopsPerToken: 0 }] },
  ];
  for (let i = 0; i < layers; i++) {
    list.push({
      name: `layers.${i}`,
      tensors: [
        { name: 'norm', params: hidden, forwardFlopsPerToken: 0 },
        { name: 'qkv', params: 3 * hidden * hidden, forwardFlopsPerToken: 6 * hidden * hidden },
        { name: 'scores', params: 0, forwardFlopsPerToken: 0, forwardFlopsPerTokenPerSequenceToken: 4 * hidden },
        { name: 'o', params: hidden * hidden, forwardFlopsPerToken: 2 * hidden * hidden },
        { name: 'mlp.up', params: 4 * hidden * hidden, forwardFlopsPerToken: 8 * hidden * hidden },
        { name: 'mlp.down', params: 4 * hidden * hidden, forwardFlopsPerToken: 8 * hidden * hidden },
      ],
    });
  }
  list.push({
    name: 'head',
    tensors: [{ name: 'lm_head', params: vocab * hidden, forwardFlopsPerToken: 2 * vocab * hidden }],
  });
  return { name: `toy ${layers}×${hidden}`, family: 'generic', layers: list, maxSequenceLength: 2048 };
}

export function toyRun(
  training: Partial<TrainingSpec> = {},
  system: Partial<{ nodes: number; gpusPerNode: number; gpu: string }> = {},
  model = toyModel(8, 1024),
): TrainingRun {
  return {
    sources: [{ format: 'test', file: 'test' }],
    model,
    training: {
      microBatchSize: 2,
      gradAccumulationSteps: 1,
      sequenceLength: 2048,
      gradDtype: 'bf16',
      computeDtype: 'bf16',
      bucketBytes: DDP_DEFAULT_BUCKET_BYTES,
      firstBucketBytes: DDP_FIRST_BUCKET_BYTES,
      wrapper: 'ddp',
      overlapComm: true,
      reduceOp: 'avg',
      lrRule: 'constant',
      computeEfficiency: 0.45,
      algorithm: 'auto',
      protocol: 'auto',
      ...training,
    },
    system: {
      gpu: system.gpu ?? 'H100-SXM',
      nodes: system.nodes ?? 2,
      gpusPerNode: system.gpusPerNode ?? 8,
      intraNode: 'nvswitch',
      nic: { gbps: 400, perNode: 8 },
    },
    engine: 'simulated',
    assumed: [],
    notes: [],
  };
}

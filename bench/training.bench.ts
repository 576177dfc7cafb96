// The training-step profile: how long `profile` takes to model one step, from the parsed config to the trace.
// The headline case is issue 8's: a 70 B-parameter model with 25 MB buckets on 1,024 GPUs. Issue 17 adds a
// 405 B-parameter model (Llama 3.1 405B's layers, width and vocabulary) on 16,384 GPUs, with DDP and with FSDP.
import { performance } from 'node:perf_hooks';
import { readTrainingConfig } from '../src/config/training-config';
import { assembleTrainingRun } from '../src/config/training-run';
import { simulateTrainingStep, stepTrace, type StepResult } from '../src/engine/index';
import type { Benchmark } from './types';

const last: Record<string, StepResult> = {};

/** The model block of a preset model, or of the 405 B model given by its dimensions (there is no preset). */
function modelBlock(model: string): string[] {
  if (model !== '405b') return ['model:', `  preset: ${model}`];
  return ['model:', '  parameters: 405000000000', '  layers: 126', '  hidden_size: 16384', '  vocab_size: 128256'];
}

/** A run of a model on `nodes` DGX H100s under `wrapper` (ddp, fsdp...), written as a user would write it. */
function collectiveFile(model: string, nodes: number, wrapper = 'ddp'): string {
  return [
    ...modelBlock(model),
    'training:',
    '  micro_batch_size: 1',
    '  sequence_length: 4096',
    '  bucket_cap_mb: 25',
    `  wrapper: ${wrapper}`,
    'system:',
    '  preset: dgx-h100',
    `  nodes: ${nodes}`,
  ].join('\n');
}

function profileOnce(key: string, model: string, nodes: number, wrapper = 'ddp'): number {
  const started = performance.now();
  const file = collectiveFile(model, nodes, wrapper);
  const run = assembleTrainingRun([readTrainingConfig(file, `${key}.collective.yaml`).part]);
  const step = simulateTrainingStep(run);
  stepTrace(step, { gpusPerNode: run.system.gpusPerNode });
  last[key] = step;
  return performance.now() - started;
}

function facts(key: string): Record<string, unknown> {
  const step = last[key];
  if (!step) return {};
  return {
    parameters: step.parameters,
    worldSize: step.worldSize,
    collectives: step.collectives.length,
    simulations: step.simulations,
    stepTimeMs: Math.round(step.stepTimeUs) / 1000,
    exposedCommMs: Math.round(step.exposedCommUs) / 1000,
    overlapPct: Math.round(step.overlapPct * 10) / 10,
  };
}

export const benchmarks: Benchmark[] = [
  {
    name: 'training: 70 B step profile, 25 MB buckets, 1,024 GPUs',
    unit: 'ms',
    target: 2000,
    runs: 3,
    measure: () => profileOnce('llama-2-70b-1024', 'llama-2-70b', 128),
    extra: () => facts('llama-2-70b-1024'),
  },
  {
    name: 'training: 7 B step profile, 25 MB buckets, 32 GPUs',
    unit: 'ms',
    target: 1000,
    quick: true,
    runs: 3,
    measure: () => profileOnce('llama-2-7b-32', 'llama-2-7b', 4),
    extra: () => facts('llama-2-7b-32'),
  },
  {
    name: 'training: 405 B step profile, DDP, 25 MB buckets, 16,384 GPUs',
    unit: 'ms',
    target: 2000,
    runs: 3,
    measure: () => profileOnce('405b-ddp-16384', '405b', 2048, 'ddp'),
    extra: () => facts('405b-ddp-16384'),
  },
  {
    name: 'training: 405 B step profile, FSDP, 16,384 GPUs',
    unit: 'ms',
    target: 2000,
    runs: 3,
    measure: () => profileOnce('405b-fsdp-16384', '405b', 2048, 'fsdp'),
    extra: () => facts('405b-fsdp-16384'),
  },
];

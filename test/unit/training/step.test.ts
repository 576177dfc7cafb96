// The training-step model: its invariants (as properties over random runs), gradient accumulation, dtypes,
// the collectives each wrapper issues, overlap, and the step trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { simulateTrainingStep } from '../../../src/engine/training/step';
import { stepTrace } from '../../../src/engine/training/step-trace';
import { traceToChromeJson, asBytes } from '../../../src/engine/index';
import type { Wrapper } from '../../../src/engine/training/types';
import { ringPrice, toyModel, toyRun } from './helpers';

const EPSILON_US = 1e-6;
const WRAPPERS: readonly Wrapper[] = ['ddp', 'fsdp', 'zero1', 'zero2', 'zero3', 'horovod'];

test('property: step ≥ max(compute, exposed communication) and ≤ compute + all communication', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...WRAPPERS),
      fc.integer({ min: 1, max: 4 }),
      fc.double({ min: 0.5, max: 512, noNaN: true }),
      fc.integer({ min: 1, max: 8 }),
      fc.integer({ min: 1, max: 8 }),
      fc.boolean(),
      fc.constantFrom('bf16' as const, 'fp32' as const),
      (wrapper, accumulation, bucketMb, nodes, micro, overlapComm, gradDtype) => {
        const run = toyRun(
          {
            wrapper,
            gradAccumulationSteps: accumulation,
            bucketBytes: asBytes(bucketMb * 2 ** 20),
            microBatchSize: micro,
            overlapComm,
            gradDtype,
          },
          { nodes },
          toyModel(4, 512),
        );
        const step = simulateTrainingStep(run, { price: ringPrice });
        assert.ok(
          step.stepTimeUs + EPSILON_US >= Math.max(step.computeUs, step.exposedCommUs),
          'step ≥ max(compute, exposed)',
        );
        assert.ok(
          step.stepTimeUs <= step.computeUs + step.commUs + EPSILON_US,
          `step ${step.stepTimeUs} ≤ compute ${step.computeUs} + comm ${step.commUs}`,
        );
        assert.ok(step.overlapPct >= 0 && step.overlapPct <= 100);
        assert.ok(step.scalingEfficiency > 0 && step.scalingEfficiency <= 1);
        for (const c of step.collectives) assert.ok(c.startUs + EPSILON_US >= c.readyUs && c.endUs >= c.startUs);
        // One communication stream: collectives never overlap each other.
        for (let i = 1; i < step.collectives.length; i++)
          assert.ok(step.collectives[i].startUs + EPSILON_US >= step.collectives[i - 1].endUs);
      },
    ),
    { numRuns: 150 },
  );
});

test('property: a larger bucket never increases the number of collectives', () => {
  fc.assert(
    fc.property(
      fc.constantFrom<Wrapper>('ddp', 'zero1', 'zero2', 'horovod'),
      fc.double({ min: 0.25, max: 256, noNaN: true }),
      fc.double({ min: 1, max: 16, noNaN: true }),
      (wrapper, mb, growth) => {
        const count = (capMb: number) =>
          simulateTrainingStep(toyRun({ wrapper, bucketBytes: asBytes(capMb * 2 ** 20) }, {}, toyModel(6, 768)), {
            price: ringPrice,
          }).collectives.length;
        return count(mb * growth) <= count(mb);
      },
    ),
    { numRuns: 100 },
  );
});

test('gradient accumulation: DDP and ZeRO-1 reduce once per step, ZeRO-2 after every micro-step', () => {
  const single = simulateTrainingStep(toyRun({ gradAccumulationSteps: 1 }), { price: ringPrice });
  const ddp = simulateTrainingStep(toyRun({ gradAccumulationSteps: 4 }), { price: ringPrice });
  assert.equal(ddp.collectives.length, single.collectives.length);
  assert.ok(ddp.collectives.every((c) => c.microStep === 3));
  assert.ok(Math.abs(ddp.computeUs - (4 * (single.computeUs - single.optimizerUs) + single.optimizerUs)) < 1);
  const zero1 = simulateTrainingStep(toyRun({ wrapper: 'zero1', gradAccumulationSteps: 4 }), { price: ringPrice });
  const zero2 = simulateTrainingStep(toyRun({ wrapper: 'zero2', gradAccumulationSteps: 4 }), { price: ringPrice });
  const reductions = (s: typeof zero1) => s.collectives.filter((c) => c.purpose === 'gradients').length;
  assert.equal(reductions(zero2), 4 * reductions(zero1));
  // FSDP gathers parameters every micro-step but, under no_sync, reduce-scatters gradients once.
  const fsdp = simulateTrainingStep(toyRun({ wrapper: 'fsdp', gradAccumulationSteps: 3 }), { price: ringPrice });
  const layers = toyRun().model.layers.length;
  assert.equal(fsdp.collectives.filter((c) => c.kind === 'reducescatter').length, layers);
  assert.equal(fsdp.collectives.filter((c) => c.kind === 'allgather').length, 3 * 2 * layers);
});

test('the gradient dtype sets the bytes: fp32 doubles every bucket of bf16', () => {
  const bf16 = simulateTrainingStep(
    toyRun({ gradDtype: 'bf16', firstBucketBytes: asBytes(0), bucketBytes: asBytes(1e12) }),
    {
      price: ringPrice,
    },
  );
  const fp32 = simulateTrainingStep(
    toyRun({ gradDtype: 'fp32', firstBucketBytes: asBytes(0), bucketBytes: asBytes(1e12) }),
    {
      price: ringPrice,
    },
  );
  assert.equal(fp32.gradientBytes, 2 * bf16.gradientBytes);
  assert.equal(bf16.gradientBytes, bf16.parameters * 2);
  assert.equal(
    fp32.collectives.reduce((s, c) => s + c.bytes, 0),
    fp32.parameters * 4,
  );
});

test('each wrapper issues the collectives it really runs', () => {
  const kinds = (wrapper: Wrapper) =>
    new Set(
      simulateTrainingStep(toyRun({ wrapper }), { price: ringPrice }).collectives.map((c) => `${c.kind}:${c.purpose}`),
    );
  assert.deepEqual(kinds('ddp'), new Set(['allreduce:gradients']));
  assert.deepEqual(kinds('horovod'), new Set(['allreduce:gradients']));
  assert.deepEqual(kinds('zero1'), new Set(['reducescatter:gradients', 'allgather:parameters']));
  assert.deepEqual(kinds('zero2'), new Set(['reducescatter:gradients', 'allgather:parameters']));
  assert.deepEqual(kinds('zero3'), new Set(['reducescatter:gradients', 'allgather:parameters']));
  assert.deepEqual(kinds('fsdp'), new Set(['reducescatter:gradients', 'allgather:parameters']));
});

test('overlap: DDP starts its first bucket during backward; without overlap every bucket waits for backward', () => {
  const overlapped = simulateTrainingStep(toyRun({ overlapComm: true }), { price: ringPrice });
  const backwardEnd = Math.max(...overlapped.compute.filter((c) => c.kind === 'backward').map((c) => c.endUs));
  assert.ok(overlapped.collectives[0].startUs < backwardEnd);
  assert.ok(
    overlapped.collectives[0].bytes < overlapped.collectives[1].bytes || overlapped.collectives[0].bytes >= 2 ** 20,
  );
  const serial = simulateTrainingStep(toyRun({ overlapComm: false }), { price: ringPrice });
  assert.ok(serial.collectives.every((c) => c.startUs >= backwardEnd - EPSILON_US));
  assert.ok(serial.exposedCommUs > overlapped.exposedCommUs);
  assert.ok(Math.abs(serial.exposedCommUs - serial.commUs) < 1, 'with no overlap all communication is exposed');
});

test('one GPU: no collectives, no exposed time, full efficiency', () => {
  const step = simulateTrainingStep(toyRun({}, { nodes: 1, gpusPerNode: 1 }), { price: ringPrice });
  assert.equal(step.commUs, 0);
  assert.equal(step.exposedCommUs, 0);
  assert.equal(step.scalingEfficiency, 1);
  assert.equal(step.stepTimeUs, step.singleGpuStepUs);
});

test('compute follows FLOPs: backward is twice forward, and halving efficiency doubles compute', () => {
  const full = simulateTrainingStep(toyRun({ computeEfficiency: 0.5 }), { price: ringPrice });
  const half = simulateTrainingStep(toyRun({ computeEfficiency: 0.25 }), { price: ringPrice });
  assert.ok(Math.abs(full.backwardUs - 2 * full.forwardUs) < 1e-6 * full.backwardUs);
  assert.ok(Math.abs(half.forwardUs - 2 * full.forwardUs) < 1e-6 * half.forwardUs);
});

test('with the real simulator: a 2-node DDP step prices every bucket and stays within the bounds', () => {
  const step = simulateTrainingStep(toyRun({}, { nodes: 2 }, toyModel(4, 1024)));
  assert.ok(step.collectives.length > 3);
  assert.ok(step.simulations > 0);
  assert.ok(step.commUs > 0 && step.stepTimeUs >= step.computeUs);
  assert.ok(step.stepTimeUs <= step.computeUs + step.commUs + EPSILON_US);
  for (const c of step.collectives)
    assert.ok(['ring', 'tree', 'nvls', 'nvlstree', 'hierarchical', 'direct'].includes(c.algorithm));
});

test('the step trace: compute and communication lanes per rank, one span per collective with nested phases', () => {
  const step = simulateTrainingStep(toyRun({}, { nodes: 2 }), { price: ringPrice });
  const trace = stepTrace(step, { ranks: 4, gpusPerNode: 8 });
  // Compute, gradient buckets and communication per rank.
  assert.equal(trace.lanes.length, 12);
  const collectiveSpans = trace.spans.filter((s) => s.phase === 'collective');
  assert.equal(collectiveSpans.length, 4 * step.collectives.length);
  for (const rank of [0, 3]) {
    const mine = trace.spans.filter((s) => s.rank === rank);
    for (const parent of mine.filter((s) => s.phase === 'collective')) {
      const phases = mine.filter(
        (s) =>
          s.chunk === parent.chunk && s.lane === parent.lane && ['exchange', 'reduce', 'broadcast'].includes(s.phase),
      );
      assert.ok(phases.length >= 2, 'phases per collective');
      for (const p of phases)
        assert.ok(p.startUs >= parent.startUs - EPSILON_US && p.endUs <= parent.endUs + EPSILON_US);
    }
  }
  assert.ok(trace.spans.some((s) => s.phase === 'optimizer'));
  assert.match(String(trace.metadata.facts?.['ranks shown']), /4 of 16/);
  const chrome = JSON.parse(JSON.stringify(traceToChromeJson(trace)));
  assert.ok(Array.isArray(chrome.traceEvents) && chrome.traceEvents.length >= trace.spans.length);
});

test('the step trace nests step > backward > layer, and a flow leads from each bucket to its collective', () => {
  for (const run of [toyRun({}, { nodes: 2 }), toyRun({ gradAccumulationSteps: 2 }, { nodes: 1 })]) {
    const step = simulateTrainingStep(run, { price: ringPrice });
    const trace = stepTrace(step, { ranks: 2, gpusPerNode: 8 });
    const inside = (inner: { startUs: number; endUs: number }, outer: { startUs: number; endUs: number }): boolean =>
      inner.startUs >= outer.startUs - EPSILON_US && inner.endUs <= outer.endUs + EPSILON_US;
    for (const rank of [0, 1]) {
      const mine = trace.spans.filter((s) => s.rank === rank);
      const stepSpan = mine.find((s) => s.name === 'step');
      assert.ok(stepSpan, 'a step span per rank');
      assert.ok(Math.abs(stepSpan.endUs - step.stepTimeUs) < EPSILON_US, 'the step span ends at the step time');
      for (const s of mine) assert.ok(inside(s, stepSpan), `${s.name} lies inside the step`);
      // Every layer's backward lies inside its micro-step's backward pass.
      const passes = mine.filter((s) => /^backward( · micro-step \d+)?$/.test(s.name ?? ''));
      assert.equal(passes.length, step.microSteps);
      for (const layer of mine.filter((s) => /^backward [^·]+$/.test(s.name ?? '')))
        assert.ok(
          passes.some((p) => inside(layer, p)),
          `${layer.name} inside a backward pass`,
        );
      // Buckets: inside a backward pass, in order, each ending when its collective became ready.
      const buckets = mine.filter((s) => /^backward · bucket \d+$/.test(s.name ?? ''));
      const bucketCollectives = step.collectives.filter((c) => c.label.startsWith('bucket '));
      assert.equal(buckets.length, bucketCollectives.length);
      assert.ok(buckets.length > 0);
      for (const b of buckets)
        assert.ok(
          passes.some((p) => inside(b, p)),
          `${b.name} inside a backward pass`,
        );
    }
    // One flow per bucket and rank, from the bucket's span to its collective's, which starts after the bucket ends.
    const flows = trace.flows ?? [];
    const bucketCount = step.collectives.filter((c) => c.label.startsWith('bucket ')).length;
    assert.equal(flows.length, 2 * bucketCount);
    for (const f of flows) {
      const from = trace.spans[f.fromSpan];
      const to = trace.spans[f.toSpan];
      assert.equal(to.phase, 'collective');
      assert.equal(from.rank, to.rank);
      assert.equal(from.chunk, to.chunk, 'the bucket and its collective name the same collective');
      assert.ok(from.endUs <= to.startUs + EPSILON_US, 'the collective starts after its bucket is written');
      assert.match(to.name ?? '', new RegExp(`${(from.name ?? '').replace('backward · ', '')} `));
    }
  }
});

// What-ifs and sweeps: knob parsing, the bucket-size recommendation and where it may sit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyWhatIf, parseSweep, parseAssignment } from '../../../src/engine/training/what-if';
import { bestIndex, sweepTraining, TIE_TOLERANCE } from '../../../src/engine/training/sweep';
import { EngineError } from '../../../src/engine/index';
import { ringPrice, toyModel, toyRun } from './helpers';

test('sweep ranges are powers of two from lo to hi, hi included', () => {
  assert.deepEqual(parseSweep('bucket_cap_mb=1..1024').values, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]);
  assert.deepEqual(parseSweep('nodes=1..128').values, [1, 2, 4, 8, 16, 32, 64, 128]);
  assert.deepEqual(parseSweep('nodes=3..20').values, [3, 6, 12, 20]);
  assert.deepEqual(parseSweep('bucket=50,10,25').values, [10, 25, 50]);
  assert.throws(() => parseSweep('dtype=1..2'), EngineError);
  assert.throws(() => parseSweep('nodes=8..2'), /ends before it starts/);
  assert.throws(() => parseSweep('nodes=1.5..4'), /positive integer/);
});

test('what-ifs change one knob and reject unknown keys and bad values by name', () => {
  const run = toyRun();
  assert.equal(applyWhatIf(run, 'bucket_cap_mb', '50').training.bucketBytes, 50 * 2 ** 20);
  assert.equal(applyWhatIf(run, 'nodes', '16').system.nodes, 16);
  assert.equal(applyWhatIf(run, 'dtype', 'fp32').training.gradDtype, 'fp32');
  assert.equal(applyWhatIf(run, 'algo', 'ring').training.algorithm, 'ring');
  assert.equal(applyWhatIf(run, 'system', 'dgx-a100').system.gpu, 'A100-SXM');
  assert.equal(applyWhatIf(run, 'system', 'dgx-a100').system.nodes, run.system.nodes);
  assert.throws(() => applyWhatIf(run, 'bucket_cap_mb', '-5'), /bucket_cap_mb=-5: expected a positive number/);
  assert.throws(() => applyWhatIf(run, 'wrapper', 'zero4'), /expected one of ddp, fsdp/);
  assert.throws(() => applyWhatIf(run, 'colour', 'red'), /unknown what-if key 'colour'/);
  assert.deepEqual(parseAssignment('nodes=4'), { key: 'nodes', value: '4' });
  assert.throws(() => parseAssignment('nodes'), /expected key=value/);
});

test('bestIndex: the lowest time, with near-ties broken towards the middle', () => {
  assert.equal(bestIndex([5, 4, 3, 4, 5]), 2);
  assert.equal(bestIndex([3, 3, 3, 3, 3]), 2);
  assert.equal(bestIndex([1, 2, 3, 4]), 0);
  assert.equal(bestIndex([10, 5, 5.01, 9]), 1);
});

test('property: the bucket recommendation sits at an edge only where the curve still falls into that edge', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 8 }),
      fc.integer({ min: 1, max: 4 }),
      fc.constantFrom(256, 512, 1024),
      (nodes, micro, hidden) => {
        const run = toyRun({ microBatchSize: micro }, { nodes }, toyModel(6, hidden));
        const sweep = sweepTraining(run, parseSweep('bucket_cap_mb=1..1024'), ringPrice);
        const times = sweep.points.map((p) => p.stepTimeUs);
        const i = sweep.points.findIndex((p) => p.value === sweep.best);
        if (i === 0) assert.ok(times[1] > times[0] * (1 + TIE_TOLERANCE), `left edge: ${times.join(', ')}`);
        if (i === times.length - 1)
          assert.ok(times[i - 1] > times[i] * (1 + TIE_TOLERANCE), `right edge: ${times.join(', ')}`);
        assert.equal(sweep.bestAt === 'edge', i === 0 || i === times.length - 1);
        assert.ok(
          times.every((t) => t >= times[i] / (1 + TIE_TOLERANCE)),
          'the best is a minimum',
        );
      },
    ),
    { numRuns: 25 },
  );
});

test('a latency-bound model gets an interior bucket recommendation with a stated gain', () => {
  // Small layers on a slow network: tiny buckets pay latency per collective, huge ones lose all overlap.
  const run = toyRun({ microBatchSize: 4 }, { nodes: 4 }, toyModel(24, 768));
  const sweep = sweepTraining(run, parseSweep('bucket_cap_mb=1..1024'), ringPrice);
  assert.equal(sweep.bestAt, 'interior', sweep.points.map((p) => `${p.value}:${p.stepTimeUs.toFixed(0)}`).join(' '));
  assert.match(sweep.recommendation, /^(set bucket_cap_mb=\d+|bucket size barely matters)/);
});

test('a node sweep reports falling efficiency with the world size', () => {
  const sweep = sweepTraining(toyRun({}, {}, toyModel(4, 512)), parseSweep('nodes=1..8'), ringPrice);
  assert.deepEqual(
    sweep.points.map((p) => p.value),
    [1, 2, 4, 8],
  );
  assert.ok(sweep.points[3].scalingEfficiency <= sweep.points[0].scalingEfficiency);
  assert.match(sweep.recommendation, /scaling efficiency/);
  const kept = sweep.points.filter((p) => p.scalingEfficiency >= 0.9).map((p) => p.value);
  assert.equal(sweep.best, kept.length > 0 ? Math.max(...kept) : 1);
});

// One bucket recommendation (issue 14): the argmin of the simulated step time, shown with that step time, the same
// in the chart's marked point and in the command's words; no change is advised that buys nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  TIE_TOLERANCE,
  formatMicros,
  parseSweep,
  sweepTraining,
  type TrainingSweep,
  asMicros,
} from '../../../src/engine/index';
import { readTrainingConfig } from '../../../src/config/training-config';
import { assembleTrainingRun } from '../../../src/config/training-run';
import { parseHfModelConfig } from '../../../src/config/hf-model';
import type { RunPart } from '../../../src/config/run-part';
import {
  bucketAdvice,
  bucketSweepRange,
  bucketSweepRows,
  formatBucketMb,
} from '../../../src/extension/glue/bucket-advice';

const EXAMPLES = resolve(import.meta.dirname, '..', '..', '..', 'examples');
const MiB = 1024 * 1024;

function exampleRun(name: string) {
  const file = join(EXAMPLES, name);
  const { part } = readTrainingConfig(readFileSync(file, 'utf8'), file);
  const parts: RunPart[] = (part.references ?? [])
    .filter((r) => r.kind === 'model')
    .map((r) => {
      const path = join(EXAMPLES, r.path);
      return {
        source: { format: 'hf-model', file: path },
        model: parseHfModelConfig(readFileSync(path, 'utf8'), path),
      };
    });
  return assembleTrainingRun([...parts, part]);
}

function checkOneAnswer(sweep: TrainingSweep, currentBytes: number): void {
  const advice = bucketAdvice(sweep, currentBytes);
  const times = sweep.points.map((p) => p.stepTimeUs);
  const fastest = Math.min(...times);
  assert.ok(
    sweep.points.some((p) => Math.abs(p.value * MiB - currentBytes) < 1),
    'the current size is simulated too',
  );
  assert.ok(
    advice.recommendedStepUs <= fastest * (1 + TIE_TOLERANCE),
    'the recommendation is (within the tolerance) the fastest step',
  );
  if (advice.change) {
    assert.equal(advice.recommendedStepUs, fastest, 'a change is advised only to the argmin');
    assert.ok(advice.currentStepUs > fastest * (1 + TIE_TOLERANCE), 'and only when it is faster than the tolerance');
    assert.match(
      advice.text,
      new RegExp(
        `^set bucket_cap_mb=${formatBucketMb(advice.recommendedMb)}: step ${formatMicros(asMicros(advice.recommendedStepUs))} against ${formatMicros(asMicros(advice.currentStepUs))}`,
      ),
    );
  } else {
    assert.equal(advice.recommendedMb, advice.currentMb);
    assert.match(
      advice.text,
      new RegExp(
        `^keep bucket_cap_mb=${formatBucketMb(advice.currentMb)}: step ${formatMicros(asMicros(advice.currentStepUs))}`,
      ),
    );
  }
  assert.doesNotMatch(advice.text, /\d\.\d{3,}/, 'sizes and times are rounded as people write them');
  const rows = bucketSweepRows(sweep, advice);
  const marked = rows.filter((r) => r.recommended);
  assert.equal(marked.length, 1, 'the chart marks one point');
  assert.equal(marked[0].bucketBytes, Math.round(advice.recommendedMb * MiB));
  assert.equal(marked[0].stepTimeUs, advice.recommendedStepUs);
}

test('the example DDP config: the advice is the argmin of the step time, with it, in chart and words', () => {
  const run = exampleRun('llama2-7b-ddp.collective.yaml');
  assert.equal(run.training.bucketBytes, 25 * MiB);
  const sweep = sweepTraining(run, parseSweep(bucketSweepRange(run.training.bucketBytes)));
  checkOneAnswer(sweep, run.training.bucketBytes);
});

test('the example DeepSpeed config: its 1e9-byte bucket reads as 953.7, and the chart and the words agree', () => {
  const run = exampleRun('ds_config.json');
  const sweep = sweepTraining(run, parseSweep(bucketSweepRange(run.training.bucketBytes)));
  checkOneAnswer(sweep, run.training.bucketBytes);
  assert.match(bucketAdvice(sweep, run.training.bucketBytes).text, /bucket_cap_mb=953\.7|current 953\.7/);
});

const point = (value: number, stepTimeUs: number) => ({
  value,
  stepTimeUs: asMicros(stepTimeUs),
  exposedCommUs: asMicros(stepTimeUs / 10),
  collectives: 1,
  scalingEfficiency: 1,
});
const sweepOf = (points: ReturnType<typeof point>[]): TrainingSweep => ({
  key: 'bucket_cap_mb',
  points,
  best: points[0].value,
  bestAt: 'interior',
  recommendation: '',
});

test('a size no faster than the current one within the tolerance is not advised; a clearly faster one is', () => {
  // 32 MB ties with the current 25 MB: "set bucket_cap_mb=32" with an unchanged step time would be no advice.
  const tie = sweepOf([point(1, 500), point(16, 401), point(25, 400.5), point(32, 400), point(1024, 450)]);
  const kept = bucketAdvice(tie, 25 * MiB);
  assert.equal(kept.change, false);
  checkOneAnswer(tie, 25 * MiB);
  const faster = sweepOf([point(1, 500), point(25, 420), point(64, 400), point(1024, 450)]);
  assert.deepEqual([bucketAdvice(faster, 25 * MiB).change, bucketAdvice(faster, 25 * MiB).recommendedMb], [true, 64]);
  checkOneAnswer(faster, 25 * MiB);
});

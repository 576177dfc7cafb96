// The flame-style aggregate of a selected range: per span name, total and self time, sorted by total. Self time is
// what no nested span covered, so the self times of a lane add up to the time it was busy in the range.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PHASES } from '../../src/engine/index';
import { rangeAggregate } from '../../webview/timeline/aggregate';
import type { TimelineModel } from '../../webview/timeline/model';
import { stepModel } from './timeline-step-model';

const table = (model: TimelineModel, from: number, to: number): string[] =>
  rangeAggregate(model, from, to).map((a) => `${a.name} ${a.totalUs}/${a.selfUs}×${a.count}`);

test('total and self time per name over the whole step, sorted by total', () => {
  assert.deepEqual(table(stepModel(), 0, 100), [
    'step 100/30×1',
    'backward 50/30×1',
    'allreduce 50/0×1',
    'layer 45/45×3',
    'exchange 25/25×1',
    'reduce 25/25×1',
    'optimizer 20/20×1',
  ]);
});

test('a range clips every span, and a span only touching it is not in it', () => {
  assert.deepEqual(table(stepModel(), 25, 45), [
    // Equal totals: the one with more self time first.
    'backward 20/10×1',
    'step 20/0×1',
    'exchange 15/15×1',
    'allreduce 15/0×1',
    'layer 10/10×2',
  ]);
  assert.deepEqual(table(stepModel(), 100, 120), []);
});

test('property: the self times of each range add up to the busy time of the counted lanes', () => {
  const model = stepModel();
  // Busy time of rank 0's compute lane, its communication lane and rank 1, from their outermost spans.
  const busy = (from: number, to: number): number => {
    const clip = (a: number, b: number): number => Math.max(0, Math.min(to, b) - Math.max(from, a));
    return clip(0, 100) + clip(30, 80) + clip(0, 25);
  };
  for (let from = 0; from < 100; from += 7) {
    for (let to = from + 1; to <= 110; to += 13) {
      const self = rangeAggregate(model, from, to).reduce((sum, a) => sum + a.selfUs, 0);
      assert.ok(Math.abs(self - busy(from, to)) < 1e-9, `${from}..${to}: ${self} vs ${busy(from, to)}`);
    }
  }
  assert.ok(PHASES.length > 0);
});

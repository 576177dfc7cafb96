// Counter tracks of the timeline: bytes in flight per link and busbw over time, computed from the spans. Their
// integral is the bytes that moved, and a counter's average over a range is the range statistics' busbw.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { asBytes, presetSystem, simulateCollective } from '../../src/engine/index';
import {
  averageGBps,
  bytesUpTo,
  clearStretch,
  columnAverages,
  drawCounter,
  rateSeries,
  traceCounters,
} from '../../webview/timeline/counters';
import { TimelineModel } from '../../webview/timeline/model';
import { simulateTrainingStep } from '../../src/engine/training/step';
import { stepTrace } from '../../src/engine/training/step-trace';
import { ringPrice, toyRun } from './training/helpers';

const close = (a: number, b: number, relative = 1e-9): boolean =>
  Math.abs(a - b) <= relative * Math.max(1, Math.abs(b));

test('property: the integral of a rate counter is the bytes moved, all of it and up to any instant', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(
          fc.double({ min: 0, max: 1000, noNaN: true }),
          // Durations from a picosecond up, and zero: the clock of any trace resolves no less.
          fc.oneof(fc.constant(0), fc.double({ min: 1e-6, max: 200, noNaN: true })),
          fc.double({ min: 0, max: 1e9, noNaN: true }),
        ),
        { maxLength: 60 },
      ),
      fc.double({ min: -10, max: 1300, noNaN: true }),
      (spans, cutUs) => {
        const starts = spans.map((s) => s[0]);
        const ends = spans.map((s) => s[0] + s[1]);
        const bytes = spans.map((s) => s[2]);
        const series = rateSeries('t', starts, ends, bytes);
        // Zero-length spans have no rate: they are the only ones whose bytes are not in the integral.
        const moved = spans.reduce((sum, s) => (s[1] > 0 ? sum + s[2] : sum), 0);
        // Rounding grows with the bytes added and taken away, so the tolerance is relative to all of them.
        const tolerance = 1e-9 * Math.max(1, moved);
        assert.ok(Math.abs(bytesUpTo(series, 2000) - moved) <= tolerance, `${bytesUpTo(series, 2000)} vs ${moved}`);
        // The reference clips each span as the trace holds it (start and end), not by the duration it was made
        // from: start + duration rounds, and a picosecond span near 16 µs then differs from its duration by 1e-9.
        const clipped = spans.reduce((sum, s, i) => {
          const durationUs = ends[i] - starts[i];
          if (!(durationUs > 0)) return sum;
          const inside = Math.max(0, Math.min(cutUs, ends[i]) - starts[i]);
          return sum + (s[2] * inside) / durationUs;
        }, 0);
        assert.ok(
          Math.abs(bytesUpTo(series, cutUs) - clipped) <= tolerance,
          `${bytesUpTo(series, cutUs)} vs ${clipped}`,
        );
        for (const v of series.valuePerUs) assert.ok(v >= 0, 'a rate is never negative');
      },
    ),
    {
      examples: [
        // Cases random runs found: a picosecond span whose start + duration rounds away from its duration; a tiny
        // rate beside a large one (it was dropped as rounding dust, or lost its digits when the large one ended);
        // bytes whose rate underflows to zero.
        [[[15.99999900005129, 0.000001, 0.9728038619386015]], 16.00000000005129],
        [
          [
            [0, 0.000001, 5.490941029700158e-8],
            [0, 18.21181442881195, 1.000000054909413e-9],
          ],
          0,
        ],
        [
          [
            [0, 0.000001, 268.43545599998623],
            [0, 9.127592527187097, 0.0003359525546841865],
          ],
          1299.9999999999957,
        ],
        [
          [
            [0, 0.000001, 1.0000000000000003e-9],
            [0, 2, 5e-324],
          ],
          0,
        ],
      ],
    },
  );
});

test('two overlapping transfers: the counter steps up and down where they start and end', () => {
  const series = rateSeries('link', [0, 5], [10, 15], [1000, 2000]);
  assert.deepEqual([...series.timesUs], [0, 5, 10, 15]);
  assert.deepEqual([...series.valuePerUs], [100, 300, 200, 0]);
  // 1 GB/s is 1000 bytes per µs.
  assert.equal(averageGBps(series, 5, 10), 0.3);
  const columns = columnAverages(series, 0, 20, 4);
  assert.deepEqual([...columns], [0.1, 0.3, 0.2, 0]);
});

test('a simulated ring AllReduce: busbw and link counters hold its bytes, and agree with range statistics', () => {
  const result = simulateCollective(presetSystem('dgx-a100')!, {
    bytes: asBytes(64 * 1024 * 1024),
    algorithm: 'ring',
    protocol: 'Simple',
    trace: true,
  });
  const trace = result.trace!;
  const model = TimelineModel.fromTrace(trace);
  const counters = traceCounters(model);
  assert.ok(counters.length >= 2, 'busbw and at least one link');
  const [busbw, ...links] = counters;
  assert.match(busbw.label, /busbw per rank \(8 ranks\)/);
  // The busbw counter's bytes are the transfers' bytes; averaged over any range it is the range's busbw.
  const transferBytes = trace.spans
    .filter((s) => s.links.length > 0 && trace.lanes[s.lane].kind !== 'link')
    .reduce((sum, s) => sum + s.bytes, 0);
  assert.ok(close(bytesUpTo(busbw, model.endUs), transferBytes));
  for (const [from, to] of [
    [model.startUs, model.endUs],
    [model.startUs + 10, model.startUs + 100],
    [(model.startUs + model.endUs) / 2, model.endUs - 1],
  ]) {
    const stats = model.rangeStats(from, to);
    assert.ok(close(averageGBps(busbw, from, to), stats.busbwGBps, 1e-9), `${from}..${to}`);
  }
  // Each link counter holds exactly the bytes of the transfers that crossed that link.
  for (const link of links) {
    const expected = trace.spans
      .filter((s) => s.links.includes(link.label) && trace.lanes[s.lane].kind !== 'link')
      .reduce((sum, s) => sum + s.bytes, 0);
    assert.ok(expected > 0, `${link.label} carried something`);
    assert.ok(close(bytesUpTo(link, model.endUs), expected), link.label);
  }
  // The busiest link first.
  const totals = links.map((l) => bytesUpTo(l, model.endUs));
  assert.deepEqual(
    totals,
    [...totals].sort((a, b) => b - a),
  );
});

test('a trace whose spans moved nothing over links and named no collective bytes has no counters', () => {
  const model = TimelineModel.fromColumns(
    { origin: 'test', title: 't', ranks: 1 },
    [{ id: 0, kind: 'rank', label: 'rank 0', rank: 0 }],
    {
      startUs: Float64Array.of(0, 10),
      endUs: Float64Array.of(5, 20),
      lane: Uint32Array.of(0, 0),
      phase: Uint8Array.of(3, 3),
      transferBytes: Float64Array.of(0, 0),
    },
  );
  assert.deepEqual(traceCounters(model), []);
});

test('a training step timeline: an algbw counter from its collectives, equal to range statistics over any range', () => {
  const step = simulateTrainingStep(toyRun({}, { nodes: 2 }), { price: ringPrice });
  const trace = stepTrace(step, { ranks: 4, gpusPerNode: 8 });
  const model = TimelineModel.fromTrace(trace);
  const counters = traceCounters(model);
  // No span of a step moves bytes over a link (its collectives are priced, not routed): no busbw, no links.
  assert.deepEqual(
    counters.map((c) => c.label),
    ['algbw per rank (4 ranks)'],
  );
  const [algbw] = counters;
  // Every collective span of every drawn rank holds its message bytes.
  const messageBytes = trace.spans.filter((s) => s.phase === 'collective').reduce((sum, s) => sum + s.bytes, 0);
  assert.ok(messageBytes > 0);
  assert.ok(close(bytesUpTo(algbw, model.endUs), messageBytes));
  const first = step.collectives[0];
  for (const [from, to] of [
    [model.startUs, model.endUs],
    [first.startUs, first.endUs],
    [first.startUs + (first.endUs - first.startUs) / 3, model.endUs / 2],
  ]) {
    const stats = model.rangeStats(from, to);
    assert.ok(stats.algbwGBps > 0, `${from}..${to} holds collective time`);
    assert.ok(close(averageGBps(algbw, from, to), stats.algbwGBps, 1e-9), `${from}..${to}`);
  }
});

/** A canvas context that records the counter's area (its columns' tops) and where its text went. */
function recordingCanvas(charPx: number) {
  const path: [number, number][] = [];
  const texts: { text: string; x: number; y: number; width: number }[] = [];
  const chips: number[][] = [];
  const ctx = {
    font: '22px sans-serif',
    fillStyle: '',
    beginPath: () => (path.length = 0),
    moveTo: (x: number, y: number) => path.push([x, y]),
    lineTo: (x: number, y: number) => path.push([x, y]),
    closePath: () => undefined,
    fill: () => undefined,
    fillRect: (...box: number[]) => chips.push(box),
    measureText: (text: string) => ({ width: text.length * charPx }),
    fillText: (text: string, x: number, y: number) => texts.push({ text, x, y, width: text.length * charPx }),
  };
  return { ctx: ctx as unknown as CanvasRenderingContext2D, path, texts, chips };
}

test("a counter's peak label sits where no bar reaches its text, or on a chip when none is free", () => {
  // The e2e screenshots: link counters busy from the left edge printed "peak 384.7 GB/s" over their own bars.
  // At dpr 2: a 28 px line, 22 px text centred on it, so a bar clears the text only below 2 px.
  const dpr = 2;
  const rowHeightPx = 28;
  const topPx = 100;
  const window = { startUs: 0, endUs: 1000, leftPx: 50, widthPx: 1000 };
  const colours = { fill: 'blue', text: 'white', background: 'black' };
  // Busy over the first 300 µs and from 700 µs: a free stretch of 400 columns in the middle.
  const busy = rateSeries('link', [0, 700], [300, 1000], [3e8, 3e8]);
  const canvas = recordingCanvas(12);
  drawCounter({ ctx: canvas.ctx, dpr, rowHeightPx }, busy, topPx, window, colours);
  const [label] = canvas.texts;
  assert.match(label.text, /^peak .* GB\/s$/);
  const textBottom = label.y + 11;
  for (const [x, y] of canvas.path) {
    const under = x > label.x && x < label.x + label.width;
    if (under) assert.ok(y >= textBottom, `a bar at x ${x} reaches y ${y}, above the text's bottom ${textBottom}`);
  }
  assert.ok(label.x >= window.leftPx + 300 && label.x + label.width <= window.leftPx + 700, `text at ${label.x}`);
  assert.deepEqual(canvas.chips, []);
  // Busy from end to end: the label goes on a chip of the background at the left, not straight over the bars.
  const full = rateSeries('link', [0], [1000], [3e8]);
  const covered = recordingCanvas(12);
  drawCounter({ ctx: covered.ctx, dpr, rowHeightPx }, full, topPx, window, colours);
  assert.equal(covered.texts[0].x, window.leftPx + 3 * dpr);
  assert.deepEqual(covered.chips, [[window.leftPx, topPx, covered.texts[0].width + 6 * dpr, rowHeightPx]]);
});

test('a clear stretch is the first run of columns wide enough whose bars stay under the limit', () => {
  assert.equal(clearStretch([5, 5, 0, 0, 1, 5, 0, 0, 0, 0], 3, 1), 2);
  assert.equal(clearStretch([5, 0, 0, 5, 0, 0, 0], 3, 0), 4);
  assert.equal(clearStretch([5, 0, 0, 5], 3, 0), undefined);
  assert.equal(clearStretch([0, 0], 0.5, 0), 0);
});

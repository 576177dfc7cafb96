// Byte-axis tick labels never run into each other, at any panel width (issue 14: the bucket sweep's size axis read
// "16 MiB32 MiB64 MiB" in a 1,400 px window, where three charts share a row). Each label's box is measured as Chart.js
// draws it (its label items, in the tick font), on every chart with a size axis, from a wide panel to a narrow one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { asBytes, asMicros, presetSystem, sweepAllReduce } from '../../src/engine/index';
import { chromiumMissing, openPanel, type PanelPage } from './harness';

const skip = chromiumMissing();
let panel: PanelPage;

before(async () => {
  if (skip) return;
  panel = await openPanel('charts', { width: 1400, height: 900 });
});
after(async () => {
  await panel?.close();
});

/** One chart's drawn x-axis labels: their text and their left and right edges, CSS pixels. */
interface AxisLabels {
  chart: string;
  widthPx: number;
  labels: { text: string; leftPx: number; rightPx: number }[];
}

// A string, not a function: tsx would wrap a function's inner names in helpers the page does not have.
const READ_LABELS = `(() => {
  const out = [];
  const measure = document.createElement('canvas').getContext('2d');
  for (const [id, chart] of window.collectiveProfilerCharts.charts) {
    const x = chart.scales.x;
    if (!x || x.type !== 'logarithmic') continue;
    const labels = x.getLabelItems().map((item) => {
      measure.font = item.font.string;
      const text = Array.isArray(item.label) ? item.label.join(' ') : String(item.label);
      const width = measure.measureText(text).width;
      const [px] = item.options.translation;
      const align = item.options.textAlign;
      const left = align === 'left' ? px : align === 'right' ? px - width : px - width / 2;
      return { text, leftPx: left, rightPx: left + width };
    });
    out.push({ chart: id, widthPx: x.width, labels: labels.sort((a, b) => a.leftPx - b.leftPx) });
  }
  return out;
})()`;

test('byte-axis tick labels do not overlap from a 1,400 px panel down to 420 px', { skip }, async () => {
  const system = presetSystem('dgx-h100')!;
  const rows = sweepAllReduce(system, { minBytes: asBytes(8), maxBytes: asBytes(2 ** 30) });
  // The sweep Sweep Bucket Size runs: every power of two from 1 MiB to 1 GiB.
  const bucketSweep = Array.from({ length: 11 }, (_, i) => ({
    bucketBytes: asBytes(2 ** (20 + i)),
    stepTimeUs: asMicros(3.46e6 + 1e3 * i),
    exposedCommUs: asMicros(1e4),
  }));
  await panel.send({
    type: 'charts',
    data: { title: 'Sweep', system: '8× H100 NVSwitch', sweeps: [{ label: 'model', rows }], bucketSweep },
  });
  await panel.page.waitForSelector('section.card[data-chart="buckets"] canvas');
  for (const width of [1400, 1000, 700, 420]) {
    await panel.page.setViewportSize({ width, height: 900 });
    // Chart.js resizes on its container's resize observer, a frame or two later: wait until the bucket chart fits.
    // A poll of evaluations, not waitForFunction, which the panel's CSP refuses.
    const fitsBy = Date.now() + 5_000;
    while (
      !(await panel.page.evaluate(
        (w) => (window as any).collectiveProfilerCharts.charts.get('buckets').width <= w,
        width,
      )) &&
      Date.now() < fitsBy
    )
      await panel.page.waitForTimeout(50);
    await panel.page.waitForTimeout(200);
    const axes = (await panel.page.evaluate(READ_LABELS)) as AxisLabels[];
    assert.ok(
      axes.some((a) => a.chart === 'buckets'),
      `the bucket chart has a log size axis: ${axes.map((a) => a.chart).join(', ')}`,
    );
    for (const axis of axes) {
      const where = `${axis.chart} at a ${width} px panel (axis ${Math.round(axis.widthPx)} px)`;
      assert.ok(axis.labels.length >= 3, `${where}: at least three labels, got ${axis.labels.length}`);
      for (let i = 1; i < axis.labels.length; i++) {
        const [before, next] = [axis.labels[i - 1], axis.labels[i]];
        assert.ok(
          next.leftPx >= before.rightPx + 2,
          `${where}: "${before.text}" ends at ${before.rightPx.toFixed(1)} px, "${next.text}" starts at ${next.leftPx.toFixed(1)} px`,
        );
      }
    }
  }
  assert.deepEqual(panel.errors(), []);
});

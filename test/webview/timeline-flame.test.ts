// The flame graph of a selected range in Chromium: a shift-drag over a simulated training step draws the merged
// stacks (step > backward pass > layers) on a canvas beside the name table, hovering a node says its name, total and
// self time as the pure merge computes them, a click on it highlights exactly its spans in the timeline and zooms
// into it (its callees then take the width), and a second click or Reset zoom zooms back out.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { chromiumMissing, openPanel, type PanelPage } from './harness';
import { simulateTrainingStep } from '../../src/engine/training/step';
import { stepTrace } from '../../src/engine/training/step-trace';
import { ringPrice, toyRun } from '../unit/training/helpers';
import { TimelineModel } from '../../webview/timeline/model';
import { rangeFlame } from '../../webview/timeline/flame';
import { FLAME_ROW_PX, flameHoverText, layoutFlame, type FlameRect } from '../../webview/timeline/flame-view';

// Callbacks passed to page.evaluate run in the browser; these names exist there, not in Node's typings.
declare const window: any;
declare const document: any;
declare const requestAnimationFrame: any;

const skip = chromiumMissing();
let panel: PanelPage;

before(async () => {
  if (skip) return;
  panel = await openPanel('timeline', { width: 1400, height: 900 });
  mkdirSync('test-results', { recursive: true });
});
after(async () => {
  await panel?.close();
});

test(
  'a range draws its flame graph; hover names total and self time; a click highlights its spans and zooms in, a second click or Reset zoom out',
  { skip },
  async () => {
    const trace = stepTrace(simulateTrainingStep(toyRun({}, { nodes: 2 }), { price: ringPrice }), {
      ranks: 2,
      gpusPerNode: 8,
    });
    await panel.send({ type: 'trace', trace: trace as never, source: { uri: 'untitled:flame', label: 'flame' } });
    await panel.page.waitForFunction(
      (n) => window.collectiveProfilerTimeline.view.model?.spanCount === n,
      trace.spans.length,
    );
    const box = (await panel.page.locator('canvas.lanes').boundingBox())!;
    await panel.page.keyboard.down('Shift');
    await panel.page.mouse.move(box.x + 175, box.y + 60);
    await panel.page.mouse.down();
    await panel.page.mouse.move(box.x + box.width - 5, box.y + 80, { steps: 4 });
    await panel.page.mouse.up();
    await panel.page.keyboard.up('Shift');
    await panel.page.waitForSelector('.aggregate table');
    await panel.page.waitForSelector('.flame canvas', { timeout: 5000 });
    // The table stays beside the graph.
    assert.equal(await panel.page.locator('.aggregate table').count(), 1);
    const range = await panel.page.evaluate(() => window.collectiveProfilerTimeline.view.range);
    const expected = rangeFlame(TimelineModel.fromTrace(trace), range.startUs, range.endUs);
    assert.ok(expected.children.length > 0 && expected.totalUs > 0);
    await panel.page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    const canvas = panel.page.locator('.flame canvas');
    const flameBox = (await canvas.boundingBox())!;
    // Drawn: most of the top level (the busy time, the whole width) and the widest stack below it are not background.
    const painted = (await panel.page.evaluate(() => {
      const c = document.querySelector('.flame canvas');
      const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let differing = 0;
      for (let i = 0; i < data.length; i += 4)
        if (data[i] !== data[0] || data[i + 1] !== data[1] || data[i + 2] !== data[2]) differing++;
      return differing / (data.length / 4);
    })) as number;
    assert.ok(painted > 0.2, `the graph is drawn (${(100 * painted).toFixed(0)} % of its pixels)`);
    // Hover the widest outermost stack: its text is the merge's name, total and self time, with units.
    const widest = layoutFlame(expected, flameBox.width).find((r) => r.node === expected.children[0])!;
    assert.equal(widest.yPx, FLAME_ROW_PX);
    await panel.page.mouse.move(
      flameBox.x + widest.xPx + widest.widthPx / 2,
      flameBox.y + widest.yPx + FLAME_ROW_PX / 2,
    );
    const tip = panel.page.locator('.flame-tip');
    await tip.waitFor({ state: 'visible', timeout: 5000 });
    const text = await tip.innerText();
    assert.equal(text, flameHoverText(expected.children[0], expected));
    assert.match(text, /· total [\d.]+ (µs|ms|s) \([\d.]+ %\) · self [\d.]+ (µs|ms|s) · \d+ spans?$/);
    // A click dims every span but the node's, and zooms into it.
    await panel.page.mouse.click(
      flameBox.x + widest.xPx + widest.widthPx / 2,
      flameBox.y + widest.yPx + FLAME_ROW_PX / 2,
    );
    const highlighted = (await panel.page.evaluate(() => {
      const mask = window.collectiveProfilerTimeline.view.mask;
      return mask ? mask.reduce((sum: number, m: number) => sum + m, 0) : -1;
    })) as number;
    assert.equal(highlighted, expected.children[0].spans.length);
    const focus = expected.children[0];
    assert.equal(await canvas.getAttribute('data-focus'), focus.name);
    assert.ok(await panel.page.locator('.flame-reset').isVisible(), 'Reset zoom shows while zoomed');
    // Zoomed, the focus's callees take the width: a point of the graph now names one of them, where it named
    // another node before the zoom.
    await panel.page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    const zoomedBox = (await canvas.boundingBox())!;
    const zoomed = layoutFlame(expected, zoomedBox.width, focus);
    const callee = zoomed.find((r) => r.node !== focus && r.yPx === 2 * FLAME_ROW_PX && r.widthPx > 20)!;
    assert.ok(callee, `the focus ${focus.name} has a callee wide enough to hover`);
    const pointX = callee.xPx + callee.widthPx / 2;
    const pointY = callee.yPx + FLAME_ROW_PX / 2;
    const hitIn = (rects: FlameRect[]) =>
      rects.find(
        (r) => pointX >= r.xPx && pointX < r.xPx + r.widthPx && pointY >= r.yPx && pointY < r.yPx + FLAME_ROW_PX,
      );
    assert.notEqual(hitIn(layoutFlame(expected, zoomedBox.width))?.node, callee.node, 'the point moved with the zoom');
    await panel.page.mouse.move(zoomedBox.x + pointX, zoomedBox.y + pointY);
    await panel.page.waitForFunction(
      (want) => document.querySelector('.flame-tip')?.textContent === want,
      flameHoverText(callee.node, expected),
      { timeout: 5000 },
    );
    await panel.page.screenshot({ path: 'test-results/timeline-flame-zoomed.png' });
    // A click on the focus (now across the width, one level below the root) zooms back out and clears the highlight.
    await panel.page.mouse.click(zoomedBox.x + 5, zoomedBox.y + FLAME_ROW_PX * 1.5);
    assert.equal(await canvas.getAttribute('data-focus'), '');
    assert.equal(await panel.page.evaluate(() => window.collectiveProfilerTimeline.view.mask ?? null), null);
    // Into the callee (two clicks) and back out with Reset zoom.
    await panel.page.mouse.click(flameBox.x + widest.xPx + widest.widthPx / 2, flameBox.y + FLAME_ROW_PX * 1.5);
    await panel.page.mouse.click(zoomedBox.x + pointX, zoomedBox.y + pointY);
    assert.equal(await canvas.getAttribute('data-focus'), `${focus.name} > ${callee.node.name}`);
    await panel.page.locator('.flame-reset').click();
    assert.equal(await canvas.getAttribute('data-focus'), '');
    assert.ok(!(await panel.page.locator('.flame-reset').isVisible()), 'Reset zoom hides when not zoomed');
    await panel.page.screenshot({ path: 'test-results/timeline-flame.png' });
    assert.deepEqual(await panel.cspViolations(), []);
  },
);

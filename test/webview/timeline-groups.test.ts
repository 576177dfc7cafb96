// Track groups and pinned tracks in Chromium, driven by the mouse: a node's header folds its tracks into one
// summary line and unfolds them again, and a lane pinned by clicking its label stays at the top while the rest
// scrolls under it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { DARK_THEME, chromiumMissing, openPanel, rgb, type PanelPage } from './harness';
import { COMPUTE_US, STEP_US, handBuiltTrace } from './fixtures';
// Callbacks passed to page.evaluate run in the browser; these names exist there, not in Node's typings.
declare const window: any;
declare const requestAnimationFrame: any;

const skip = chromiumMissing();
let panel: PanelPage;

before(async () => {
  if (skip) return;
  // A short panel, so the eleven lines of the trace do not fit and it scrolls.
  panel = await openPanel('timeline', { width: 1000, height: 280 });
  await panel.send({ type: 'trace', trace: handBuiltTrace(), source: { uri: 'untitled:groups', label: 'groups' } });
  await panel.page.waitForFunction(() => window.collectiveProfilerTimeline.view.model?.spanCount > 0);
  // The counters are laid out in a task after the first paint.
  await panel.page.waitForFunction(() => window.collectiveProfilerTimeline.counterLabels().length > 0);
  await frame();
});
after(async () => {
  await panel?.close();
});

async function frame(): Promise<void> {
  await panel.page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
}

/** The lines as the label column names them: "+node 0 ·…" folded, "-node 0 ·…" open, "^label" pinned. */
async function lines(): Promise<string[]> {
  return panel.page.evaluate(() => {
    const { view } = window.collectiveProfilerTimeline;
    return [...view.layout.pinned, ...view.layout.scrolling].map((line: any) =>
      line.kind === 'group'
        ? `${line.folded ? '+' : '-'}${line.label}`
        : line.kind === 'track'
          ? `${line.pinned ? '^' : ''}${view.model.rows[line.row].label}`
          : `counter ${line.label}`,
    );
  });
}

/** Clicks the label column of line `index` of [...pinned, ...scrolling]. */
async function clickLabel(index: number): Promise<void> {
  const box = (await panel.page.locator('canvas.lanes').boundingBox())!;
  const y = await panel.page.evaluate((i) => {
    const { view } = window.collectiveProfilerTimeline;
    return (view.lineTopPx(i) + view.rowHeightPx / 2) / view.dpr;
  }, index);
  await panel.page.mouse.click(box.x + 40, box.y + y);
  await frame();
}

/** The colour two pixels below the top of line `index`, at time µs from the trace's start. */
async function colourOnLine(index: number, timeUs: number): Promise<number[]> {
  return panel.page.evaluate(
    ([i, t]) => {
      const { view } = window.collectiveProfilerTimeline;
      const x = Math.round(view.scale().timeToPx(view.model.startUs + t));
      const y = Math.round(view.lineTopPx(i) + 2 * view.dpr);
      return [...view.canvas.getContext('2d').getImageData(x, y, 1, 1).data.slice(0, 3)];
    },
    [index, timeUs],
  );
}

test('each node has a header; clicking it folds the node into one summary line and back', { skip }, async () => {
  const open = await lines();
  assert.deepEqual(open.slice(0, 10), [
    '-node 0 · 4 lanes',
    'node 0 · rank 0',
    'node 0 · rank 1',
    'gpu0->gpu1',
    'gpu1->gpu2',
    '-node 1 · 4 lanes',
    'node 1 · rank 2',
    'node 1 · rank 3',
    'gpu2->gpu3',
    'gpu3->gpu0',
  ]);
  // The counters' group comes last: busbw, then one per link.
  assert.equal(open[10], '-counters · 5');
  assert.equal(open[11], 'counter busbw per rank (4 ranks)');
  await clickLabel(0);
  assert.deepEqual(await lines(), ['+node 0 · 4 lanes', ...open.slice(5)]);
  // The folded header draws its ranks' phases: compute first, then the first ring step's exchange.
  assert.deepEqual(await colourOnLine(0, COMPUTE_US / 2), rgb(DARK_THEME['--vscode-terminal-ansiCyan'] ?? '#11a8cd'));
  assert.deepEqual(await colourOnLine(0, COMPUTE_US + STEP_US / 4), rgb(DARK_THEME['--vscode-charts-blue']));
  // The open node 1 header draws no spans (its tracks are below it): one colour where its ranks compute and exchange.
  assert.deepEqual(await colourOnLine(1, COMPUTE_US + STEP_US / 4), await colourOnLine(1, COMPUTE_US / 2));
  // Hovering the summary finds a span of the folded node's tracks.
  const box = (await panel.page.locator('canvas.lanes').boundingBox())!;
  const [x, y] = await panel.page.evaluate(
    (t) => {
      const { view } = window.collectiveProfilerTimeline;
      return [view.scale().timeToPx(view.model.startUs + t) / view.dpr, (view.lineTopPx(0) + 4) / view.dpr];
    },
    COMPUTE_US + STEP_US / 4,
  );
  await panel.page.mouse.move(box.x + x, box.y + y);
  await panel.page.waitForSelector('.tooltip:not([hidden])');
  assert.match(await panel.page.locator('.tooltip').innerText(), /exchange/);
  await clickLabel(0);
  assert.deepEqual(await lines(), open);
});

test('a lane pinned by clicking its label stays at the top while the others scroll', { skip }, async () => {
  // "node 1 · rank 3" is line 7.
  await clickLabel(7);
  const pinned = await lines();
  assert.equal(pinned[0], '^node 1 · rank 3');
  assert.ok(!pinned.slice(1).includes('node 1 · rank 3'), 'the lane left its place among the scrolling lines');
  const exchange = rgb(DARK_THEME['--vscode-charts-blue']);
  assert.deepEqual(await colourOnLine(0, COMPUTE_US + STEP_US / 4), exchange);
  // Scroll to the bottom: the pinned line stays where it was, the first scrolling line moved up under it.
  const before = await panel.page.evaluate(() => window.collectiveProfilerTimeline.view.lineTopPx(1));
  const lanes = (await panel.page.locator('canvas.lanes').boundingBox())!;
  await panel.page.mouse.move(lanes.x + lanes.width / 2, lanes.y + lanes.height / 2);
  await panel.page.mouse.wheel(0, 400);
  await frame();
  const [top, firstScrolling, scrollTop, axis] = await panel.page.evaluate(() => {
    const { view } = window.collectiveProfilerTimeline;
    return [view.lineTopPx(0), view.lineTopPx(1), view.scrollTopPx, view.axisHeightPx];
  });
  assert.ok(scrollTop > 0, `the panel scrolled (lanes canvas ${lanes.height} px high)`);
  assert.equal(top, axis, 'the pinned line is still right under the axis');
  assert.ok(firstScrolling < before, 'the scrolling lines moved up');
  assert.deepEqual(await colourOnLine(0, COMPUTE_US + STEP_US / 4), exchange);
  // A span on the pinned line is picked by the hit test at its pinned place.
  const box = (await panel.page.locator('canvas.lanes').boundingBox())!;
  const [x, y] = await panel.page.evaluate(
    (t) => {
      const { view } = window.collectiveProfilerTimeline;
      return [view.scale().timeToPx(view.model.startUs + t) / view.dpr, (view.lineTopPx(0) + 4) / view.dpr];
    },
    COMPUTE_US + STEP_US / 4,
  );
  await panel.page.mouse.move(box.x + x, box.y + y);
  await panel.page.waitForSelector('.tooltip:not([hidden])');
  assert.match(await panel.page.locator('.tooltip').innerText(), /rank 3/);
  mkdirSync('test-results', { recursive: true });
  await panel.page.screenshot({ path: 'test-results/timeline-pinned-scrolled.png' });
  await clickLabel(0);
  assert.equal((await lines())[0], '-node 0 · 4 lanes', 'unpinned, the lane went back');
  assert.deepEqual(await panel.cspViolations(), []);
});

// A fold and a pin are written to the webview state at the click, not a quarter second later: before, a reload
// inside that quarter second lost the latest change, and a wait on "node 0 folded" could pass on the state an
// earlier test had saved (folded, nothing pinned) while the pin's write was still waiting.
test('folds and pins survive a reload of the panel (webview state), for the same trace only', { skip }, async () => {
  // The test before left the lines scrolled to the bottom.
  await panel.page.evaluate(() => window.collectiveProfilerTimeline.view.scrollByPx(-1e6));
  await clickLabel(7); // pin "node 1 · rank 3"
  await clickLabel(1); // fold node 0, now the first scrolling line under the pinned one
  const before = await lines();
  assert.equal(before[0], '^node 1 · rank 3');
  assert.equal(before[1], '+node 0 · 4 lanes');
  // Both clicks were written at once: no wait, the reload follows straight away.
  const state = await panel.page.evaluate(() => window.__state);
  assert.deepEqual([state.folded, state.pinned], [['node 0'], [3]]);
  await panel.reload();
  const trace = handBuiltTrace();
  await panel.send({ type: 'trace', trace, source: { uri: 'untitled:groups', label: 'groups' } });
  await panel.page.waitForFunction(() => window.collectiveProfilerTimeline.counterLabels().length > 0);
  await frame();
  assert.deepEqual(await lines(), before);
  // Another trace after the reload starts unfolded and unpinned.
  await panel.send({ type: 'trace', trace, source: { uri: 'untitled:other', label: 'other' } });
  await frame();
  const other = await lines();
  assert.equal(other[0], '-node 0 · 4 lanes');
  assert.ok(!other.some((line) => line.startsWith('^') || line.startsWith('+')));
  // Put the panel back as the earlier tests left it: nothing pinned or folded, the first trace shown.
  await panel.send({ type: 'trace', trace, source: { uri: 'untitled:groups', label: 'groups' } });
  assert.deepEqual(await panel.cspViolations(), []);
});

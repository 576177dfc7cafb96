// A trace is workspace data: its names, labels and paths must show as text, never run as markup or script.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumMissing, openPanel, type PanelPage } from './harness';
import { handBuiltTrace } from './fixtures';
import type { Trace } from '../../src/engine/index';
// Callbacks passed to page.evaluate run in the browser; these names exist there, not in Node's typings.
declare const window: any;
declare const document: any;

const skip = chromiumMissing();
const PAYLOAD = '<img src=x onerror="window.__pwned=1">';
const SCRIPT = '<script>window.__pwned=2</script>';
let panel: PanelPage;

function hostileTrace(): Trace {
  const trace = handBuiltTrace(() => `${PAYLOAD} step`);
  return {
    metadata: { ...trace.metadata, title: `${SCRIPT} title`, system: PAYLOAD },
    lanes: trace.lanes.map((lane) => ({ ...lane, label: `${lane.label} ${PAYLOAD}` })),
    spans: trace.spans.map((span) =>
      span.source ? { ...span, source: { file: `/work/${PAYLOAD}.py`, line: 3 }, args: { [PAYLOAD]: SCRIPT } } : span,
    ),
  };
}

before(async () => {
  if (skip) return;
  panel = await openPanel('timeline');
  await panel.send({ type: 'trace', trace: hostileTrace() });
  await panel.page.waitForFunction(() => (window as any).collectiveProfilerTimeline.view.model !== undefined);
});
after(async () => {
  await panel?.close();
});

async function pointOn(row: number, timeUs: number): Promise<{ x: number; y: number }> {
  const box = (await panel.page.locator('canvas.lanes').boundingBox())!;
  const [x, y] = await panel.page.evaluate(
    ([row, timeUs]) => {
      const { view } = (window as any).collectiveProfilerTimeline;
      return [
        view.scale().timeToPx(view.model.startUs + timeUs) / view.dpr,
        (view.rowTopPx(row) + 0.5 * view.rowHeightPx) / view.dpr,
      ];
    },
    [row, timeUs],
  );
  return { x: box.x + x, y: box.y + y };
}

test('span names, lane labels, titles and paths holding markup are shown literally', { skip }, async () => {
  const exchange = await pointOn(0, 60);
  await panel.page.mouse.move(exchange.x, exchange.y);
  await panel.page.waitForSelector('.tooltip:not([hidden])');
  const tooltip = await panel.page.locator('.tooltip').textContent();
  assert.ok(tooltip?.includes(`${PAYLOAD} step`), `the name shows literally: ${tooltip}`);
  assert.ok(tooltip?.includes(`node 0 · rank 0 ${PAYLOAD}`), 'the lane label shows literally');

  const compute = await pointOn(0, 20);
  await panel.page.mouse.click(compute.x, compute.y);
  await panel.page.waitForSelector('.span-details');
  const details = await panel.page.locator('.span-details').textContent();
  assert.ok(details?.includes(`/work/${PAYLOAD}.py:3`), `the source path shows literally: ${details}`);
  assert.ok(details?.includes(SCRIPT), 'args show literally');

  await panel.page.locator('vscode-textfield.filter input').fill('<img');
  await panel.page.waitForFunction(() => /match/.test(document.querySelector('.match-count')!.textContent ?? ''));
  await new Promise((r) => setTimeout(r, 200));

  const title = await panel.page.locator('.toolbar .title').textContent();
  assert.equal(title, `${SCRIPT} title`);
  const found = await panel.page.evaluate(() => ({
    images: document.querySelectorAll('img').length,
    // The bundle, and the labels' JSON data block (never executed); nothing a trace string added.
    scripts: document.querySelectorAll('script:not([type="application/json"])').length,
    dataBlocks: document.querySelectorAll('script[type="application/json"]').length,
    pwned: (window as any).__pwned,
  }));
  assert.deepEqual(found, { images: 0, scripts: 1, dataBlocks: 1, pwned: undefined });
  assert.deepEqual(panel.errors(), []);
  assert.deepEqual(await panel.cspViolations(), []);
});

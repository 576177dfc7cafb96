// Issue 14: "Charts fill the panel." Each chart's canvas spans its card, the cards together span the panel's width,
// and a wider panel gets wider charts (Chart.js resizes with its container rather than keeping a fixed size).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { asBytes, presetSystem, sweepAllReduce } from '../../src/engine/index';
import { chromiumMissing, openPanel, type PanelPage } from './harness';
declare const document: any;

const skip = chromiumMissing();
let panel: PanelPage;

before(async () => {
  if (skip) return;
  panel = await openPanel('charts', { width: 1000, height: 800 });
});
after(async () => {
  await panel?.close();
});

interface Extent {
  panelPx: number;
  cards: { chart: string; cardPx: number; canvasPx: number; canvasHeightPx: number; leftPx: number; rightPx: number }[];
}

const extent = (): Promise<Extent> =>
  panel.page.evaluate(() => {
    const body = document.body.getBoundingClientRect();
    const cards = [...document.querySelectorAll('section.card')].map((card: any) => {
      const box = card.getBoundingClientRect();
      const canvas = card.querySelector('canvas').getBoundingClientRect();
      return {
        chart: card.getAttribute('data-chart'),
        cardPx: box.width,
        canvasPx: canvas.width,
        canvasHeightPx: canvas.height,
        leftPx: box.left - body.left,
        rightPx: box.right - body.left,
      };
    });
    return { panelPx: body.width, cards };
  }) as Promise<Extent>;

function assertFills(shown: Extent): void {
  assert.ok(shown.cards.length > 0, 'charts are shown');
  for (const card of shown.cards) {
    assert.ok(
      card.canvasPx >= 0.85 * card.cardPx,
      `${card.chart}: canvas ${card.canvasPx} px of its ${card.cardPx} px card`,
    );
    assert.ok(card.canvasHeightPx >= 150, `${card.chart}: ${card.canvasHeightPx} px tall`);
  }
  const left = Math.min(...shown.cards.map((c) => c.leftPx));
  const right = Math.max(...shown.cards.map((c) => c.rightPx));
  assert.ok(right - left >= 0.9 * shown.panelPx, `the cards span ${right - left} px of ${shown.panelPx} px`);
}

test('charts fill the panel, and widen with it', { skip }, async () => {
  const system = presetSystem('dgx-a100')!;
  const rows = sweepAllReduce(system, { minBytes: asBytes(1024), maxBytes: asBytes(2 ** 30) });
  await panel.send({
    type: 'charts',
    data: { title: 'AllReduce', system: '8× A100 NVSwitch', sweeps: [{ label: 'model', rows }] },
  });
  await panel.page.waitForSelector('section.card[data-chart="busbw"] canvas');
  await panel.page.waitForTimeout(300);
  const narrow = await extent();
  assertFills(narrow);
  await panel.page.setViewportSize({ width: 1600, height: 900 });
  await panel.page.waitForTimeout(500);
  const wide = await extent();
  assertFills(wide);
  const busbw = (shown: Extent) => shown.cards.find((c) => c.chart === 'busbw')!.canvasPx;
  assert.ok(busbw(wide) > 1.4 * busbw(narrow), `busbw chart ${busbw(narrow)} px → ${busbw(wide)} px`);
  assert.deepEqual(panel.errors(), []);
});

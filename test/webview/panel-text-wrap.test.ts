// Text in a narrow timeline panel wraps between words, never inside one (issue 14, the e2e screenshots of session
// 13): the toolbar's view range ("0.00 µs – 4.84 ms of 4.84 ms") took five lines beside a long title, and the range
// statistics broke "ranks" into "ra" and "nks". Each word and the view range are measured as the page lays them out.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumMissing, openPanel, type PanelPage } from './harness';
import { handBuiltTrace } from './fixtures';
declare const window: any;
declare const document: any;

const skip = chromiumMissing();
let panel: PanelPage;

before(async () => {
  if (skip) return;
  // The width a timeline gets beside its Python file in a 1,400 px window.
  panel = await openPanel('timeline', { width: 500, height: 700 });
  const trace = handBuiltTrace();
  const long = 'dist.all_reduce · 25 MiB (assumed) on 4×8 RTX4090 PCIe (no P2P) + 1×100G IB';
  await panel.send({
    type: 'trace',
    trace: { ...trace, metadata: { ...trace.metadata, title: long } },
    source: { uri: 'untitled:test', label: 'test' },
  });
  await panel.page.waitForFunction(() => (window as any).collectiveProfilerTimeline?.view.model?.spanCount > 0);
});
after(async () => {
  await panel?.close();
});

// Strings, not functions: tsx would wrap a function's inner names in helpers the page does not have.
/** How many lines the text of the elements matching a selector takes, each: distinct tops of its line boxes. */
const LINES_OF = (selector: string) => `[...document.querySelectorAll(${JSON.stringify(selector)})].map((el) => {
  const range = document.createRange();
  range.selectNodeContents(el);
  return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
})`;
/** The words of the elements matching a selector that are split across two lines. */
const SPLIT_WORDS = (selector: string) => `[...document.querySelectorAll(${JSON.stringify(selector)})].flatMap((el) => {
  const split = [];
  const texts = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let text = texts.nextNode(); text; text = texts.nextNode()) {
    for (const match of text.data.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(text, match.index);
      range.setEnd(text, match.index + match[0].length);
      if (new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1) split.push(match[0]);
    }
  }
  return split;
})`;

test('a narrow timeline keeps its view range on one line and breaks range facts between words', { skip }, async () => {
  const [rangeLines] = (await panel.page.evaluate(LINES_OF('.range-label'))) as number[];
  assert.equal(rangeLines, 1, 'the view range on one line');
  // A drag along the time axis over the whole trace selects it, as a person selects a range.
  const box = await panel.page.evaluate(() => {
    const { view } = (window as any).collectiveProfilerTimeline;
    const canvas = view.canvas.getBoundingClientRect();
    return {
      left: canvas.left + view.labelWidthPx / view.dpr + 2,
      right: canvas.right - 2,
      y: canvas.top + view.axisHeightPx / view.dpr / 2,
    };
  });
  await panel.page.mouse.move(box.left, box.y);
  await panel.page.mouse.down();
  await panel.page.mouse.move(box.right, box.y, { steps: 6 });
  await panel.page.mouse.up();
  await panel.page.waitForSelector('.range-stats dd');
  // Wherever a line fills up: the section's width is stepped through a range of widths, as panels and fonts vary,
  // since at any one width a line can happen to end at a space.
  let wrapped = 0;
  const split: string[] = [];
  for (let widthPx = 200; widthPx <= 340; widthPx += 5) {
    await panel.page.evaluate((w) => {
      const section = document.querySelector('.range-stats');
      section.style.minWidth = section.style.width = `${w}px`;
    }, widthPx);
    const facts = (await panel.page.evaluate(LINES_OF('.range-stats dd'))) as number[];
    if (facts.some((lines) => lines > 1)) wrapped++;
    const words = (await panel.page.evaluate(SPLIT_WORDS('.range-stats dd'))) as string[];
    split.push(...words.map((word) => `"${word}" at ${widthPx} px`));
  }
  assert.ok(wrapped > 0, 'a fact wraps at these widths, so the test sees how');
  assert.deepEqual(split, [], 'no word of the range statistics is broken across two lines');
  assert.deepEqual(panel.errors(), []);
});

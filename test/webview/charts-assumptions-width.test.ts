// The Assumptions card at half width (issue 14, the e2e screenshots of session 13): the model select of a profile
// whose config.json names "meta-llama/Llama-2-7b-hf" showed "meta-llama/Ll", its column held to 120-220 px beside
// the long labels. Each control must be at least as wide as it is when laid out on its own, which for a select is
// the width of its longest option.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TrainingAssumptions } from '../../src/protocol';
import { chromiumMissing, openPanel, type PanelPage } from './harness';

const skip = chromiumMissing();
const panels: PanelPage[] = [];
after(async () => {
  for (const panel of panels) await panel.close();
});

const ASSUMPTIONS: TrainingAssumptions = {
  command: 'profile',
  config: 'ds_config.json',
  fields: [
    {
      key: 'model',
      value: 'meta-llama/Llama-2-7b-hf',
      origin: 'config',
      choices: ['llama-2-7b', 'llama-2-13b', 'llama-2-70b'],
    },
    { key: 'sequenceLength', value: 4096, origin: 'default' },
    { key: 'microBatchSize', value: 8, origin: 'config' },
    { key: 'computeEfficiencyPct', value: 45, origin: 'default' },
    { key: 'bucketMiB', value: 953.674, origin: 'config' },
  ],
  others: ['world size 8 (train batch ÷ micro-batch ÷ accumulation steps)'],
};

// A string, not a function: tsx would wrap a function's inner names in helpers the page does not have.
/** Each control's width in the card and on its own (a clone outside the card, so its intrinsic width). */
const WIDTHS = `[...document.querySelectorAll('.assumption-fields select, .assumption-fields input')].map((c) => {
  const alone = c.cloneNode(true);
  alone.style.position = 'absolute';
  document.body.append(alone);
  const free = alone.getBoundingClientRect().width;
  alone.remove();
  return { id: c.id, shown: c.getBoundingClientRect().width, free };
})`;

// Half of a 1,400 px window beside an editor, and the narrowest a card of the charts grid gets.
for (const width of [700, 500]) {
  test(`at ${width} px the model select shows its whole name, and every control fits its value`, { skip }, async () => {
    const panel = await openPanel('charts', { width, height: 700 });
    panels.push(panel);
    await panel.send({ type: 'charts', data: { title: 'ds_config.json: 13.65 s per step', assumptions: ASSUMPTIONS } });
    await panel.page.waitForSelector('section.assumptions');
    const widths = (await panel.page.evaluate(WIDTHS)) as { id: string; shown: number; free: number }[];
    assert.equal(widths.length, 5);
    for (const { id, shown, free } of widths) assert.ok(shown >= free - 0.5, `${id}: ${shown} px shown of ${free} px`);
    // The card itself still fits the panel: nothing scrolls sideways.
    const overflow = (await panel.page.evaluate(
      `(() => { const c = document.querySelector('section.assumptions'); return c.scrollWidth - c.clientWidth; })()`,
    )) as number;
    assert.ok(overflow <= 0, `the card overflows by ${overflow} px`);
  });
}

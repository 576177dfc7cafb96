// The charts panel's Assumptions card in Chromium, driven by keyboard and mouse: it shows what the profile
// assumed and where each value came from, sends only the edited values to the host, refuses an out-of-range value
// without sending anything, and shows the host's error when the re-run fails.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTrainingConfig } from '../../src/config/training-config';
import { assembleTrainingRun } from '../../src/config/training-run';
import { MODEL_PRESETS } from '../../src/config/model-presets';
import { trainingAssumptions } from '../../src/extension/glue/training-assumptions';
import { chromiumMissing, openPanel, type PanelPage } from './harness';

const skip = chromiumMissing();
let panel: PanelPage;

before(async () => {
  if (skip) return;
  panel = await openPanel('charts', { width: 1000, height: 700 });
  const file = join(import.meta.dirname, '..', '..', 'examples', 'ds_config.json');
  const run = assembleTrainingRun([readTrainingConfig(readFileSync(file, 'utf8'), file).part]);
  await panel.send({
    type: 'charts',
    data: {
      title: 'ds_config.json: 1.2 s per step',
      assumptions: {
        ...trainingAssumptions(run, 'profile', 'ds_config.json', {}, MODEL_PRESETS),
        configUri: 'file:///work/examples/ds_config.json',
      },
    },
  });
  await panel.page.waitForSelector('section.assumptions');
});
after(async () => {
  await panel?.close();
});

async function rerunMessages(): Promise<unknown[]> {
  return (await panel.posted()).filter((m) => (m as { type: string }).type === 'rerunTraining');
}

test('the card lists each value with where it came from, and the other defaults', { skip }, async () => {
  const card = panel.page.locator('section.assumptions');
  assert.equal(await card.locator('#assumption-sequenceLength').inputValue(), '4096');
  assert.equal(await card.locator('#assumption-model').inputValue(), 'llama-2-7b');
  assert.equal(await card.locator('#assumption-microBatchSize').inputValue(), '4');
  const origins = await card.locator('.origin').allInnerTexts();
  assert.deepEqual(origins, ['assumed', 'assumed', 'from the config', 'assumed', 'from the config']);
  assert.match(await card.innerText(), /Also assumed[\s\S]*world size 16/);
  assert.ok(!/--system|--model/.test(await card.innerText()), 'no CLI flag is advised in the panel');
});

test('an out-of-range value is refused in the card and nothing is sent', { skip }, async () => {
  await panel.page.fill('#assumption-computeEfficiencyPct', '250');
  await panel.page.click('section.assumptions button.rerun');
  assert.match(await panel.page.locator('.assumption-status').innerText(), /between 0.1 and 100/);
  assert.deepEqual(await rerunMessages(), []);
  await panel.page.fill('#assumption-computeEfficiencyPct', '45');
});

test(
  'an edited value and a picked model re-run with only those changes; a failure shows in the card',
  { skip },
  async () => {
    await panel.page.fill('#assumption-sequenceLength', '2048');
    await panel.page.selectOption('#assumption-model', 'gpt2');
    await panel.page.press('#assumption-sequenceLength', 'Enter');
    assert.deepEqual(await rerunMessages(), [
      { type: 'rerunTraining', changes: { model: 'gpt2', sequenceLength: 2048 } },
    ]);
    assert.ok(
      await panel.page.locator('section.assumptions button.rerun').isDisabled(),
      'no second run while one runs',
    );
    mkdirSync('test-results', { recursive: true });
    await panel.page.screenshot({ path: 'test-results/charts-assumptions.png' });
    await panel.send({ type: 'error', message: 'global batch 512 ≠ micro-batch 3 × accumulation 8 × 16 GPUs = 384' });
    assert.match(await panel.page.locator('.assumption-status').innerText(), /global batch 512/);
    assert.ok(!(await panel.page.locator('section.assumptions button.rerun').isDisabled()), 'the user can try again');
    assert.deepEqual(await panel.cspViolations(), []);
    assert.deepEqual(panel.errors(), []);
  },
);

test(
  'after a reload of the page the card is drawn from the saved state and its Re-run still asks the host',
  { skip },
  async () => {
    await panel.reload();
    // Nothing is sent after the reload: the page draws what it saved, the config's URI included.
    await panel.page.waitForSelector('section.assumptions');
    const saved = (await panel.page.evaluate('window.__state')) as { data?: { assumptions?: { configUri?: string } } };
    assert.equal(saved.data?.assumptions?.configUri, 'file:///work/examples/ds_config.json');
    assert.equal(await panel.page.locator('#assumption-sequenceLength').inputValue(), '4096');
    const before = (await rerunMessages()).length;
    await panel.page.fill('#assumption-microBatchSize', '2');
    await panel.page.click('section.assumptions button.rerun');
    const sent = await rerunMessages();
    assert.deepEqual(sent.slice(before), [{ type: 'rerunTraining', changes: { microBatchSize: 2 } }]);
    assert.deepEqual(await panel.cspViolations(), []);
  },
);

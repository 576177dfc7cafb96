// The panels in headless Chromium with a translated table, as the host builds it from vscode.l10n for another
// display language: the toolbar drawn at load, the messages and the labels drawn from data all come from the table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { webviewStrings } from '../../src/extension/glue/webview-strings';
import { englishL10n } from '../../src/extension/glue/l10n';
import { presetSystem, simulateCollective, sweepAllReduce, resolveSystem, asBytes } from '../../src/engine/index';
import { chromiumMissing, openPanel } from './harness';
declare const document: any;

const skip = chromiumMissing();

/** A pseudo-translation: every template wrapped in «», its placeholders kept, as a translator's bundle would. */
const translated = webviewStrings({ t: (message, ...args) => englishL10n.t(`«${message}»`, ...args) });

test('the timeline labels its toolbar, messages and details from the page table', { skip }, async () => {
  const panel = await openPanel('timeline', undefined, undefined, translated);
  try {
    const shown = await panel.page.evaluate(() => ({
      title: document.querySelector('.toolbar .title').textContent,
      placeholder: document.querySelector('.filter').getAttribute('placeholder'),
      reset: document.querySelector('vscode-button').textContent,
      message: document.querySelector('.message').textContent,
    }));
    assert.deepEqual(shown, {
      title: '«Trace timeline»',
      placeholder: '«Search spans (name, phase, lane)»',
      reset: '«Reset zoom»',
      message: '«Waiting for a trace…»',
    });
    const spec = presetSystem('dgx-h100', { nodes: 1 })!;
    const trace = simulateCollective(spec, { bytes: asBytes(2 ** 20), algorithm: 'ring', trace: true }).trace!;
    await panel.send({ type: 'traceBegin', metadata: trace.metadata, lanes: trace.lanes, totalSpans: 10 });
    assert.equal(
      await panel.page.evaluate(() => document.querySelector('.message').textContent),
      '«Receiving 10 spans…»',
    );
    await panel.send({ type: 'trace', trace });
    await panel.page.waitForFunction(() => document.querySelector('.range-label').textContent.includes('«'));
    assert.match(
      await panel.page.evaluate(() => document.querySelector('.range-label').textContent),
      /^«.+ – .+ of .+»$/,
    );
    assert.deepEqual(panel.errors(), []);
  } finally {
    await panel.close();
  }
});

test('the charts and topology panels take their titles and axis labels from the page table', { skip }, async () => {
  const charts = await openPanel('charts', undefined, undefined, translated);
  try {
    const system = resolveSystem(presetSystem('dgx-h100', { nodes: 1 })!);
    const rows = sweepAllReduce(system, { minBytes: asBytes(1024), maxBytes: asBytes(2 ** 24), factor: 2 });
    await charts.send({ type: 'charts', data: { title: '', sweeps: [{ label: 'auto', rows }] } });
    await charts.page.waitForSelector('[data-chart="busbw"] h2');
    const shown = await charts.page.evaluate(() => ({
      title: document.querySelector('.toolbar .title').textContent,
      card: document.querySelector('[data-chart="busbw"] h2').textContent,
    }));
    assert.deepEqual(shown, { title: '«Collective charts»', card: '«Bus bandwidth vs message size»' });
  } finally {
    await charts.close();
  }
  const topology = await openPanel('topology', undefined, undefined, translated);
  try {
    assert.equal(
      await topology.page.evaluate(() => document.querySelector('.message').textContent),
      '«Waiting for a topology…»',
    );
  } finally {
    await topology.close();
  }
});

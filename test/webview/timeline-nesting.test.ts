// The timeline reads like Perfetto/Nsight in Chromium: a collective is drawn above its phases on its own track,
// a CPU stack nests level by level, forward and backward compute have their own colours, and the legend names
// every colour on screen.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DARK_THEME, chromiumMissing, openPanel, rgb, type PanelPage } from './harness';
import { asBytes, asMicros, TraceBuilder, type Phase, type Trace } from '../../src/engine/index';
// Callbacks passed to page.evaluate run in the browser; these names exist there, not in Node's typings.
declare const window: any;
declare const document: any;
declare const requestAnimationFrame: any;

const skip = chromiumMissing();
let panel: PanelPage;

/** One rank of a training step: forward, backward and optimizer; a bucket's AllReduce with its phases; a CPU stack. */
function stepTrace(): Trace {
  const builder = new TraceBuilder({ origin: 'simulated', title: 'nested step', ranks: 1 });
  const compute = builder.lane('stream', 'rank 0 · compute', { rank: 0, node: 0 });
  const comm = builder.lane('stream', 'rank 0 · communication', { rank: 0, node: 0 });
  const cpu = builder.lane('stream', 'rank 0 · CPU', { rank: 0, node: 0 });
  const add = (lane: number, phase: Phase, name: string, startUs: number, endUs: number): number =>
    builder.add({
      lane,
      rank: 0,
      phase,
      name,
      step: -1,
      channel: 0,
      chunk: 0,
      bytes: asBytes(0),
      links: [],
      startUs: asMicros(startUs),
      endUs: asMicros(endUs),
    });
  add(compute, 'compute', 'forward', 0, 40);
  add(compute, 'compute', 'backward', 40, 100);
  add(compute, 'optimizer', 'optimizer step', 100, 120);
  add(comm, 'collective', 'allreduce bucket 0', 60, 90);
  add(comm, 'exchange', 'exchange · bucket 0', 60, 75);
  add(comm, 'reduce', 'reduce · bucket 0', 75, 80);
  add(comm, 'broadcast', 'broadcast · bucket 0', 80, 90);
  add(cpu, 'other', 'train_step', 0, 120);
  add(cpu, 'other', 'aten::linear', 10, 50);
  add(cpu, 'compute', 'aten::addmm', 20, 30);
  return builder.build();
}

before(async () => {
  if (skip) return;
  panel = await openPanel('timeline');
  await panel.send({ type: 'trace', trace: stepTrace(), source: { uri: 'untitled:nested', label: 'nested' } });
  await panel.page.waitForFunction(() => window.collectiveProfilerTimeline.view.model?.spanCount === 10);
  await panel.page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
});
after(async () => {
  await panel?.close();
});

/** The colour drawn at (row, time µs), two pixels below the track's top: span names are written across the middle. */
async function pixel(row: number, timeUs: number): Promise<number[]> {
  return panel.page.evaluate(
    ([row, timeUs]) => {
      const { view } = window.collectiveProfilerTimeline;
      const x = Math.round(view.scale().timeToPx(timeUs));
      const y = Math.round(view.rowTopPx(row) + 2 * view.dpr);
      return [...view.canvas.getContext('2d').getImageData(x, y, 1, 1).data.slice(0, 3)];
    },
    [row, timeUs],
  );
}

test('each lane draws its nested spans one track deeper, labelled once', { skip }, async () => {
  const rows = await panel.page.evaluate(() =>
    window.collectiveProfilerTimeline.view.model.rows.map((l: any) => `${l.label}@${l.depth ?? 0}`),
  );
  assert.deepEqual(rows, [
    'rank 0 · compute@0',
    'rank 0 · communication@0',
    'rank 0 · communication@1',
    'rank 0 · CPU@0',
    'rank 0 · CPU@1',
    'rank 0 · CPU@2',
  ]);
  const hex = (name: string): number[] => rgb(DARK_THEME[name]);
  // The collective fills its track; below it, its exchange, reduce and broadcast in order.
  assert.deepEqual(await pixel(1, 70), hex('--vscode-charts-yellow'));
  assert.deepEqual(await pixel(2, 67), hex('--vscode-charts-blue'));
  assert.deepEqual(await pixel(2, 77), hex('--vscode-charts-orange'));
  assert.deepEqual(await pixel(2, 85), hex('--vscode-charts-green'));
  // The CPU stack: train_step, then aten::linear inside it, then aten::addmm inside that.
  assert.deepEqual(await pixel(5, 25), hex('--vscode-charts-purple'));
  assert.notDeepEqual(await pixel(5, 60), hex('--vscode-charts-purple'), 'nothing at depth 2 after addmm');
  // Hovering the third CPU track finds the innermost op.
  const box = (await panel.page.locator('canvas.lanes').boundingBox())!;
  const [x, y] = await panel.page.evaluate(() => {
    const { view } = window.collectiveProfilerTimeline;
    return [view.scale().timeToPx(25) / view.dpr, (view.rowTopPx(5) + 0.5 * view.rowHeightPx) / view.dpr];
  });
  await panel.page.mouse.move(box.x + x, box.y + y);
  await panel.page.waitForSelector('.tooltip:not([hidden])');
  assert.match(await panel.page.locator('.tooltip .name').innerText(), /^aten::addmm$/);
});

test('forward and backward have their own colours, and the legend names every colour drawn', { skip }, async () => {
  const forward = await pixel(0, 20);
  const backward = await pixel(0, 70);
  const optimizer = await pixel(0, 110);
  assert.deepEqual(forward, rgb(DARK_THEME['--vscode-charts-purple']));
  assert.deepEqual(optimizer, rgb(DARK_THEME['--vscode-charts-red']));
  assert.notDeepEqual(backward, forward, 'backward is not drawn in the forward colour');
  const legend = (await panel.page.evaluate(() =>
    [...document.querySelectorAll('.timeline-legend .legend-item')].map((item: any) => ({
      key: item.dataset.key,
      text: item.textContent,
      colour: getComputedStyle(item.querySelector('.swatch')).backgroundColor,
    })),
  )) as { key: string; text: string; colour: string }[];
  assert.deepEqual(
    legend.map((l) => l.key),
    ['exchange', 'reduce', 'broadcast', 'compute', 'collective', 'optimizer', 'other', 'backward'],
  );
  // Each swatch is the colour the lanes are drawn in.
  const css = (colour: number[]): string => `rgb(${colour.join(', ')})`;
  assert.equal(legend.find((l) => l.key === 'backward')?.colour, css(backward));
  assert.equal(legend.find((l) => l.key === 'compute')?.colour, css(forward));
  assert.match(legend.find((l) => l.key === 'compute')?.text ?? '', /forward/);
  assert.deepEqual(await panel.cspViolations(), []);
});

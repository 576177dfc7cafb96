// The timeline bundle in headless Chromium: a trace renders with the phase colours in the right lanes, pan and
// zoom change the view, hover and click show a span's details, and a range selection reports busbw.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DARK_THEME, chromiumMissing, openPanel, rgb, type PanelPage } from './harness';
import { COMPUTE_US, STEP_US, expectedPhaseAt, handBuiltTrace } from './fixtures';
import { PHASES, presetSystem, simulateCollective, asMicros, asBytes } from '../../src/engine/index';
import { traceMessages } from '../../src/extension/glue/trace-chunks';
// Callbacks passed to page.evaluate run in the browser; these names exist there, not in Node's typings.
declare const window: any;
declare const document: any;
declare const requestAnimationFrame: any;

const skip = chromiumMissing();
let panel: PanelPage;
const PHASE_HEX: Record<string, string> = {
  exchange: DARK_THEME['--vscode-charts-blue'],
  reduce: DARK_THEME['--vscode-charts-orange'],
  broadcast: DARK_THEME['--vscode-charts-green'],
  compute: DARK_THEME['--vscode-charts-purple'],
  // The hand-built trace's compute spans are named "backward", which the timeline draws apart from forward compute.
  backward: DARK_THEME['--vscode-terminal-ansiCyan'] ?? '#11a8cd',
};

before(async () => {
  if (skip) return;
  panel = await openPanel('timeline');
  await panel.send({ type: 'trace', trace: handBuiltTrace(), source: { uri: 'untitled:test', label: 'test' } });
  await panel.page.waitForFunction(() => !document.querySelector('.message:not([hidden])'));
  await frame();
});
after(async () => {
  await panel?.close();
});

/** Waits until the view has drawn a frame after the last change. */
async function frame(): Promise<void> {
  await panel.page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
}

/**
 * The most frequent colour in a 7-pixel-wide strip of the row at each time: the span's fill, even where a
 * span's name is drawn over it. One round trip for all points keeps the test fast.
 */
async function pixelsAt(points: readonly (readonly [number, number])[]): Promise<[number, number, number][]> {
  return panel.page.evaluate(
    (points) => {
      const { view } = (window as any).collectiveProfilerTimeline;
      const ctx = view.canvas.getContext('2d');
      return points.map(([row, timeUs]) => {
        const x = Math.round(view.scale().timeToPx(view.model.startUs + timeUs));
        const top = Math.round(view.rowTopPx(row));
        const data = ctx.getImageData(x - 3, top + 1, 7, view.rowHeightPx - 2).data;
        const counts = new Map<string, number>();
        for (let i = 0; i < data.length; i += 4) {
          const key = `${data[i]},${data[i + 1]},${data[i + 2]}`;
          counts.set(key, (counts.get(key) ?? 0) + 1);
        }
        return [...counts.entries()]
          .sort((a, b) => b[1] - a[1])[0][0]
          .split(',')
          .map(Number);
      });
    },
    points as [number, number][],
  ) as Promise<[number, number, number][]>;
}

async function pixelAt(row: number, timeUs: number): Promise<[number, number, number]> {
  return (await pixelsAt([[row, timeUs]]))[0];
}

async function rows(): Promise<{ label: string; kind: string }[]> {
  return panel.page.evaluate(() =>
    (window as any).collectiveProfilerTimeline.view.model.rows.map((l: any) => ({ label: l.label, kind: l.kind })),
  );
}

test('a trace renders with each phase colour in the right lanes', { skip }, async () => {
  const laneRows = await rows();
  assert.deepEqual(
    laneRows.map((r) => r.label),
    [
      'node 0 · rank 0',
      'node 0 · rank 1',
      'gpu0->gpu1',
      'gpu1->gpu2',
      'node 1 · rank 2',
      'node 1 · rank 3',
      'gpu2->gpu3',
      'gpu3->gpu0',
    ],
  );
  const points: [number, number][] = [];
  const expected: string[] = [];
  for (let row = 0; row < laneRows.length; row++) {
    for (let timeUs = 5; timeUs < COMPUTE_US + 6 * STEP_US; timeUs += 5) {
      let phase = expectedPhaseAt(timeUs);
      if (laneRows[row].kind === 'link' && (phase === 'compute' || phase === 'reduce')) phase = undefined;
      if (phase === undefined || (timeUs - COMPUTE_US) % STEP_US === 0 || (timeUs - COMPUTE_US) % STEP_US === 20)
        continue;
      points.push([row, timeUs]);
      expected.push(phase === 'compute' ? 'backward' : phase);
    }
    // After the last step every lane is idle.
    points.push([row, COMPUTE_US + 6 * STEP_US - 3]);
    expected.push('idle');
  }
  const colours = await pixelsAt(points);
  const phaseOf = (colour: number[]): string =>
    Object.entries(PHASE_HEX).find(([, hex]) => rgb(hex).join() === colour.join())?.[0] ?? 'idle';
  colours.forEach((colour, i) => {
    assert.equal(
      phaseOf(colour),
      expected[i],
      `${laneRows[points[i][0]].label} at ${points[i][1]} µs is ${colour.join()}`,
    );
  });
  const checked = colours.length;
  assert.ok(checked > 100, `checked ${checked} pixels`);
  assert.deepEqual(await panel.cspViolations(), []);
});

test('pan and zoom change the pixels and the time range label', { skip }, async () => {
  const snapshot = () =>
    panel.page.evaluate(() => ({
      label: document.querySelector('.range-label')!.textContent,
      pixels: document.querySelector('canvas.lanes').toDataURL(),
    }));
  const initial = await snapshot();
  assert.match(initial.label ?? '', /^0\.00 µs – 220 µs of 220 µs$/);
  const box = (await panel.page.locator('canvas.lanes').boundingBox())!;
  // ctrl+wheel zooms around the pointer.
  await panel.page.mouse.move(box.x + box.width * 0.6, box.y + 60);
  await panel.page.keyboard.down('Control');
  await panel.page.mouse.wheel(0, -400);
  await panel.page.keyboard.up('Control');
  await frame();
  const zoomed = await snapshot();
  assert.notEqual(zoomed.label, initial.label);
  assert.notEqual(zoomed.pixels, initial.pixels);
  // W zooms further in, D pans right, and a drag pans back left.
  await panel.page.locator('canvas.lanes').focus();
  for (const key of ['w', 'w', 'd']) await panel.page.keyboard.press(key);
  await frame();
  const keyed = await snapshot();
  assert.notEqual(keyed.label, zoomed.label);
  assert.notEqual(keyed.pixels, zoomed.pixels);
  const [startBefore] = await panel.page.evaluate(() => [(window as any).collectiveProfilerTimeline.view.view.startUs]);
  await panel.page.mouse.move(box.x + 400, box.y + 80);
  await panel.page.mouse.down();
  await panel.page.mouse.move(box.x + 600, box.y + 80, { steps: 5 });
  await panel.page.mouse.up();
  await frame();
  const [startAfter] = await panel.page.evaluate(() => [(window as any).collectiveProfilerTimeline.view.view.startUs]);
  assert.ok(startAfter < startBefore, `dragging right moves the view earlier (${startBefore} → ${startAfter})`);
  assert.notEqual((await snapshot()).pixels, keyed.pixels);
  // S zooms back out to the whole trace, where the view clamps.
  for (let i = 0; i < 30; i++) await panel.page.keyboard.press('s');
  await frame();
  assert.equal((await snapshot()).label, initial.label);
  const state = await panel.page.evaluate(() => (window as any).__state);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(
    (await panel.page.evaluate(() => (window as any).__state)).panel,
    'timeline',
    `state saved (${JSON.stringify(state)})`,
  );
});

/** Moves the pointer over the centre of (row, time) in page coordinates. */
async function pointAt(row: number, timeUs: number): Promise<{ x: number; y: number }> {
  const box = (await panel.page.locator('canvas.lanes').boundingBox())!;
  const [x, y] = await panel.page.evaluate(
    ([row, timeUs]) => {
      const { view } = (window as any).collectiveProfilerTimeline;
      return [
        view.scale().timeToPx(view.model.startUs + timeUs) / view.dpr,
        (view.rowTopPx(row) + view.rowHeightPx / 2) / view.dpr,
      ];
    },
    [row, timeUs],
  );
  return { x: box.x + x, y: box.y + y };
}

test('hovering a span shows its name, phase, bytes, link, bandwidth, step and channel', { skip }, async () => {
  const at = await pointAt(1, COMPUTE_US + STEP_US + 10);
  await panel.page.mouse.move(at.x, at.y);
  await panel.page.waitForSelector('.tooltip:not([hidden])');
  const text = await panel.page.locator('.tooltip').innerText();
  for (const fact of [
    'ring step 1 · rank 1',
    'exchange',
    '8 MiB',
    'gpu1->gpu2',
    'GB/s',
    'step\n1',
    'channel\n0',
    'node 0 · rank 1',
  ]) {
    assert.ok(text.includes(fact), `tooltip has "${fact}":\n${text}`);
  }
  await panel.page.mouse.move(at.x, 2);
  await panel.page.waitForSelector('.tooltip[hidden]', { state: 'attached' });
});

test('clicking a span selects it, shows details and tells the host, which opens its source', { skip }, async () => {
  const at = await pointAt(4, 20);
  await panel.page.mouse.click(at.x, at.y);
  await panel.page.waitForSelector('.span-details');
  const details = await panel.page.locator('.span-details').innerText();
  assert.match(details, /backward/);
  assert.match(details, /\/work\/train\.py:12/);
  const posted = (await panel.posted()) as { type: string }[];
  assert.deepEqual(posted.filter((m) => m.type === 'selectSpan').at(-1), { type: 'selectSpan', spanIndex: 2 * 16 });
  // One message per click: the host opens the source from selectSpan, so the panel does not ask twice.
  assert.equal(posted.filter((m) => m.type === 'openSource').length, 0);
  // The source link in the details asks for the line explicitly.
  await panel.page.locator('.span-details a.source').click();
  assert.deepEqual(((await panel.posted()) as { type: string }[]).filter((m) => m.type === 'openSource').at(-1), {
    type: 'openSource',
    file: '/work/train.py',
    line: 12,
  });
});

test('shift+drag selects a range and shows its busbw and phase shares', { skip }, async () => {
  const from = await pointAt(0, COMPUTE_US);
  const to = await pointAt(0, COMPUTE_US + 3 * STEP_US);
  await panel.page.keyboard.down('Shift');
  await panel.page.mouse.move(from.x, from.y);
  await panel.page.mouse.down();
  await panel.page.mouse.move(to.x, to.y, { steps: 4 });
  await panel.page.mouse.up();
  await panel.page.keyboard.up('Shift');
  await panel.page.waitForSelector('.range-stats');
  const text = await panel.page.locator('.range-stats').innerText();
  // The reduce-scatter half: each rank sends 3 × 8 MiB in 90 µs, i.e. about 280 GB/s per rank; 2/3 of it exchanging.
  const busbw = Number(/busbw\s+([\d.]+) GB\/s per rank over 4 ranks/.exec(text)?.[1]);
  const expected = (3 * 8 * 1024 * 1024) / (3 * STEP_US * 1e3);
  assert.ok(Math.abs(busbw - expected) / expected < 0.05, `busbw ${busbw} ≈ ${expected.toFixed(1)}:\n${text}`);
  assert.match(text, /exchange\s+6\d\.\d %/);
  assert.match(text, /reduce\s+3\d\.\d %/);
  const range = await panel.page.evaluate(() => (window as any).collectiveProfilerTimeline.view.range);
  assert.ok(
    Math.abs(range.startUs - COMPUTE_US) < 2 && Math.abs(range.endUs - (COMPUTE_US + 90)) < 2,
    JSON.stringify(range),
  );
  assert.match(text, /range\s+(8[89]|9[0-2])(\.\d+)? µs/);
});

test('a reveal from the host (the spans of a source line) moves the view to its range', { skip }, async () => {
  await panel.send({ type: 'reveal', startUs: asMicros(55), endUs: asMicros(95) });
  await frame();
  const shown = await panel.page.evaluate(() => ({
    view: (window as any).collectiveProfilerTimeline.view.view,
    label: document.querySelector('.range-label')!.textContent,
  }));
  assert.deepEqual(shown.view, { startUs: 55, endUs: 95 });
  assert.match(shown.label ?? '', /^55\.0 µs – 95\.0 µs of 220 µs$/);
  // The first exchange (50-70 µs on rank 0) now spans about half the plot.
  const [left, right] = await panel.page.evaluate(() => {
    const { view } = (window as any).collectiveProfilerTimeline;
    return [view.scale().timeToPx(55), view.scale().timeToPx(95)];
  });
  assert.ok(right - left > 500, `40 µs fill ${right - left} px`);
  await panel.send({ type: 'reveal', startUs: asMicros(0), endUs: asMicros(220) });
});

test('the search box dims spans that do not match and counts the matches', { skip }, async () => {
  await panel.page.locator('canvas.lanes').focus();
  await panel.page.keyboard.press('Escape');
  await panel.page.waitForSelector('.range-stats', { state: 'detached' });
  await panel.page.locator('vscode-textfield.filter input').fill('reduce');
  await panel.page.waitForFunction(() => /match/.test(document.querySelector('.match-count')!.textContent ?? ''));
  assert.equal(await panel.page.locator('.match-count').textContent(), '12 matches');
  await frame();
  assert.deepEqual(await pixelAt(0, COMPUTE_US + 25), rgb(DARK_THEME['--vscode-charts-orange']));
  assert.notDeepEqual(await pixelAt(0, COMPUTE_US + 10), rgb(DARK_THEME['--vscode-charts-blue']), 'exchange is dimmed');
  await panel.page.locator('vscode-textfield.filter input').fill('');
  await panel.page.waitForFunction(() => document.querySelector('.match-count')!.textContent === '');
  assert.deepEqual(PHASES.slice(0, 3), ['exchange', 'reduce', 'broadcast']);
  assert.deepEqual(await panel.cspViolations(), []);
});

test(
  'a ring AllReduce simulated by the engine renders each span in its phase colour on its lane',
  { skip },
  async () => {
    const result = simulateCollective(presetSystem('dgx-a100')!, {
      bytes: asBytes(256 * 1024 * 1024),
      algorithm: 'ring',
      protocol: 'Simple',
      trace: true,
    });
    await panel.send({ type: 'trace', trace: result.trace!, source: { uri: 'untitled:ring', label: 'ring' } });
    await panel.page.waitForFunction(
      (n) => (window as any).collectiveProfilerTimeline.view.model?.spanCount === n,
      result.trace!.spans.length,
    );
    await frame();
    // Spans that no other span on their row overlaps, wide enough to sample: their centre must show their phase.
    const samples = (await panel.page.evaluate(() => {
      const { view } = (window as any).collectiveProfilerTimeline;
      const { model } = view;
      const scale = view.scale();
      const out: [number, number, number][] = [];
      for (let row = 0; row < model.rows.length; row++) {
        if (view.rowTopPx(row) + view.rowHeightPx > view.canvas.height) continue;
        const from = model.rowOffsets[row];
        const to = model.rowOffsets[row + 1];
        for (let i = from; i < to; i++) {
          const alone =
            (i === from || model.end[i - 1] <= model.start[i]) && (i + 1 === to || model.start[i + 1] >= model.end[i]);
          if (alone && scale.timeToPx(model.end[i]) - scale.timeToPx(model.start[i]) >= 12)
            out.push([row, (model.start[i] + model.end[i]) / 2 - model.startUs, model.phase[i]]);
        }
      }
      return out;
    })) as [number, number, number][];
    assert.ok(samples.length >= 20, `found ${samples.length} isolated spans to check`);
    const colours = await pixelsAt(samples.map(([row, timeUs]) => [row, timeUs] as const));
    const phaseRows = new Set<string>();
    samples.forEach(([row, timeUs, phase], i) => {
      const name = PHASES[phase];
      assert.deepEqual(colours[i], rgb(PHASE_HEX[name]), `row ${row} at ${timeUs.toFixed(1)} µs should be ${name}`);
      phaseRows.add(name);
    });
    assert.ok(phaseRows.has('exchange') && phaseRows.has('reduce'), `phases seen: ${[...phaseRows].join(', ')}`);
  },
);

test('a trace streamed in chunks by the host shows once its last chunk arrives', { skip }, async () => {
  const trace = handBuiltTrace();
  const messages = traceMessages(trace, { uri: 'untitled:chunks', label: 'chunks' }, 7);
  assert.ok(messages.length > 5 && messages[0].type === 'traceBegin');
  for (const message of messages.slice(0, -1)) await panel.send(message);
  assert.match((await panel.page.locator('.message').textContent()) ?? '', /Receiving spans… \d+ of 64/);
  await panel.send(messages.at(-1)!);
  await panel.page.waitForFunction(
    () => (window as any).collectiveProfilerTimeline.view.model.metadata.title === 'hand-built ring AllReduce',
  );
  assert.equal(
    await panel.page.evaluate(() => (window as any).collectiveProfilerTimeline.view.model.spanCount),
    trace.spans.length,
  );
  assert.equal(await panel.page.locator('.message').isHidden(), true);
  await frame();
  assert.deepEqual(await pixelAt(0, 20), rgb(PHASE_HEX.backward));
});

test('after a reload the same trace reopens at the saved view, filter and scroll', { skip }, async () => {
  const source = { uri: 'file:///work/run.cptrace.json', label: 'run' };
  await panel.send({ type: 'trace', trace: handBuiltTrace(), source });
  await panel.send({ type: 'reveal', startUs: asMicros(60), endUs: asMicros(120) });
  await panel.page.locator('vscode-textfield.filter input').fill('broadcast');
  await panel.page.waitForFunction(() => /match/.test(document.querySelector('.match-count').textContent ?? ''));
  await panel.page.waitForFunction(() => window.__state?.filter === 'broadcast' && window.__state?.viewStartUs === 60);
  await panel.reload();
  await panel.send({ type: 'trace', trace: handBuiltTrace(), source });
  await panel.page.waitForFunction(() => window.collectiveProfilerTimeline.view.model !== undefined);
  const restored = await panel.page.evaluate(() => ({
    view: window.collectiveProfilerTimeline.view.view,
    matches: document.querySelector('.match-count').textContent,
  }));
  assert.deepEqual(restored, { view: { startUs: 60, endUs: 120 }, matches: '24 matches' });
  // A different trace starts from the whole view.
  await panel.send({ type: 'trace', trace: handBuiltTrace(), source: { uri: 'untitled:other', label: 'other' } });
  assert.deepEqual(await panel.page.evaluate(() => window.collectiveProfilerTimeline.view.view), {
    startUs: 0,
    endUs: 220,
  });
});

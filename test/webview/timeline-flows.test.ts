// Flow arrows, counter tracks and the range aggregate in Chromium: a simulated training step draws an arrow from
// each gradient bucket to its collective (the selected span's arrows in the focus colour, its other ends listed in
// the details), a simulated ring links each rank's step to its peer's and gets busbw and link counters, a real
// Kineto trace links record_param_comms to its NCCL kernels, and a range lists its slices by total and self time.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DARK_THEME, chromiumMissing, openPanel, rgb, type PanelPage } from './harness';
import { asBytes, presetSystem, simulateCollective } from '../../src/engine/index';
import { simulateTrainingStep } from '../../src/engine/training/step';
import { stepTrace } from '../../src/engine/training/step-trace';
import { importMeasurementBytes } from '../../src/native/import/index';
import { ringPrice, toyRun } from '../unit/training/helpers';
// Callbacks passed to page.evaluate run in the browser; these names exist there, not in Node's typings.
declare const window: any;
declare const document: any;
declare const requestAnimationFrame: any;

const skip = chromiumMissing();
const FIXTURES = resolve(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures-real');
let panel: PanelPage;

before(async () => {
  if (skip) return;
  panel = await openPanel('timeline', { width: 1400, height: 900 });
  mkdirSync('test-results', { recursive: true });
});
after(async () => {
  await panel?.close();
});

async function frame(): Promise<void> {
  await panel.page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
}

async function load(trace: unknown, uri: string): Promise<void> {
  const spans = (trace as { spans: unknown[] }).spans.length;
  await panel.send({ type: 'trace', trace: trace as never, source: { uri, label: uri } });
  await panel.page.waitForFunction((n) => window.collectiveProfilerTimeline.view.model?.spanCount === n, spans);
  // Counters are computed in slices after the first paint; the report comes when they are done (or found none).
  await panel.page.waitForFunction(() => window.collectiveProfilerTimeline.counterReport() !== undefined);
  await frame();
}

test('a training step: an arrow from each bucket to its collective, followed from the details', { skip }, async () => {
  const step = simulateTrainingStep(toyRun({}, { nodes: 2 }), { price: ringPrice });
  const trace = stepTrace(step, { ranks: 2, gpusPerNode: 8 });
  await load(trace, 'untitled:step');
  const flows = (await panel.page.evaluate(() => window.collectiveProfilerTimeline.flows())) as [number, number][];
  assert.equal(flows.length, trace.flows!.length);
  assert.ok(flows.length > 0);
  // The step's collectives name their message bytes but no links: one counter, algbw per rank, on its own line.
  const [labels, counterLines] = await panel.page.evaluate(() => {
    const { view, counterLabels } = window.collectiveProfilerTimeline;
    return [counterLabels(), view.layout.scrolling.filter((l: any) => l.kind === 'counter').map((l: any) => l.label)];
  });
  assert.deepEqual(labels, ['algbw per rank (2 ranks)']);
  assert.deepEqual(counterLines, labels);
  // Zoom to the first bucket and its collective, then select the bucket.
  const [from, to] = flows[0];
  await panel.page.evaluate(
    ([f, t]) => {
      const { view } = window.collectiveProfilerTimeline;
      const m = view.model;
      const pad = (m.end[t] - m.start[f]) * 0.3;
      view.setView({ startUs: m.start[f] - pad, endUs: m.end[t] + pad });
    },
    [from, to],
  );
  const box = (await panel.page.locator('canvas.lanes').boundingBox())!;
  const bucket = await panel.page.evaluate((f) => {
    const { view } = window.collectiveProfilerTimeline;
    const m = view.model;
    const x = view.scale().timeToPx((m.start[f] + m.end[f]) / 2) / view.dpr;
    return [x, (view.rowTopPx(m.rowOf(f)) + view.rowHeightPx / 2) / view.dpr];
  }, from);
  await panel.page.mouse.click(box.x + bucket[0], box.y + bucket[1]);
  await frame();
  assert.equal(await panel.page.evaluate(() => window.collectiveProfilerTimeline.view.selected), from);
  // The selected bucket's arrow is drawn in the focus colour through the curve's midpoint.
  const focus = rgb(DARK_THEME['--vscode-focusBorder']);
  const nearFocus = await panel.page.evaluate(
    ([f, t, colour]) => {
      const { view } = window.collectiveProfilerTimeline;
      const m = view.model;
      const s = view.scale();
      const x = Math.round((s.timeToPx(m.end[f]) + s.timeToPx(m.start[t])) / 2);
      const y = Math.round((view.rowTopPx(m.rowOf(f)) + view.rowTopPx(m.rowOf(t)) + view.rowHeightPx) / 2);
      const data = view.canvas.getContext('2d').getImageData(x - 2, y - 2, 5, 5).data;
      let best = Infinity;
      for (let i = 0; i < data.length; i += 4)
        best = Math.min(
          best,
          Math.abs(data[i] - colour[0]) + Math.abs(data[i + 1] - colour[1]) + Math.abs(data[i + 2] - colour[2]),
        );
      return best;
    },
    [from, to, focus] as [number, number, number[]],
  );
  assert.ok(nearFocus < 60, `a focus-coloured pixel at the arrow's midpoint (distance ${nearFocus})`);
  await panel.page.screenshot({ path: 'test-results/timeline-step-flows.png' });
  // The details list the collective at the arrow's other end; following it selects the collective.
  const link = panel.page.locator('.flows a').first();
  assert.match(await link.innerText(), /^allreduce bucket \d+ · .*\(rank 0 · communication\)$/);
  await link.click();
  await frame();
  assert.equal(await panel.page.evaluate(() => window.collectiveProfilerTimeline.view.selected), to);
  assert.match(await panel.page.locator('.flows a').first().innerText(), /^backward · bucket \d+ /);
  // The step nests: step > backward pass > layers on the compute lane.
  const computeTracks = await panel.page.evaluate(() =>
    window.collectiveProfilerTimeline.view.model.rows
      .filter((l: any) => l.label === 'rank 0 · compute')
      .map((l: any) => l.depth ?? 0),
  );
  // (A layer with no FLOPs, the embedding, is a zero-length span at a layer's start: one track deeper still.)
  assert.deepEqual(computeTracks.slice(0, 3), [0, 1, 2]);
});

test('a simulated ring: peer arrows, busbw and link counters, and the range aggregate', { skip }, async () => {
  const result = simulateCollective(presetSystem('dgx-a100')!, {
    bytes: asBytes(256 * 1024 * 1024),
    algorithm: 'ring',
    protocol: 'Simple',
    trace: true,
  });
  const trace = result.trace!;
  await load(trace, 'untitled:ring');
  const flows = (await panel.page.evaluate(() => window.collectiveProfilerTimeline.flows())) as [number, number][];
  assert.ok(flows.length > 0, 'ring steps are linked');
  const ends = await panel.page.evaluate(
    (pairs) => {
      const m = window.collectiveProfilerTimeline.view.model;
      return pairs.map(([f, t]: [number, number]) => {
        const a = m.spanAt(f);
        const b = m.spanAt(t);
        return [a.rank, a.args.peer, a.step, b.rank, b.step, a.channel, b.channel];
      });
    },
    flows.slice(0, 50),
  );
  for (const [rank, peer, step, toRank, toStep, channel, toChannel] of ends) {
    assert.equal(toRank, peer, `rank ${rank}'s step ${step} leads to its peer`);
    assert.equal(toStep, step + 1);
    assert.equal(toChannel, channel);
  }
  const labels = (await panel.page.evaluate(() => window.collectiveProfilerTimeline.counterLabels())) as string[];
  assert.match(labels[0], /^busbw per rank \(8 ranks\)$/);
  assert.ok(
    labels.slice(1).every((l) => /->/.test(l)),
    labels.join(', '),
  );
  // The counter lines draw their area in the exchange colour somewhere along them.
  const exchange = rgb(DARK_THEME['--vscode-charts-blue']);
  const counterLine = await panel.page.evaluate(() => {
    const { view } = window.collectiveProfilerTimeline;
    const all = [...view.layout.pinned, ...view.layout.scrolling];
    return all.findIndex((l: any) => l.kind === 'counter' && l.counter === 0);
  });
  assert.ok(counterLine >= 0, 'the busbw counter has a line');
  const counterPixels = await panel.page.evaluate(
    ([index, colour]) => {
      const { view } = window.collectiveProfilerTimeline;
      const top = Math.round(view.lineTopPx(index));
      const left = view.labelWidthPx;
      const data = view.canvas
        .getContext('2d')
        .getImageData(left, top, view.canvas.width - left, view.rowHeightPx).data;
      let hits = 0;
      for (let i = 0; i < data.length; i += 4)
        if (data[i] === colour[0] && data[i + 1] === colour[1] && data[i + 2] === colour[2]) hits++;
      return hits;
    },
    [counterLine, exchange] as [number, number[]],
  );
  assert.ok(counterPixels > 100, `the busbw area is drawn (${counterPixels} pixels)`);
  // A range over the whole collective lists its slices: every rank's exchange spans by name, longest total first.
  await panel.page.evaluate(() => {
    const { view } = window.collectiveProfilerTimeline;
    view.range = { startUs: view.model.startUs, endUs: view.model.endUs };
  });
  await panel.page.keyboard.press('Escape');
  const box = (await panel.page.locator('canvas.lanes').boundingBox())!;
  await panel.page.keyboard.down('Shift');
  await panel.page.mouse.move(box.x + 175, box.y + 60);
  await panel.page.mouse.down();
  await panel.page.mouse.move(box.x + box.width - 5, box.y + 80, { steps: 4 });
  await panel.page.mouse.up();
  await panel.page.keyboard.up('Shift');
  await panel.page.waitForSelector('.aggregate table');
  const rows = (await panel.page.evaluate(() =>
    [...document.querySelectorAll('.aggregate tr')].slice(1).map((tr: any) => tr.children[0].textContent),
  )) as string[];
  assert.ok(rows.length > 0);
  assert.ok(
    rows.some((name) => /^exchange → rank \d$/.test(name)),
    rows.join(', '),
  );
  await panel.page.screenshot({ path: 'test-results/timeline-ring-counters-aggregate.png' });
  assert.deepEqual(await panel.cspViolations(), []);
});

test('a real Kineto trace: record_param_comms leads to the NCCL kernel it launched', { skip }, async (t) => {
  const name = 'kineto-a100-2rank-nccl2.17-full.json.gz';
  let bytes: Buffer;
  try {
    bytes = readFileSync(resolve(FIXTURES, name));
  } catch {
    t.skip('../shared/fixtures-real is not here');
    return;
  }
  const trace = importMeasurementBytes(bytes, { fileName: name, gunzip: (b) => gunzipSync(b) }).trace!;
  await load(trace, 'untitled:kineto');
  const flows = (await panel.page.evaluate(() => window.collectiveProfilerTimeline.flows())) as [number, number][];
  assert.equal(flows.length, trace.flows!.length);
  assert.equal(flows.length, 21);
  const names = await panel.page.evaluate(([f, t]) => {
    const m = window.collectiveProfilerTimeline.view.model;
    return [m.spanAt(f).name, m.spanAt(t).name];
  }, flows[0]);
  assert.match(names[0], /^record_param_comms /);
  assert.match(names[1], /^allreduce|^allgather|^broadcast|^reducescatter/);
});

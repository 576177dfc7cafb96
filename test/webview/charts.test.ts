// The charts bundle in headless Chromium, fed with what the engine computes: every chart kind draws in the
// theme's colours, measured points overlay the model, and the data is kept in the panel state for a reload.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  ALGORITHMS,
  PROTOCOLS,
  presetSystem,
  runScalingCheck,
  simulateCollective,
  sweepAllReduce,
  EngineError,
  asBytes,
  asGBps,
  asMicros,
} from '../../src/engine/index';
import type { ChartsData } from '../../src/protocol';
import { switchPoints } from '../../webview/charts/series';
import { DARK_THEME, chromiumMissing, openPanel, rgb, type PanelPage } from './harness';
import { syntheticModelNote } from '../../src/extension/glue/training-charts';
declare const window: any;
declare const document: any;

const skip = chromiumMissing();
let panel: PanelPage;
const CALIBRATION = resolve(
  import.meta.dirname,
  '..',
  '..',
  '..',
  'shared',
  'calibration',
  'nccl-tests',
  'a100-8gpu-nvswitch-1node-azure-ndv4.json',
);

let cached: ChartsData | undefined;

/** Engine results for every chart kind; computed once because the multi-node simulations take a moment. */
function chartsData(): ChartsData {
  if (cached) return cached;
  const system = presetSystem('dgx-a100')!;
  const sweep = (algorithm: 'auto' | 'ring' | 'tree') =>
    sweepAllReduce(system, { minBytes: asBytes(1024), maxBytes: asBytes(2 ** 30), algorithm });
  const measured = existsSync(CALIBRATION)
    ? [
        {
          label: 'nccl-tests ND A100 v4',
          points: (
            JSON.parse(readFileSync(CALIBRATION, 'utf8')).rows as {
              bytes: number;
              inplace_busbw_GBps: number;
              inplace_time_us: number;
            }[]
          ).map((r) => ({
            bytes: asBytes(r.bytes),
            busbwGBps: asGBps(r.inplace_busbw_GBps),
            timeUs: asMicros(r.inplace_time_us),
          })),
        },
      ]
    : [
        {
          label: 'synthetic',
          points: sweep('ring').map((r) => ({
            bytes: r.bytes,
            busbwGBps: asGBps(r.busbwGBps * 0.9),
            timeUs: asMicros(r.timeUs / 0.9),
          })),
        },
      ];
  const bytes = asBytes(64 * 1024 * 1024);
  const auto = simulateCollective(system, { bytes });
  const algorithms = ALGORITHMS.flatMap((algorithm) =>
    PROTOCOLS.flatMap((protocol) => {
      try {
        const r = simulateCollective(system, { bytes, algorithm, protocol });
        return [
          {
            algorithm,
            protocol,
            timeUs: r.timeUs,
            busbwGBps: r.busbwGBps,
            chosen: algorithm === auto.algorithm && protocol === auto.protocol,
          },
        ];
      } catch (error) {
        if (error instanceof EngineError) return [];
        throw error;
      }
    }),
  );
  const phases = [4, 16, 64, 256].map((mib) => {
    const r = simulateCollective(system, { bytes: asBytes(mib * 2 ** 20) });
    return {
      label: `${mib} MiB`,
      bytes: asBytes(mib * 2 ** 20),
      exchangeUs: r.phases.exchange,
      reduceUs: r.phases.reduce,
      broadcastUs: r.phases.broadcast,
    };
  });
  const nodeScaling = [1, 2, 4].map((nodes) => {
    const r = simulateCollective(presetSystem('dgx-a100', { nodes })!, { bytes });
    return { nodes, ranks: r.ranks, timeUs: r.timeUs, busbwGBps: r.busbwGBps };
  });
  const check = (reduceOp: 'sum' | 'avg') => runScalingCheck({ ranks: 8, reduceOp, lrRule: 'fixed', steps: 30 });
  const sum = check('sum');
  const avg = check('avg');
  cached = {
    title: 'AllReduce on DGX A100',
    system: '8× A100 NVSwitch',
    sweeps: [
      { label: 'model (auto)', rows: sweep('auto') },
      { label: 'model (ring)', rows: sweep('ring') },
    ],
    measured,
    phases,
    comparisonBytes: bytes,
    algorithms,
    nodeScaling,
    bucketSweep: [1, 5, 25, 100].map((mib, i) => ({
      bucketBytes: asBytes(mib * 2 ** 20),
      stepTimeUs: asMicros([900, 700, 650, 800][i]),
      exposedCommUs: asMicros([400, 200, 150, 300][i]),
    })),
    scalingCheck: {
      steps: sum.lossCurve.dataParallel.map((_, i) => i),
      verdict: `sum: ${sum.diverged ? 'diverges' : 'converges'}`,
      model: syntheticModelNote(),
      series: [
        {
          label: 'all_reduce SUM',
          kind: 'sum',
          loss: sum.lossCurve.dataParallel.map((v) => (Number.isFinite(v) ? v : 1e30)),
        },
        { label: 'all_reduce AVG', kind: 'avg', loss: avg.lossCurve.dataParallel },
        { label: 'single-GPU reference', kind: 'reference', loss: avg.lossCurve.reference },
      ],
    },
  };
  return cached;
}

before(async () => {
  if (skip) return;
  panel = await openPanel('charts');
});
after(async () => {
  await panel?.close();
});

test('every chart kind draws from engine data, in the theme colours', { skip }, async () => {
  const data = chartsData();
  assert.ok(data.algorithms!.length >= 3, 'several algorithm/protocol pairs are possible on a DGX A100');
  await panel.send({ type: 'charts', data });
  await panel.page.waitForSelector('section.card[data-chart="loss"]');
  const cards = await panel.page.$$eval('section.card', (els: any[]) => els.map((e) => e.getAttribute('data-chart')));
  assert.deepEqual(cards, ['busbw', 'time', 'phases', 'algorithms', 'buckets', 'scaling', 'loss']);
  const summary = (await panel.page.evaluate(() => {
    const { charts } = window.collectiveProfilerCharts;
    const out: Record<string, { datasets: string[]; points: number[]; colours: string[] }> = {};
    for (const [id, chart] of charts) {
      const ctx = chart.canvas.getContext('2d');
      const { data } = ctx.getImageData(0, 0, chart.canvas.width, chart.canvas.height);
      const colours = new Set<string>();
      for (let i = 0; i < data.length; i += 4)
        if (data[i + 3] === 255) colours.add(`${data[i]},${data[i + 1]},${data[i + 2]}`);
      out[id] = {
        datasets: chart.data.datasets.map((d: any) => d.label),
        points: chart.data.datasets.map((d: any) => d.data.length),
        colours: [...colours],
      };
    }
    return out;
  })) as Record<string, { datasets: string[]; points: number[]; colours: string[] }>;
  assert.deepEqual(summary.busbw.datasets.slice(0, 2), ['model (auto)', 'model (ring)']);
  assert.match(summary.busbw.datasets[2], /\(measured\)$/);
  assert.ok(
    summary.busbw.points.every((n) => n >= 10),
    `every busbw series has points: ${summary.busbw.points}`,
  );
  assert.deepEqual(summary.phases.datasets, ['exchange', 'reduce', 'broadcast']);
  assert.deepEqual(summary.loss.datasets, ['all_reduce SUM', 'all_reduce AVG', 'single-GPU reference']);
  const blue = rgb(DARK_THEME['--vscode-charts-blue']).join();
  const orange = rgb(DARK_THEME['--vscode-charts-orange']).join();
  for (const id of ['busbw', 'phases', 'algorithms', 'buckets', 'scaling']) {
    assert.ok(summary[id].colours.includes(blue), `${id} draws in the theme's blue`);
  }
  assert.ok(summary.phases.colours.includes(orange), 'the reduce phase is orange');
  assert.deepEqual(panel.errors(), []);
  assert.deepEqual(await panel.cspViolations(), []);
});

test('the busbw chart marks where the tuner switches algorithm or protocol', { skip }, async () => {
  const labels = await panel.page.evaluate(() => {
    const chart = window.collectiveProfilerCharts.charts.get('busbw');
    return chart.config.plugins.find((p: any) => p.id === 'switchPoints').points.map((p: any) => p.label);
  });
  const expected = switchPoints(chartsData().sweeps![0].rows).map((p) => p.label);
  assert.ok(expected.length > 0, 'the A100 tuner switches somewhere between 1 KiB and 1 GiB');
  assert.deepEqual(labels, expected);
  const text = await panel.page.locator('section.card[data-chart="algorithms"] h2').textContent();
  assert.equal(text, 'Algorithm comparison at 64 MiB');
  const state = await panel.page.evaluate(() => window.__state);
  assert.equal(state.panel, 'charts');
  assert.equal(state.data.title, 'AllReduce on DGX A100');
});

test('a result with nothing to chart says so instead of drawing empty axes', { skip }, async () => {
  await panel.send({ type: 'charts', data: { title: 'empty' } });
  await panel.page.waitForFunction(() => document.querySelectorAll('section.card').length === 0);
  assert.match((await panel.page.locator('.message').textContent()) ?? '', /nothing to chart/);
});

test('after a reload the panel redraws from its saved state without asking the host', { skip }, async () => {
  await panel.send({ type: 'charts', data: chartsData() });
  await panel.page.waitForSelector('section.card[data-chart="loss"]');
  await panel.reload();
  await panel.page.waitForSelector('section.card[data-chart="loss"]');
  assert.equal(await panel.page.locator('section.card').count(), 7); // six charts and the log-log time-per-call chart beside busbw
  assert.equal(await panel.page.locator('.toolbar .title').textContent(), 'AllReduce on DGX A100');
});

// The charts panel's axes (issue 14): sizes that span decades are on log axes, time is on a log axis where it spans
// 100× or more, every axis is titled (with its unit where it has one), and latency-bound sizes have a time chart
// in which they are visible rather than a busbw of 0.0 GB/s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { presetSystem, sweepAllReduce, asBytes, asMicros, asGBps } from '../../src/engine/index';
import type { ChartsData } from '../../src/protocol';
import { chartSpecs, timeAxis, LOG_TIME_SPREAD } from '../../webview/charts/charts';

const COLOURS = { series: ['#111', '#222', '#333', '#444', '#555', '#666'], foreground: '#000', grid: '#ccc' };

interface Axis {
  type?: string;
  title?: { display?: boolean; text?: string };
}

function axesOf(spec: ReturnType<typeof chartSpecs>[number]): Record<string, Axis> {
  return (spec.config.options as { scales?: Record<string, Axis> } | undefined)?.scales ?? {};
}

const rows = sweepAllReduce(presetSystem('dgx-h100')!, { minBytes: asBytes(8), maxBytes: asBytes(2 ** 30) });
const DATA: ChartsData = {
  title: 't',
  sweeps: [{ label: 'model', rows }],
  measured: [
    {
      label: 'run',
      points: rows.map((r) => ({
        bytes: r.bytes,
        timeUs: asMicros(r.timeUs * 1.3),
        busbwGBps: asGBps(r.busbwGBps / 1.3),
      })),
    },
  ],
  phases: [
    {
      label: 'allreduce 4 B',
      bytes: asBytes(4),
      exchangeUs: asMicros(10),
      reduceUs: asMicros(2),
      broadcastUs: asMicros(8),
    },
  ],
  comparisonBytes: asBytes(2 ** 20),
  algorithms: [
    { algorithm: 'ring', protocol: 'LL', timeUs: asMicros(20), busbwGBps: asGBps(1) },
    { algorithm: 'ring', protocol: 'Simple', timeUs: asMicros(4000), busbwGBps: asGBps(300), chosen: true },
  ],
  bucketSweep: [1, 25, 1024].map((mb, i) => ({
    bucketBytes: asBytes(mb * 2 ** 20),
    stepTimeUs: asMicros([900, 700, 800][i]),
    exposedCommUs: asMicros([400, 150, 300][i]),
    recommended: i === 1,
  })),
  nodeScaling: [
    { nodes: 1, ranks: 8, timeUs: asMicros(100), busbwGBps: asGBps(300) },
    { nodes: 2, ranks: 16, timeUs: asMicros(150), busbwGBps: asGBps(250) },
  ],
  scalingCheck: {
    steps: [0, 1],
    series: [{ label: 'sum', kind: 'sum', loss: [1, 0.5] }],
    model: 'Synthetic least-squares model: …',
  },
};

test('every axis of every chart is titled', () => {
  const specs = chartSpecs(DATA, COLOURS);
  assert.deepEqual(
    specs.map((s) => s.id),
    ['busbw', 'time', 'phases', 'algorithms', 'buckets', 'scaling', 'loss'],
  );
  for (const spec of specs) {
    const axes = axesOf(spec);
    assert.ok(Object.keys(axes).length >= 2, `${spec.id} has its axes set`);
    for (const [name, axis] of Object.entries(axes))
      assert.ok(axis.title?.display && axis.title.text, `${spec.id}.${name} is titled`);
  }
});

test('sizes spanning decades are on log axes, with the unit in the title', () => {
  const specs = chartSpecs(DATA, COLOURS);
  for (const id of ['busbw', 'time', 'buckets']) {
    const x = axesOf(specs.find((s) => s.id === id)!).x;
    assert.equal(x.type, 'logarithmic', `${id} sizes`);
    assert.match(x.title!.text!, /\(bytes\)|bucket_cap_mb/);
  }
  // The time chart makes a latency-bound 8-byte call visible: its y axis is logarithmic time, not busbw.
  const time = axesOf(specs.find((s) => s.id === 'time')!).y;
  assert.equal(time.type, 'logarithmic');
  assert.match(time.title!.text!, /µs/);
});

test('a time axis is logarithmic exactly where the candidates differ by 100× or more', () => {
  assert.equal(timeAxis([20, 4000]).type, 'logarithmic');
  assert.equal(timeAxis([20, 20 * LOG_TIME_SPREAD - 1]).type, 'linear');
  assert.equal(axesOf(chartSpecs(DATA, COLOURS).find((s) => s.id === 'algorithms')!).y.type, 'logarithmic');
  const close = chartSpecs(
    {
      ...DATA,
      algorithms: [
        { algorithm: 'ring', protocol: 'LL', timeUs: asMicros(20), busbwGBps: asGBps(1) },
        { algorithm: 'tree', protocol: 'LL', timeUs: asMicros(30), busbwGBps: asGBps(1) },
      ],
    },
    COLOURS,
  );
  assert.equal(axesOf(close.find((s) => s.id === 'algorithms')!).y.type, 'linear');
});

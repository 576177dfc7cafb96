// The charts panel's pure transforms: where the tuner switches algorithm or protocol, byte tick labels, and the
// recommended bucket size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { presetSystem, sweepAllReduce, asBytes, asGBps, asMicros } from '../../src/engine/index';
import {
  byteTick,
  plottable,
  powerOfTwoTicks,
  recommendedIndex,
  sizeSeriesDatasets,
  switchPoints,
} from '../../webview/charts/series';

test('switch points are the sizes where the auto choice changes, in size order', () => {
  const rows = sweepAllReduce(presetSystem('dgx-h100')!, { minBytes: asBytes(8), maxBytes: asBytes(2 ** 30) });
  const points = switchPoints([...rows].reverse());
  assert.ok(points.length >= 1, 'the H100 tuner changes its choice somewhere between 8 B and 1 GiB');
  for (const point of points) {
    const index = rows.findIndex((r) => r.bytes === point.bytes);
    assert.ok(index > 0);
    assert.equal(point.label, `${rows[index].algorithm}/${rows[index].protocol}`);
    assert.notEqual(`${rows[index - 1].algorithm}/${rows[index - 1].protocol}`, point.label);
  }
  assert.deepEqual(switchPoints(rows.map((r) => ({ ...r, algorithm: 'ring', protocol: 'Simple' }))), []);
});

test('byte ticks label powers of two only, and plottable drops points a log axis cannot show', () => {
  assert.equal(byteTick(1024 * 1024), '1 MiB');
  assert.equal(byteTick(3000), '');
  assert.equal(byteTick(0), '');
  assert.deepEqual(
    plottable([
      { x: 0, y: 1 },
      { x: 8, y: Number.NaN },
      { x: 8, y: 2 },
    ]),
    [{ x: 8, y: 2 }],
  );
});

test('the recommended bucket is the marked one, else the fastest step', () => {
  assert.equal(recommendedIndex([{ stepTimeUs: 5 }, { stepTimeUs: 3 }, { stepTimeUs: 4 }]), 1);
  assert.equal(recommendedIndex([{ stepTimeUs: 5 }, { stepTimeUs: 3 }, { stepTimeUs: 4, recommended: true }]), 2);
  assert.equal(recommendedIndex([]), -1);
});

test('byte axes tick at powers of two, thinned to a readable count', () => {
  assert.deepEqual(powerOfTwoTicks(1000, 70_000), [1024, 2048, 4096, 8192, 16384, 32768, 65536]);
  const wide = powerOfTwoTicks(8, 2 ** 33);
  assert.ok(wide.length <= 12 && wide.length >= 6, `${wide.length} ticks`);
  assert.ok(
    wide.every((t, i) => i === 0 || t / wide[i - 1] === wide[1] / wide[0]),
    'evenly spaced on a log axis',
  );
  assert.deepEqual(powerOfTwoTicks(0, 10), []);
});

test('the busbw and time charts plot the same series, modelled lines then measured crosses, differing only in y', () => {
  const rows = sweepAllReduce(presetSystem('dgx-h100')!, { minBytes: asBytes(8), maxBytes: asBytes(2 ** 20) });
  const measuredPoints = [
    { bytes: asBytes(1024), timeUs: asMicros(30), busbwGBps: asGBps(0.06) },
    // Not plottable on a log size axis: dropped from both charts.
    { bytes: asBytes(0), timeUs: asMicros(5), busbwGBps: asGBps(0) },
  ];
  const data = {
    sweeps: [
      { label: 'auto', rows },
      { label: 'ring', rows: rows.slice(0, 3) },
    ],
    measured: [{ label: 'run', points: measuredPoints }],
  };
  const palette = ['a', 'b', 'c', 'd', 'e'];
  const busbw = sizeSeriesDatasets(data, 'busbwGBps', palette);
  const time = sizeSeriesDatasets(data, 'timeUs', palette);
  assert.deepEqual(
    busbw.map((d) => [d.type, d.label, d.borderColor]),
    [
      ['line', 'auto', 'a'],
      ['line', 'ring', 'b'],
      ['scatter', 'run (measured)', 'd'],
    ],
  );
  assert.deepEqual(
    time.map((d) => [d.type, d.label, d.borderColor]),
    busbw.map((d) => [d.type, d.label, d.borderColor]),
  );
  assert.deepEqual(
    busbw[0].data,
    rows.map((r) => ({ x: r.bytes, y: r.busbwGBps })),
  );
  assert.deepEqual(
    time[0].data,
    rows.map((r) => ({ x: r.bytes, y: r.timeUs })),
  );
  assert.deepEqual(time[2].data, [{ x: 1024, y: 30 }]);
  assert.deepEqual(busbw[2].data, [{ x: 1024, y: 0.06 }]);
  // Colours wrap around a short palette rather than running out.
  assert.equal(sizeSeriesDatasets(data, 'timeUs', ['x', 'y'])[2].borderColor, 'y');
  assert.deepEqual(sizeSeriesDatasets({}, 'busbwGBps', palette), []);
});

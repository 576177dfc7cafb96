// `validate --leave-one-out`: the constants fitted on a dataset are refit without it, a constant only that dataset
// supports falls back to the hardware facts, and the held-out rows never reach the refit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { ROOT, runCli } from './run-cli';
import { loadDatasets } from '../../../src/cli/commands/validate';
import { compareDataset, resolveSystem } from '../../../src/engine/index';
import * as K from '../../../src/engine/constants';
import {
  compareWith,
  ENGINE_VALUES,
  FITTED_CONSTANTS,
  refitWithout,
  variantSystem,
  type CalibrationDataset,
} from '../../../src/native/loo-refit';
import { needShared } from '../requirements';

const SHARED = resolve(ROOT, '..', 'shared', 'calibration');
const SYSTEMS = join(ROOT, 'calibration', 'systems');
const skip = needShared(join(SHARED, 'nccl-tests'), 'the calibration datasets');
const datasets = (): CalibrationDataset[] => loadDatasets(SHARED, SYSTEMS);
const byPrefix = (all: readonly CalibrationDataset[], prefix: string): CalibrationDataset =>
  all.find((d) => d.name.startsWith(prefix))!;

/** A copy of the dataset whose measured times and busbw are all `factor` times the published ones. */
function perturbed(d: CalibrationDataset, factor: number): CalibrationDataset {
  const rows = (d.dataset.rows as Record<string, unknown>[]).map((row) => {
    const out: Record<string, unknown> = { ...row };
    for (const key of ['time_us', 'inplace_time_us', 'busbw_GBps', 'inplace_busbw_GBps'])
      if (typeof row[key] === 'number') out[key] = (row[key] as number) * factor;
    return out;
  });
  return { ...d, dataset: { ...d.dataset, rows } };
}

test('the refit module knows the engine constants by their current values', () => {
  assert.equal(ENGINE_VALUES.LAUNCH_PER_GPU_US, K.LAUNCH_PER_GPU_US);
  assert.equal(ENGINE_VALUES.OVERLAP_SHARPNESS, K.OVERLAP_SHARPNESS);
  assert.equal(ENGINE_VALUES['intraStepLatencyScale(sm>=89)'], K.intraStepLatencyScale(90, 'nvlink'));
  assert.equal(ENGINE_VALUES['intraStepLatencyScale(sm<89)'], K.intraStepLatencyScale(80, 'nvlink'));
  assert.equal(ENGINE_VALUES['nvlinkBridgeEfficiency(NVLink4)'], K.nvlinkBridgeEfficiency(4));
  assert.equal(ENGINE_VALUES.HOST_MEMORY_GBPS, K.HOST_MEMORY_GBPS);
});

test('with the engine values the refit path judges every dataset exactly as validate does', { skip }, () => {
  for (const d of datasets()) {
    const plain = compareDataset(resolveSystem(d.spec), d.dataset);
    const variant = compareWith(d, ENGINE_VALUES);
    assert.deepEqual(
      variant.rows.map((r) => r.simulatedBusbwGBps),
      plain.rows.map((r) => r.simulatedBusbwGBps),
      d.name,
    );
  }
});

test('each knob moves the simulation the way its constant does', { skip }, () => {
  const all = datasets();
  const rtx = byPrefix(all, 'rtx4090');
  const hostLinks = (gbps: number) =>
    variantSystem(rtx.spec, { ...ENGINE_VALUES, HOST_MEMORY_GBPS: gbps })
      .topology.links.filter((l) => l.kind === 'host')
      .map((l) => l.GBps);
  assert.ok(hostLinks(120).length > 0 && hostLinks(120).every((g) => g === 120));
  assert.ok(hostLinks(60).every((g) => g === 60));
  assert.equal(variantSystem(rtx.spec, { ...ENGINE_VALUES, LAUNCH_PER_GPU_US: 2 }).launchUs, 16);
  // A sharper host/device combination can only shorten a time; a plain maximum is the shortest.
  const a100 = byPrefix(all, 'a100');
  const at = (p: number) =>
    compareWith(a100, { ...ENGINE_VALUES, OVERLAP_SHARPNESS: p }).rows.find((r) => r.bytes === 1024 * 1024)!
      .simulatedBusbwGBps;
  assert.ok(at(Infinity) > at(4) && at(4) > at(2));
});

test(
  'a constant only the held-out dataset supports falls back to the hardware facts, and the error differs',
  { skip },
  () => {
    const all = datasets();
    const pair = byPrefix(all, 'h100pcie');
    const { values, refits } = refitWithout(pair.name, all);
    const bridge = FITTED_CONSTANTS.find((c) => c.name === 'nvlinkBridgeEfficiency(NVLink4)')!;
    assert.deepEqual(
      refits.map((r) => r.constant),
      ['nvlinkBridgeEfficiency(NVLink4)'],
    );
    assert.equal(refits[0].refitOn.length, 0);
    assert.equal(refits[0].fallback, bridge.fallback.source);
    assert.equal(values['nvlinkBridgeEfficiency(NVLink4)'], bridge.fallback.value);
    const inSample = compareWith(pair, ENGINE_VALUES).largeMedianPct!;
    const loo = compareWith(pair, values).largeMedianPct!;
    assert.ok(Math.abs(loo - inSample) > 10, `in-sample ${inSample}%, leave-one-out ${loo}%`);
  },
);

test('the refit without a dataset never reads its rows, and does read the others', { skip }, () => {
  const all = datasets();
  const held = byPrefix(all, 'a100').name;
  const base = refitWithout(held, all);
  assert.deepEqual(base.refits.map((r) => r.constant).sort(), [
    'LAUNCH_PER_GPU_US',
    'OVERLAP_SHARPNESS',
    'intraStepLatencyScale(sm<89)',
  ]);
  assert.ok(base.refits.every((r) => !r.refitOn.includes(held)));
  const heldChanged = all.map((d) => (d.name === held ? perturbed(d, 3) : d));
  assert.deepEqual(refitWithout(held, heldChanged), base);
  // The control: the same change to a dataset the refit does use moves the refit values, so the check above can fail.
  const gb200 = byPrefix(all, 'gb200').name;
  const otherChanged = all.map((d) => (d.name === gb200 ? perturbed(d, 3) : d));
  assert.notDeepEqual(refitWithout(held, otherChanged).values, base.values);
});

test('validate --leave-one-out --json gives both errors and the refit values per dataset', { skip }, async () => {
  const run = await runCli(['validate', '--calibration-dir', SHARED, '--leave-one-out', '--json']);
  assert.ok(run.code === 0 || run.code === 1, run.stderr);
  type Summary = { largeMedianPct: number | null; smallMedianPct: number | null; pass: boolean };
  const rows = JSON.parse(run.stdout) as {
    dataset: string;
    suspect: boolean;
    inSample: Summary;
    leaveOneOut: Summary;
    refits: { constant: string; value: number | null; refitOn: string[]; fallback: string | null }[];
  }[];
  assert.ok(rows.length >= 9);
  for (const row of rows) {
    for (const s of [row.inSample, row.leaveOneOut]) {
      assert.deepEqual(Object.keys(s).sort(), ['largeMedianPct', 'pass', 'rows', 'smallMedianPct']);
      assert.equal(typeof s.pass, 'boolean');
    }
    for (const r of row.refits) {
      assert.ok(!r.refitOn.includes(row.dataset));
      assert.equal(r.fallback === null, r.refitOn.length > 0);
    }
  }
  const pair = rows.find((r) => r.dataset.startsWith('h100pcie'))!;
  assert.notEqual(pair.leaveOneOut.largeMedianPct, pair.inSample.largeMedianPct);
  assert.equal(pair.refits[0].value, 1);
  const text = await runCli(['validate', '--calibration-dir', SHARED, '--leave-one-out']);
  assert.match(text.stdout, /h100pcie\S*\s+[\d.]+%\s+[\d.]+%.*only this dataset supports it/);
});

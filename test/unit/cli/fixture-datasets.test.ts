// Published runs among ../shared/fixtures-real join validate through calibration/fixture-datasets.json: the manifest
// describes the hardware only, and the rows come from the fixture file, read in place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ROOT } from './run-cli';
import { loadFixtureDatasets } from '../../../src/cli/fixture-datasets';
import { loadDatasets } from '../../../src/cli/commands/validate';
import { needShared } from '../requirements';

const SHARED = resolve(ROOT, '..', 'shared', 'calibration');
const SYSTEMS = join(ROOT, 'calibration', 'systems');
const skip = needShared(join(SHARED, 'nccl-tests'), 'the calibration datasets');

test('the manifest holds descriptions only: no rows, no measured figure', () => {
  const entries = JSON.parse(readFileSync(join(ROOT, 'calibration', 'fixture-datasets.json'), 'utf8')) as Record<
    string,
    unknown
  >[];
  assert.ok(entries.length > 0);
  for (const entry of entries) {
    assert.equal(entry.rows, undefined);
    for (const key of Object.keys(entry))
      assert.doesNotMatch(key, /time|busbw|algbw|GBps/, `${String(entry.name)}: ${key}`);
    assert.ok(existsSync(join(SYSTEMS, `${String(entry.name)}.json`)), `${String(entry.name)} has a system file`);
  }
});

test('the SuperBench A100 run is read from its fixture and judged beside the calibration datasets', { skip }, () => {
  const [superbench] = loadFixtureDatasets(SHARED, SYSTEMS).filter((d) => d.name.includes('superbench'));
  const rows = superbench.dataset.rows as { bytes: number; time_us: number; inplace_time_us: number }[];
  // 4 B to 8 GiB; the two zero-byte rows only time the launch.
  assert.equal(rows.length, 32);
  assert.deepEqual([rows[0].bytes, rows.at(-1)!.bytes], [4, 8 * 2 ** 30]);
  const oneMiB = rows.find((r) => r.bytes === 2 ** 20)!;
  assert.deepEqual([oneMiB.time_us, oneMiB.inplace_time_us], [74.78, 76.17]);
  const all = loadDatasets(SHARED, SYSTEMS);
  assert.ok(all.some((d) => d.name === superbench.name && d.spec.gpusPerProcess === 8));
});

test('without a manifest beside the systems folder, or without the fixture, no dataset is added', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fixture-datasets-'));
  try {
    assert.deepEqual(loadFixtureDatasets(join(dir, 'calibration'), join(dir, 'systems')), []);
    writeFileSync(
      join(dir, 'fixture-datasets.json'),
      JSON.stringify([{ name: 'x', fixture: 'fixtures-real/absent.txt' }]),
    );
    assert.deepEqual(loadFixtureDatasets(join(dir, 'calibration'), join(dir, 'systems')), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Every published all_reduce_perf run in ../shared/calibration that is not marked suspect: the simulated sweep on a
// system file describing its hardware lands within 10% (≥ 1 MiB) and 25% (< 1 MiB) median absolute busbw error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { compareDataset, resolveSystem, systemFromDescription, type SystemSpec } from '../../../src/engine/index';
import { needShared } from '../requirements';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const DATASETS = resolve(ROOT, '..', 'shared', 'calibration', 'nccl-tests');
const SYSTEMS = join(ROOT, 'calibration', 'systems');
const skip = needShared(DATASETS, 'the calibration datasets');

function load(file: string): { dataset: Record<string, unknown>; spec: SystemSpec } {
  const dataset = JSON.parse(readFileSync(join(DATASETS, file), 'utf8')) as Record<string, unknown>;
  const spec = JSON.parse(readFileSync(join(SYSTEMS, file), 'utf8')) as SystemSpec;
  return { dataset, spec };
}

test('simulated busbw is within bounds of every non-suspect calibration dataset', { skip }, () => {
  const files = readdirSync(DATASETS)
    .filter((f) => f.endsWith('.json'))
    .sort();
  assert.ok(files.length > 0);
  const lines = ['dataset'.padEnd(64) + ' ≥1MiB   <1MiB   verdict'];
  const failures: string[] = [];
  for (const file of files) {
    assert.ok(existsSync(join(SYSTEMS, file)), `no system file for ${file}`);
    const { dataset, spec } = load(file);
    const result = compareDataset(resolveSystem(spec), dataset);
    const fmt = (v: number | undefined) => (v === undefined ? '—' : `${v.toFixed(1)}%`).padStart(6);
    const verdict = result.suspect ? 'suspect' : result.pass ? 'PASS' : 'FAIL';
    lines.push(
      `${file.replace(/\.json$/, '').padEnd(64)} ${fmt(result.largeMedianPct)}  ${fmt(result.smallMedianPct)}   ${verdict}`,
    );
    if (!result.suspect && !result.pass) failures.push(file);
  }
  console.log(lines.join('\n'));
  assert.deepEqual(failures, []);
});

test('the hand-written system files say what the dataset descriptions say', { skip }, () => {
  const sorted = (o: object) =>
    JSON.stringify(
      Object.fromEntries(
        Object.entries(o)
          .filter(([k]) => k !== 'name')
          .sort(),
      ),
    );
  for (const file of readdirSync(DATASETS).filter((f) => f.endsWith('.json'))) {
    const { dataset, spec } = load(file);
    const derived = systemFromDescription(dataset);
    assert.ok(derived, file);
    // A dataset whose command line is not recorded (the Azure A100 table) does not say how many GPUs a process
    // drove; its system file takes that from the benchmark's own source, so the key is compared only where the
    // dataset records it.
    const written = derived.gpusPerProcess === undefined ? { ...spec, gpusPerProcess: undefined } : spec;
    assert.equal(sorted(derived), sorted(written), file);
  }
});

// bench/run.ts on a folder of fixture benchmarks: medians, targets, --quick, --strict, errors and merging.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');

function benchDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'cp-bench-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

function runBench(
  dir: string,
  ...args: string[]
): { code: number | null; stdout: string; stderr: string; records: Record<string, any>[] } {
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench', 'run.ts'), '--dir', dir, ...args],
    { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
  );
  let records: Record<string, any>[] = [];
  try {
    records = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8'));
  } catch {
    // No results file: the caller's assertions say whether that was expected.
  }
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, records };
}

// Values cycle through 5, 1, 3, 2, 4 so the median (3), min and max are known.
const FIXTURE = `
let i = 0;
const values = [5, 1, 3, 2, 4];
export const benchmarks = [
  { name: 'cycling', unit: 'ms', target: 3, quick: true, measure: () => values[i++ % values.length], extra: () => ({ spans: 42 }) },
  { name: 'too slow', unit: 'ms', target: 1, quick: true, runs: 3, measure: () => 2 },
  { name: 'throughput', unit: 'GB/s', target: 10, higherIsBetter: true, runs: 1, measure: async () => 12 },
];
`;

test('records have median, min, max, runs, target, pass and the extra fields; a miss still exits 0', () => {
  const dir = benchDir({ 'a.bench.ts': FIXTURE });
  const run = runBench(dir);
  assert.equal(run.code, 0, run.stderr);
  const byName = Object.fromEntries(run.records.map((r) => [r.name, r]));
  assert.deepEqual(
    {
      median: byName.cycling.median,
      min: byName.cycling.min,
      max: byName.cycling.max,
      runs: byName.cycling.runs,
      pass: byName.cycling.pass,
      spans: byName.cycling.spans,
      unit: byName.cycling.unit,
      target: byName.cycling.target,
    },
    { median: 3, min: 1, max: 5, runs: 5, pass: true, spans: 42, unit: 'ms', target: 3 },
  );
  assert.equal(byName['too slow'].pass, false);
  assert.equal(byName['too slow'].runs, 3);
  assert.equal(byName.throughput.pass, true, 'higher is better: 12 ≥ 10');
  assert.match(run.stdout, /benchmark\s+median\s+range\s+unit\s+target\s+runs\s+result/);
  assert.match(run.stdout, /too slow.*MISS/);
});

test('--markdown prints the README table with the machine', () => {
  const run = runBench(benchDir({ 'a.bench.ts': FIXTURE }), '--markdown');
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^Machine: \d+× .*Node v\d+/m);
  assert.match(run.stdout, /^\| cycling \| < 3 ms \| 3 ms \| pass \|$/m);
  assert.match(run.stdout, /^\| too slow \| < 1 ms \| 2 ms \| \*\*miss\*\* \|$/m);
  assert.match(run.stdout, /^\| throughput \| ≥ 10 GB\/s \| 12 GB\/s \| pass \|$/m);
});

test('--strict turns a missed target into exit code 1', () => {
  const run = runBench(benchDir({ 'a.bench.ts': FIXTURE }), '--strict');
  assert.equal(run.code, 1);
});

test('--quick runs only quick benchmarks, at most twice, and keeps the other records', () => {
  const dir = benchDir({ 'a.bench.ts': FIXTURE });
  assert.equal(runBench(dir).code, 0);
  const quick = runBench(dir, '--quick');
  assert.equal(quick.code, 0, quick.stderr);
  const byName = Object.fromEntries(quick.records.map((r) => [r.name, r]));
  assert.equal(byName.cycling.runs, 2);
  assert.equal(byName['too slow'].runs, 2);
  assert.equal(byName.throughput.runs, 1, 'the non-quick record from the full run is kept');
  assert.doesNotMatch(quick.stdout, /running throughput/);
});

test('a benchmark that throws is recorded with its error and fails the run', () => {
  const dir = benchDir({
    'b.bench.ts': `export const benchmarks = [{ name: 'broken', unit: 'ms', target: 1, quick: true, measure: () => { throw new Error('boom'); } }];`,
  });
  const run = runBench(dir, '--quick');
  assert.equal(run.code, 1);
  assert.equal(run.records[0].error, 'boom');
  assert.equal(run.records[0].pass, false);
});

test('no quick benchmark, or a file without a benchmarks export, is an error', () => {
  assert.equal(
    runBench(
      benchDir({
        'c.bench.ts': `export const benchmarks = [{ name: 'slow', unit: 'ms', target: 1, measure: () => 1 }];`,
      }),
      '--quick',
    ).code,
    1,
  );
  const bad = runBench(benchDir({ 'd.bench.ts': 'export const other = 1;' }));
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /must export 'benchmarks/);
});

// `npm run fuzz`: the fuzz suite (test/unit/fuzz/*.fuzz.test.ts) with more inputs than CI runs, and a fresh seed.
//   npm run fuzz                       ten times the CI plan, random seed
//   npm run fuzz -- --scale 50         fifty times the plan
//   npm run fuzz -- --seed 1234        reproduce a run (the seed is printed at the start and with every failure)
//   npm run fuzz -- traces python      only the files whose names contain these words
// hostile-sizes.fuzz.test.ts adds sizes past every limit and non-regular files (FIFOs, devices, links to them,
// folders, sparse files) through every reader and output target.
// FUZZ_SCALE and FUZZ_SEED in the environment work too. Each file runs in its own process under a watchdog, so an
// input that hangs a parser outright is reported instead of stalling the run.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
function option(name, fallback) {
  const at = args.indexOf(`--${name}`);
  if (at < 0) return fallback;
  const value = args[at + 1];
  args.splice(at, 2);
  if (value === undefined || !/^\d+$/.test(value)) {
    console.error(`--${name} needs a whole number`);
    process.exit(2);
  }
  return value;
}
const scale = option('scale', process.env.FUZZ_SCALE ?? '10');
const seed = option('seed', process.env.FUZZ_SEED ?? String(Date.now() % 2 ** 31));
const watchdogMinutes = Number(option('watchdog-minutes', '60'));
const dir = 'test/unit/fuzz';
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.fuzz.test.ts') && (args.length === 0 || args.some((a) => f.includes(a))))
  .map((f) => join(dir, f));
if (files.length === 0) {
  console.error(`no fuzz files match ${args.join(' ')}`);
  process.exit(2);
}

const statsDir = mkdtempSync(join(tmpdir(), 'cp-fuzz-'));
const statsFile = join(statsDir, 'stats.jsonl');
console.log(`fuzzing ${files.length} files at ${scale}× the CI plan, seed ${seed}`);
const started = Date.now();
let failed = 0;
for (const file of files) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', file], {
    stdio: 'inherit',
    env: { ...process.env, FUZZ_SCALE: scale, FUZZ_SEED: seed, FUZZ_STATS_FILE: statsFile },
    timeout: watchdogMinutes * 60_000,
  });
  if (result.error?.code === 'ETIMEDOUT' || result.signal) {
    console.error(
      `${file}: killed by the ${watchdogMinutes}-minute watchdog; an input hangs a parser (rerun with --seed ${seed})`,
    );
    failed++;
  } else if (result.status !== 0) {
    failed++;
  }
}

const totals = new Map();
let lines = [];
try {
  lines = readFileSync(statsFile, 'utf8').trim().split('\n').filter(Boolean);
} catch {
  // No file wrote statistics (every one failed before its end); the totals below are then empty.
}
for (const line of lines) {
  for (const [format, n] of Object.entries(JSON.parse(line).counts)) totals.set(format, (totals.get(format) ?? 0) + n);
}
rmSync(statsDir, { recursive: true, force: true });
const total = [...totals.values()].reduce((a, b) => a + b, 0);
console.log(`\nfuzz totals (seed ${seed}, ${((Date.now() - started) / 1000).toFixed(0)} s):`);
for (const [format, n] of totals) console.log(`  ${format.padEnd(30)} ${String(n).padStart(9)}`);
console.log(`  ${'all formats'.padEnd(30)} ${String(total).padStart(9)}`);
if (failed > 0) console.error(`${failed} fuzz file(s) failed; rerun with --seed ${seed} to reproduce`);
process.exit(failed > 0 ? 1 : 0);

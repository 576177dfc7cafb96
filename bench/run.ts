// Runs every bench/*.bench.ts, repeats each measurement, and writes bench/results.json with the median, min and
// max against its target. Usage: `npm run bench [-- --quick] [-- --filter <text>] [-- --strict]`.
//   --quick    only benchmarks marked `quick`, at most twice each (CI runs this so the bench cannot rot)
//   --filter   only benchmarks whose name or file contains the text
//   --strict   exit 1 when a target is missed (by default a miss is recorded as pass:false and the exit code is 0)
//   --markdown also print every record in results.json as a Markdown table, with the machine, for the README
//   --dir      read *.bench.ts from, and write results.json to, another folder (the runner's own tests use it)
// A benchmark that throws always fails the run: a broken benchmark is a bug, a slow one is a finding.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeOutputFile } from '../src/native/files/output-file';
import type { Benchmark, BenchRecord } from './types';

const DEFAULT_RUNS = 5;
const QUICK_RUNS = 2;

interface Options {
  quick: boolean;
  strict: boolean;
  filter?: string;
  dir: string;
  markdown: boolean;
}

function parseArgs(argv: readonly string[]): Options {
  const options: Options = { quick: false, strict: false, markdown: false, dir: import.meta.dirname };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') options.quick = true;
    else if (arg === '--strict') options.strict = true;
    else if (arg === '--markdown') options.markdown = true;
    else if (arg === '--filter' && argv[i + 1] !== undefined) options.filter = argv[++i];
    else if (arg.startsWith('--filter=')) options.filter = arg.slice('--filter='.length);
    else if (arg === '--dir' && argv[i + 1] !== undefined) options.dir = argv[++i];
    else throw new Error(`unknown argument '${arg}'; use --quick, --strict or --filter <text>`);
  }
  return options;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function meetsTarget(benchmark: Pick<Benchmark, 'target' | 'higherIsBetter'>, value: number): boolean {
  return benchmark.higherIsBetter ? value >= benchmark.target : value <= benchmark.target;
}

/** Three significant digits without trailing zeros, and without exponent notation for ordinary values. */
function formatValue(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (value === 0) return '0';
  const digits = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(value))));
  const text = value.toFixed(Math.min(digits, 6));
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

async function loadBenchmarks(dir: string): Promise<{ file: string; benchmark: Benchmark }[]> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.bench.ts'))
    .sort();
  const loaded: { file: string; benchmark: Benchmark }[] = [];
  for (const file of files) {
    const module = (await import(pathToFileURL(join(dir, file)).href)) as { benchmarks?: Benchmark[] };
    if (!Array.isArray(module.benchmarks)) throw new Error(`bench/${file} must export 'benchmarks: Benchmark[]'`);
    for (const benchmark of module.benchmarks) loaded.push({ file, benchmark });
  }
  const names = new Set<string>();
  for (const { file, benchmark } of loaded) {
    if (names.has(benchmark.name)) throw new Error(`duplicate benchmark name '${benchmark.name}' (in bench/${file})`);
    names.add(benchmark.name);
  }
  return loaded;
}

async function runOne(file: string, benchmark: Benchmark, quick: boolean): Promise<BenchRecord> {
  const runs = Math.max(
    1,
    quick ? Math.min(benchmark.runs ?? DEFAULT_RUNS, QUICK_RUNS) : (benchmark.runs ?? DEFAULT_RUNS),
  );
  const base = {
    name: benchmark.name,
    unit: benchmark.unit,
    target: benchmark.target,
    higherIsBetter: benchmark.higherIsBetter ?? false,
    file,
    runAt: new Date().toISOString(),
  };
  const values: number[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const value = await benchmark.measure();
      if (typeof value !== 'number' || Number.isNaN(value))
        throw new Error(`measure() returned ${String(value)}, not a number`);
      values.push(value);
    }
    const extra = benchmark.extra?.() ?? {};
    const value = median(values);
    return {
      ...extra,
      ...base,
      median: value,
      min: Math.min(...values),
      max: Math.max(...values),
      runs,
      pass: meetsTarget(benchmark, value),
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ...base, median: NaN, min: NaN, max: NaN, runs: values.length, pass: false, error: message };
  }
}

function printTable(records: readonly BenchRecord[]): void {
  const rows = records.map((r) => [
    r.name,
    r.error ? 'ERROR' : formatValue(r.median),
    r.error ? '' : `${formatValue(r.min)}–${formatValue(r.max)}`,
    r.unit,
    `${r.higherIsBetter ? '≥' : '≤'} ${formatValue(r.target)}`,
    String(r.runs),
    r.error ? `error: ${r.error}` : r.pass ? 'pass' : 'MISS',
  ]);
  const header = ['benchmark', 'median', 'range', 'unit', 'target', 'runs', 'result'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 || i === 6 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
}

function machineDescription(): string {
  return `${cpus().length}× ${cpus()[0]?.model?.trim() ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${process.platform}`;
}

/** The README's performance table: every record, with the machine it ran on. */
function markdownTable(records: readonly BenchRecord[]): string {
  const rows = records.map((r) => {
    const target = `${r.higherIsBetter ? '≥' : '<'} ${formatValue(r.target)} ${r.unit}`;
    const result = r.error ? `error: ${r.error}` : `${formatValue(r.median)} ${r.unit}`;
    return `| ${r.name} | ${target} | ${result} | ${r.error ? 'error' : r.pass ? 'pass' : '**miss**'} |`;
  });
  return [
    `Machine: ${machineDescription()}; ${new Date().toISOString().slice(0, 10)}.`,
    '',
    '| benchmark | target | median | result |',
    '|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** A partial run (--quick or --filter) updates its records in results.json and keeps the rest. */
function mergeWithPrevious(resultsPath: string, records: readonly BenchRecord[], partial: boolean): BenchRecord[] {
  if (!partial || !existsSync(resultsPath)) return [...records];
  let previous: BenchRecord[] = [];
  try {
    const parsed: unknown = JSON.parse(readFileSync(resultsPath, 'utf8'));
    if (Array.isArray(parsed)) previous = parsed as BenchRecord[];
  } catch {
    // An unreadable previous file is replaced; it held only results of an earlier run.
  }
  const fresh = new Set(records.map((r) => r.name));
  return [...previous.filter((r) => !fresh.has(r.name)), ...records];
}

async function main(): Promise<number> {
  const options = parseArgs(process.argv.slice(2));
  const resultsPath = join(options.dir, 'results.json');
  const all = await loadBenchmarks(options.dir);
  const selected = all.filter(
    ({ file, benchmark }) =>
      (!options.quick || benchmark.quick) &&
      (!options.filter || benchmark.name.includes(options.filter) || file.includes(options.filter)),
  );
  if (selected.length === 0) {
    console.error(
      `no benchmarks selected (${all.length} found${options.quick ? ', none marked quick' : ''}${options.filter ? `, none matching '${options.filter}'` : ''})`,
    );
    return 1;
  }
  console.log(`# ${selected.length} benchmark(s) on ${machineDescription()}${options.quick ? ' (quick)' : ''}`);
  const records: BenchRecord[] = [];
  for (const { file, benchmark } of selected) {
    process.stdout.write(`running ${benchmark.name} ... `);
    const record = await runOne(file, benchmark, options.quick);
    console.log(record.error ? `error: ${record.error}` : `${formatValue(record.median)} ${record.unit}`);
    records.push(record);
  }
  const merged = mergeWithPrevious(resultsPath, records, options.quick || options.filter !== undefined);
  writeOutputFile(resultsPath, `${JSON.stringify(merged, null, 2)}\n`);
  console.log('');
  printTable(records);
  console.log(`\nwrote ${resultsPath}`);
  if (options.markdown) console.log(`\n${markdownTable(merged)}`);
  const errors = records.filter((r) => r.error).length;
  const misses = records.filter((r) => !r.error && !r.pass).length;
  if (misses > 0)
    console.log(
      `${misses} target(s) missed${options.strict ? '' : ' (recorded as pass:false; --strict makes this fail)'}`,
    );
  return errors > 0 || (options.strict && misses > 0) ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  },
);

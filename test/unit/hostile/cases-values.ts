// Class 7, corrupt values accepted as data: real measurements with one value damaged (a timestamp of 1e18, a
// negative or non-numeric duration, a duplicated key, a bandwidth of 1e308, a rank count of 10^9, a negative
// latency). The answer is the damaged entry dropped and counted while the rest keep their values, or the file
// refused with its line; a derived file another command reads is one that command accepts.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertBounded, assertUserError, cli, FIXTURES_REAL, LLAMA_CONFIG, type HostileCase } from './round';

const KINETO = join(FIXTURES_REAL, 'kineto-a100-2rank-nccl2.17-gpu-excerpt.json');
const NCCL_TESTS = join(FIXTURES_REAL, 'nccl-tests-a100-8gpu-2021.txt');
const NCCL_LOG = join(FIXTURES_REAL, 'nccl-debug-a100-2gpu-graph-tuning.log');
const DEEPSPEED = join(FIXTURES_REAL, 'deepspeed-commslogger-verbose-2022.log');

interface Imported {
  rows: { bytes: number; timeUs: number; busbwGBps: number; algbwGBps: number }[];
  warnings: string[];
  spans?: { startUs?: number; durationUs?: number; start?: number; duration?: number }[];
}

async function importJson(path: string, extra: string[] = []): Promise<Imported> {
  const r = await cli(['import', path, '--json', ...extra]);
  assertBounded(r);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Imported;
}

/** The span extent (µs) of an import, from whichever field names it uses. */
function extentUs(imported: Imported): number {
  const spans = imported.spans ?? [];
  const starts = spans.map((s) => s.startUs ?? s.start ?? 0);
  const ends = spans.map((s, i) => starts[i] + (s.durationUs ?? s.duration ?? 0));
  return Math.max(...ends) - Math.min(...starts);
}

/** A Kineto case: the real trace with one event damaged by `damage`; the spans keep their scale, one dropped. */
function kinetoCase(
  id: string,
  input: string,
  damage: (events: Record<string, unknown>[]) => string | undefined,
): HostileCase {
  return {
    id,
    cls: 7,
    input,
    expect: 'the damaged event dropped and counted in the warnings; the other spans keep the real extent',
    async run(dir) {
      const doc = JSON.parse(readFileSync(KINETO, 'utf8')) as { traceEvents: Record<string, unknown>[] };
      const raw = damage(doc.traceEvents);
      writeFileSync(join(dir, 'damaged.json'), raw ?? JSON.stringify(doc));
      const plain = await importJson(KINETO);
      const damaged = await importJson(join(dir, 'damaged.json'));
      assert.ok(extentUs(damaged) <= extentUs(plain) * 1.01 + 1, `extent ${extentUs(damaged)} vs ${extentUs(plain)}`);
      assert.ok(
        damaged.warnings.some((w) => /dropped/.test(w)),
        JSON.stringify(damaged.warnings),
      );
      assert.deepEqual(damaged.rows, plain.rows);
    },
  };
}

/** The first complete kernel event (ph X, on a GPU stream) of the trace. */
function firstKernel(events: Record<string, unknown>[]): Record<string, unknown> {
  const found = events.find((e) => e.ph === 'X' && e.cat === 'kernel' && !String(e.name).startsWith('nccl'));
  if (!found) throw new Error('the fixture has no compute kernel');
  return found;
}

export const VALUE_CASES: readonly HostileCase[] = [
  kinetoCase('val-kineto-ts-1e18', 'a compute kernel moved to ts 1e18', (events) => {
    events.push({ ...firstKernel(events), ts: 1e18 });
    return undefined;
  }),
  kinetoCase('val-kineto-dur-negative', 'a compute kernel with dur -5e9', (events) => {
    events.push({ ...firstKernel(events), dur: -5e9 });
    return undefined;
  }),
  kinetoCase('val-kineto-dur-string', 'a compute kernel with dur "NaN" (a string)', (events) => {
    events.push({ ...firstKernel(events), dur: 'NaN' });
    return undefined;
  }),
  kinetoCase('val-kineto-dur-huge', 'a compute kernel with dur 1e308', (events) => {
    events.push({ ...firstKernel(events), dur: 1e308 });
    return undefined;
  }),
  kinetoCase('val-kineto-duplicate-ts', 'a compute kernel whose "ts" key appears twice, the second 1e18', (events) => {
    const kernel = JSON.stringify(firstKernel(events));
    const text = JSON.stringify({ traceEvents: events });
    return text.replace(kernel, `${kernel.slice(0, -1)},"ts":1e18}`);
  }),
  {
    id: 'val-nccl-tests-busbw',
    cls: 7,
    input: 'nccl-tests output with one row whose busbw is 1e308 and another whose time is -5',
    expect: 'those rows dropped and counted (or refused with their line); no bandwidth over 1e5 GB/s kept',
    async run(dir) {
      const lines = readFileSync(NCCL_TESTS, 'utf8').split('\n');
      const rows = lines.map((l, i) => (/^\s+\d+\s+\d+\s+float/.test(l) ? i : -1)).filter((i) => i >= 0);
      lines[rows[10]] = lines[rows[10]].replace(/(\s)(\d+\.\d+)(\s+N\/A)/, '$11e308$3');
      lines[rows[11]] = lines[rows[11]].replace(/sum(\s+)\d+\.\d+/, 'sum$1-5.00');
      writeFileSync(join(dir, 'run.txt'), lines.join('\n'));
      const r = await cli(['import', join(dir, 'run.txt'), '--json']);
      if (r.code === 2) return assertUserError(r, { names: /run\.txt:\d+/ });
      assertBounded(r);
      assert.equal(r.code, 0, r.stderr);
      const imported = JSON.parse(r.stdout) as Imported;
      for (const row of imported.rows) {
        assert.ok(row.busbwGBps < 1e5 && row.timeUs > 0, JSON.stringify(row));
      }
      assert.ok(
        imported.warnings.some((w) => /dropped|skipped|ignored/.test(w)),
        JSON.stringify(imported.warnings),
      );
    },
  },
  {
    id: 'val-nccl-log-nranks',
    cls: 7,
    input: 'an NCCL_DEBUG log whose init lines claim nranks 1000000000, imported with --write-system',
    expect: 'refused with its line (exit 2), or a system file that simulate accepts',
    async run(dir) {
      writeFileSync(join(dir, 'debug.log'), readFileSync(NCCL_LOG, 'utf8').replace(/nranks 2 /g, 'nranks 1000000000 '));
      const system = join(dir, 'system.json');
      const r = await cli(['import', join(dir, 'debug.log'), '--gpu', 'A100-SXM', '--write-system', system]);
      if (r.code === 2) return assertUserError(r, { names: /debug\.log(:\d+)?/ });
      assertBounded(r);
      assert.equal(r.code, 0, r.stderr);
      const sim = await cli(['simulate', '--system', system, '--bytes', '1M'], { limitMs: 60_000 });
      assertBounded(sim);
      assert.equal(sim.code, 0, sim.stderr);
    },
  },
  {
    id: 'val-deepspeed-negative',
    cls: 7,
    input: 'a DeepSpeed comms log with one negative time and one message size of 1e308 MB',
    expect: 'those records dropped and counted; every row finite and positive',
    async run(dir) {
      const lines = readFileSync(DEEPSPEED, 'utf8').split('\n');
      const ops = lines.map((l, i) => (/time \(ms\): [\d.]+/.test(l) ? i : -1)).filter((i) => i >= 0);
      lines[ops[0]] = lines[ops[0]].replace(/time \(ms\): [\d.]+/, 'time (ms): -9.46');
      lines[ops[1]] = lines[ops[1]].replace(/msg size: [\d.]+ MB/, 'msg size: 1e308 MB');
      writeFileSync(join(dir, 'ds.log'), lines.join('\n'));
      const r = await cli(['import', join(dir, 'ds.log'), '--json']);
      if (r.code === 2) return assertUserError(r, { names: /ds\.log:\d+/ });
      assertBounded(r);
      assert.equal(r.code, 0, r.stderr);
      const imported = JSON.parse(r.stdout) as Imported;
      for (const row of imported.rows) {
        assert.ok(Number.isFinite(row.bytes) && row.bytes > 0 && row.bytes < 2 ** 53, JSON.stringify(row));
        assert.ok(Number.isFinite(row.timeUs) && row.timeUs > 0, JSON.stringify(row));
      }
      assert.ok(
        imported.warnings.some((w) => /dropped|skipped|ignored/.test(w)),
        JSON.stringify(imported.warnings),
      );
    },
  },
  {
    id: 'val-verify-fp16-overflow',
    cls: 7,
    input: 'verify --ranks 64 --dtype fp16 --magnitude 5000 --correlation 1 (the sum passes 65504)',
    expect: 'exit 1 with the overflow reported, never "overflow none"',
    async run() {
      const r = await cli(['verify', '--ranks', '64', '--dtype', 'fp16', '--magnitude', '5000', '--correlation', '1']);
      assertBounded(r);
      assert.equal(r.code, 1, r.stdout);
      assert.doesNotMatch(r.stdout, /overflow\s+none/);
    },
  },
  {
    id: 'val-bytes-limit-plus-one',
    cls: 7,
    input: 'simulate --bytes 1125899906842625 (the byte limit + 1, an exact integer)',
    expect: 'exit 2 naming the limit, not a rounded size',
    async run() {
      const r = await cli(['simulate', '--system', 'dgx-h100', '--bytes', '1125899906842625']);
      assertUserError(r, { names: /--bytes.*limit/ });
    },
  },
  {
    id: 'val-sweep-nodes-fraction',
    cls: 7,
    input: 'profile --sweep nodes=1.5..4 (a fractional node count)',
    expect: 'exit 2 naming nodes and the value',
    async run() {
      const r = await cli(['profile', LLAMA_CONFIG, '--sweep', 'nodes=1.5..4']);
      assertUserError(r, { names: /nodes/ });
    },
  },
];

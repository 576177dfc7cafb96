// System files and the CLI: how long a user waits for a system file to be checked (the editor re-checks on every
// keystroke) and for `simulate` to answer from a cold process.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { parseSystemFile } from '../src/config/system-file';
import type { Benchmark } from './types';

const ROOT = resolve(import.meta.dirname, '..');
const EXAMPLES = join(ROOT, 'examples', 'systems');
const PARSES_PER_RUN = 500;
const WARMUP_PARSES = 200;

function exampleFiles(): { name: string; text: string }[] {
  return readdirSync(EXAMPLES)
    .filter((f) => /\.(ya?ml|json)$/.test(f))
    .map((name) => ({ name, text: readFileSync(join(EXAMPLES, name), 'utf8') }));
}

let cliSpans = 0;

export const benchmarks: Benchmark[] = [
  {
    name: 'config: parse + validate + resolve one system file',
    unit: 'ms',
    target: 2,
    quick: true,
    measure() {
      const files = exampleFiles();
      // The editor re-checks on every keystroke, so the steady state matters, not the first (JIT, schema compile).
      for (let i = 0; i < WARMUP_PARSES; i++)
        parseSystemFile(files[i % files.length].text, files[i % files.length].name);
      const started = performance.now();
      for (let i = 0; i < PARSES_PER_RUN; i++) {
        const file = files[i % files.length];
        parseSystemFile(file.text, file.name);
      }
      return (performance.now() - started) / PARSES_PER_RUN;
    },
    extra: () => ({ files: exampleFiles().length, parsesPerRun: PARSES_PER_RUN }),
  },
  {
    name: 'cli: simulate 256 MiB on dgx-h100 with --trace, cold process',
    unit: 'ms',
    target: 500,
    runs: 5,
    measure() {
      const trace = join(ROOT, 'dist', 'bench-simulate.trace.json');
      const started = performance.now();
      const run = spawnSync(
        process.execPath,
        // Every run writes the same file, so each one after the first replaces it, which needs --force.
        [
          join(ROOT, 'dist', 'cli.js'),
          'simulate',
          '--system',
          'dgx-h100',
          '--bytes',
          '256MiB',
          '--trace',
          trace,
          '--force',
        ],
        { encoding: 'utf8' },
      );
      const elapsed = performance.now() - started;
      if (run.status !== 0) throw new Error(`cli exited ${run.status}: ${run.stderr.trim()}`);
      cliSpans = Number(/trace: (\d+) spans/.exec(run.stdout)?.[1] ?? NaN);
      return elapsed;
    },
    extra: () => ({ spans: cliSpans }),
  },
];

// One cold CLI process as a user runs it, with its wall time and peak resident memory (bench/support/peak-rss.cjs
// reports the peak on stderr when the process exits).
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ColdCliRun {
  readonly ms: number;
  readonly peakKB: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `dist/cli.js` with `args` in a fresh node process; throws on a non-zero exit or a missing peak. */
export function coldCli(args: readonly string[]): ColdCliRun {
  const argv = ['--require', join(ROOT, 'bench', 'support', 'peak-rss.cjs'), join(ROOT, 'dist', 'cli.js'), ...args];
  const started = performance.now();
  const run = spawnSync(process.execPath, argv, { encoding: 'utf8', maxBuffer: 1 << 24 });
  const ms = performance.now() - started;
  if (run.status !== 0) throw new Error(`cli exited ${run.status}: ${run.stderr.trim().slice(-400)}`);
  const peakKB = Number(/peak-rss-kB (\d+)/.exec(run.stderr)?.[1]);
  if (!(peakKB > 0)) throw new Error(`no peak memory reported: ${run.stderr.trim().slice(-400)}`);
  return { ms, peakKB, stdout: run.stdout, stderr: run.stderr };
}

// Every command that can take over a second reports progress through the one helper (progress.ts): sweep by size,
// calibrate by round, profile by stage, import by file; each erases its line before printing, and none reports
// with --json. The commands run in-process with a recorder in place of the terminal line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliIo } from '../../../src/cli/command';
import type { Progress } from '../../../src/cli/progress';
import { calibrateCommand } from '../../../src/cli/commands/calibrate';
import { importCommand } from '../../../src/cli/commands/import';
import { profileCommand } from '../../../src/cli/commands/profile';
import { sweepCommand, sweepInParallel } from '../../../src/cli/commands/sweep';
import { loadSystem } from '../../../src/cli/load-system';
import { asBytes, sweepAllReduce } from '../../../src/engine/index';
import { ROOT } from './run-cli';

interface Recorded {
  title: string;
  enabled: boolean;
  unit?: string;
  updates: { done: number; total: number; label?: string }[];
  finished: boolean;
}

/** Runs a command in-process; returns its exit code, stdout and every progress it started. */
async function run(
  command: { run(args: readonly string[], io: CliIo): Promise<number> },
  args: string[],
  /** Where the progress goes; passed in by a test that expects the command to throw. */
  progress: Recorded[] = [],
): Promise<{ code: number; out: string; progress: Recorded[] }> {
  let out = '';
  const io: CliIo = {
    stdout: (text) => (out += text),
    stderr: () => undefined,
    progress: (title, enabled, unit): Progress => {
      const recorded: Recorded = { title, enabled, unit, updates: [], finished: false };
      progress.push(recorded);
      return {
        update: (done, total, label) => {
          assert.ok(!recorded.finished, `${title}: update after finish`);
          recorded.updates.push({ done, total, label });
        },
        finish: () => {
          recorded.finished = true;
        },
      };
    },
  };
  return { code: await command.run(args, io), out, progress };
}

/** One progress, finished, counting up from 0 to below a fixed total. */
function assertCounts(progress: Recorded[], title: string, total: number): Recorded {
  assert.equal(progress.length, 1, `${title} starts one progress`);
  const [p] = progress;
  assert.equal(p.title, title);
  assert.ok(p.finished, `${title} erases its line`);
  assert.ok(p.updates.length > 0, `${title} reports`);
  p.updates.forEach((u, i) => {
    assert.equal(u.total, total, `${title} update ${i}`);
    assert.ok(u.done >= (p.updates[i - 1]?.done ?? 0) && u.done < u.total, `${title} counts up: ${JSON.stringify(u)}`);
  });
  assert.equal(p.updates[0].done, 0);
  return p;
}

test('sweep reports each size, and one size at a time gives the rows of the whole sweep', async () => {
  const args = ['--system', 'dgx-h100', '--nodes', '2', '--min-bytes', '8', '--max-bytes', '64M', '--factor', '3'];
  const { code, out, progress } = await run(sweepCommand, args);
  assert.equal(code, 0);
  const rows = out.split('\n').filter((l) => /^\s+\d+\s+\d+\s/.test(l));
  const p = assertCounts(progress, 'sweep', rows.length);
  assert.equal(p.updates.length, rows.length);
  assert.ok(p.enabled);
  assert.equal(p.updates.at(-1)?.label, '36.5 MiB', '8 × 3¹⁴ B, the last size under 64 MiB');
  const system = await loadSystem('dgx-h100', { nodes: 2 });
  for (const options of [
    { minBytes: asBytes(8), maxBytes: asBytes(1 << 30), factor: 1.7 },
    { minBytes: asBytes(3), maxBytes: asBytes(1000), factor: 1.01, dtype: 'fp16' as const },
  ]) {
    const silent: Progress = { update: () => undefined, finish: () => undefined };
    assert.deepEqual((await sweepInParallel(system, options, silent)).rows, sweepAllReduce(system, options));
  }
});

test('with --json nothing is reported, for every command that reports', async () => {
  const sweep = await run(sweepCommand, ['--system', 'dgx-h100', '--max-bytes', '1M', '--json']);
  const profile = await run(profileCommand, [join(ROOT, 'examples', 'llama2-7b-ddp.collective.yaml'), '--json']);
  for (const { progress } of [sweep, profile]) {
    assert.equal(progress.length, 1);
    assert.equal(progress[0].enabled, false, progress[0].title);
  }
});

test('profile reports its stages, the sweep among them', async () => {
  const config = join(ROOT, 'examples', 'llama2-7b-ddp.collective.yaml');
  const { code, progress } = await run(profileCommand, [config, '--sweep', 'bucket_cap_mb=1..64']);
  assert.equal(code, 0);
  const p = assertCounts(progress, 'profile', 3);
  assert.deepEqual(
    p.updates.map((u) => u.label),
    ['simulating the step', 'sweeping bucket_cap_mb=1..64', 'checking gradient scaling'],
  );
  const plain = await run(profileCommand, [config]);
  assert.equal(assertCounts(plain.progress, 'profile', 2).updates.length, 2);
});

test('calibrate reports its rounds', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-progress-'));
  try {
    const table = join(dir, 'predicted.txt');
    const sweep = await run(sweepCommand, ['--system', 'dgx-h100', '--min-bytes', '1M', '--max-bytes', '64M']);
    writeFileSync(table, sweep.out);
    const calibrate = await run(calibrateCommand, [table, '--system', 'dgx-h100']);
    assert.equal(calibrate.code, 0);
    const p = assertCounts(calibrate.progress, 'calibrate', 8);
    assert.deepEqual(
      p.updates.map((u) => u.done),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );
    assert.equal(p.updates.at(-1)?.label, 'settling and judging');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('import reports the bytes it has read of all its files, then that it parses, and nothing with --json', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-progress-'));
  try {
    const sweep = await run(sweepCommand, ['--system', 'dgx-h100', '--min-bytes', '1M', '--max-bytes', '64M']);
    // A long log: 3 MiB of comment lines before the table, so the reader reports after each 1 MiB piece.
    const long = join(dir, 'long.txt');
    writeFileSync(long, `${'# NCCL INFO a line of a long log\n'.repeat(100_000)}${sweep.out}`);
    const short = join(dir, 'short.txt');
    writeFileSync(short, sweep.out);
    const longBytes = statSync(long).size;
    const totalBytes = longBytes + statSync(short).size;
    const imported = await run(importCommand, [long]);
    assert.equal(imported.code, 0);
    assert.equal(imported.progress.length, 1);
    const [p] = imported.progress;
    assert.equal(p.unit, 'bytes');
    assert.ok(p.finished, 'the line is erased');
    assert.deepEqual(p.updates[0], { done: 0, total: longBytes, label: long });
    const reads = p.updates.filter((u) => u.label === long).slice(1);
    // One update per piece the reader reads (about 1 MiB), up to the whole file.
    assert.ok(reads.length >= 4, `${reads.length} reads of ${longBytes} bytes`);
    reads.forEach((u, i) => {
      const step = u.done - (reads[i - 1]?.done ?? 0);
      assert.ok(step > 0 && step <= 2 ** 20 + 1, `piece ${i}: ${step} bytes`);
    });
    assert.equal(reads.at(-1)?.done, longBytes);
    assert.deepEqual(p.updates.at(-1), { done: longBytes, total: longBytes, label: `${long} (parsing)` });

    // Two files: one total, counted up across both, each file named while it is read.
    const both: Recorded[] = [];
    // Two nccl-tests tables do not merge (only Kineto traces do), but both are read first.
    await assert.rejects(run(importCommand, [long, short], both), /only PyTorch profiler traces can be merged/);
    const updates = both[0].updates;
    assert.ok(updates.every((u) => u.total === totalBytes));
    updates.forEach((u, i) => assert.ok(u.done >= (updates[i - 1]?.done ?? 0), `counts up: ${JSON.stringify(u)}`));
    assert.deepEqual(updates.at(-1), { done: totalBytes, total: totalBytes, label: `${short} (parsing)` });

    const json = await run(importCommand, [long, '--json']);
    assert.equal(json.code, 0);
    assert.equal(json.progress[0].enabled, false, '--json turns progress off');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

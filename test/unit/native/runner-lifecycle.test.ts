// A harness that hangs is killed by the watchdog within the set time, cancel does the same, and no process of
// the run (ranks or what they forked) is left behind. Uses a Python test double, not torch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { runNative } from '../../../src/native/runner';
import { NativeRunError } from '../../../src/native/errors';

const HANG = resolve(import.meta.dirname, '..', '..', 'fixtures', 'native', 'hanging_harness.py');
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

/** Pids of every live process whose process group is one of `groups` (field 5 of /proc/<pid>/stat). */
function survivors(groups: number[], pids: number[]): number[] {
  const left: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const state = fields[0];
      const pgrp = Number(fields[2]);
      if (state !== 'Z' && (groups.includes(pgrp) || pids.includes(Number(name)))) left.push(Number(name));
    } catch {
      // The process ended while we looked.
    }
  }
  return left;
}

async function hangingRun(extra: {
  timeoutMs?: number;
  signal?: AbortSignal;
}): Promise<{ error: NativeRunError; ms: number; groups: number[]; grandchildren: number[] }> {
  const groups: number[] = [];
  const grandchildren: number[] = [];
  const started = Date.now();
  const error = await runNative({
    nproc: 3,
    sizesBytes: [1024],
    python: PYTHON,
    harness: HANG,
    onSpawn: (pid) => groups.push(pid),
    onProgress: (p) => {
      if (p.label === 'pids' && p.bytes) grandchildren.push(p.bytes);
    },
    ...extra,
  }).then(
    () => assert.fail('a hanging run must not succeed'),
    (e: unknown) => e as NativeRunError,
  );
  return { error, ms: Date.now() - started, groups, grandchildren };
}

test(
  'the watchdog kills a hung run within the set time and leaves no process',
  { skip: process.platform !== 'linux' && 'needs /proc' },
  async () => {
    const { error, ms, groups, grandchildren } = await hangingRun({ timeoutMs: 2000 });
    assert.ok(error instanceof NativeRunError);
    assert.equal(error.kind, 'watchdog');
    assert.match(error.message, /no result after 2 s/);
    assert.equal(groups.length, 3);
    assert.equal(grandchildren.length, 3, 'each rank reported the child it forked');
    // 2 s watchdog + 1.5 s SIGTERM grace (the double ignores SIGTERM) + slack.
    assert.ok(ms < 6000, `took ${ms} ms`);
    assert.deepEqual(survivors(groups, grandchildren), []);
  },
);

test('cancel kills every rank and its children', { skip: process.platform !== 'linux' && 'needs /proc' }, async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 800);
  const { error, ms, groups, grandchildren } = await hangingRun({ timeoutMs: 60_000, signal: controller.signal });
  assert.equal(error.kind, 'cancelled');
  assert.ok(ms < 5000, `took ${ms} ms`);
  assert.equal(groups.length, 3);
  assert.deepEqual(survivors(groups, grandchildren), []);
});

test('a missing interpreter is a clear no-python error', async () => {
  const error = await runNative({
    nproc: 2,
    sizesBytes: [1024],
    python: '/nonexistent/python3',
    harness: HANG,
    timeoutMs: 5000,
  }).then(
    () => assert.fail('must fail'),
    (e: unknown) => e as NativeRunError,
  );
  assert.equal(error.kind, 'no-python');
  assert.match(error.message, /Python not found at \/nonexistent\/python3/);
});

test('a rank that dies is reported with its exit code and stderr', async () => {
  const error = await runNative({
    nproc: 2,
    sizesBytes: [1024],
    python: PYTHON,
    harness: '/nonexistent/harness.py',
    timeoutMs: 10_000,
  }).then(
    () => assert.fail('must fail'),
    (e: unknown) => e as NativeRunError,
  );
  assert.equal(error.kind, 'rank-died');
  assert.match(error.message, /rank \d died \(exit code 2\)/);
  assert.match(error.message, /No such file or directory/);
});

test('a Python without torch is a clear no-torch error', async () => {
  const { mkdtempSync, mkdirSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  // A stand-in package that shadows any installed torch, as on a machine without it.
  const dir = mkdtempSync(join(tmpdir(), 'cp-notorch-'));
  try {
    mkdirSync(join(dir, 'torch'));
    writeFileSync(join(dir, 'torch', '__init__.py'), 'raise ImportError("No module named \'torch\'")\n');
    const harness = resolve(import.meta.dirname, '..', '..', '..', 'harness', 'collective_harness.py');
    const error = await runNative({
      nproc: 2,
      sizesBytes: [1024],
      python: PYTHON,
      harness,
      timeoutMs: 20_000,
      env: { PYTHONPATH: dir },
    }).then(
      () => assert.fail('must fail'),
      (e: unknown) => e as NativeRunError,
    );
    assert.equal(error.kind, 'no-torch');
    assert.match(error.message, /torch is not importable from/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

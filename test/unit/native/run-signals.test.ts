// `run` and its ranks under signals: SIGTERM, SIGHUP and SIGINT to the CLI all stop every rank's process tree,
// also processes that left the run's process groups with setsid() and hold its pipes; a run whose ranks finish
// but leave such a process behind still ends; a missing Python or torch is a one-line error (exit 2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runNative } from '../../../src/native/runner';
import { type NativeRunError } from '../../../src/native/errors';
import { builtCli, ROOT, runCli } from '../cli/run-cli';

const DOUBLE = resolve(ROOT, 'test', 'fixtures', 'native', 'setsid_harness.py');
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const LINUX = process.platform === 'linux' ? false : 'needs /proc and setsid';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** A pid with its state and command line, so a survivor says what it is. */
function describe(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    return `${pid} state ${stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)}: ${cmdline}`;
  } catch {
    return `${pid} (gone while described)`;
  }
}

/** Pids the test double wrote: the ranks and the setsid processes they left. */
function notedPids(dir: string): number[] {
  return readdirSync(dir).map(Number);
}

async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

test(
  'ranks that finish but leave a setsid process holding their pipes: the run ends and nothing is left',
  { skip: LINUX },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cp-setsid-'));
    const started = Date.now();
    const run = await runNative({
      nproc: 2,
      sizesBytes: [1024],
      python: PYTHON,
      harness: DOUBLE,
      timeoutMs: 30_000,
      env: { CP_DOUBLE_PID_DIR: dir, CP_DOUBLE_MODE: 'finish' },
    });
    assert.equal(run.env.python, 'test-double');
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
    const pids = notedPids(dir);
    assert.equal(pids.length, 4, 'two ranks and the two processes they left');
    assert.deepEqual(pids.filter(alive), []);
  },
);

test("cancel kills the processes that left the run's process groups too", { skip: LINUX }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-setsid-'));
  const controller = new AbortController();
  const running = runNative({
    nproc: 2,
    sizesBytes: [1024],
    python: PYTHON,
    harness: DOUBLE,
    timeoutMs: 60_000,
    signal: controller.signal,
    env: { CP_DOUBLE_PID_DIR: dir, CP_DOUBLE_MODE: 'hang' },
  });
  assert.ok(await waitFor(() => notedPids(dir).length === 4, 10_000), 'the double started');
  controller.abort();
  const error = await running.then(
    () => assert.fail('must not succeed'),
    (e: unknown) => e as NativeRunError,
  );
  assert.equal(error.kind, 'cancelled');
  assert.deepEqual(notedPids(dir).filter(alive), []);
});

for (const signal of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) {
  test(
    `${signal} to \`run\` kills every rank's tree, setsid included, and exits 128 + the signal`,
    { skip: LINUX },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'cp-signal-'));
      const child = spawn(
        process.execPath,
        [await builtCli(), 'run', '--python', PYTHON, '--nproc', '2', '--timeout', '120'],
        {
          env: { ...process.env, COLLECTIVE_PROFILER_HARNESS: DOUBLE, CP_DOUBLE_PID_DIR: dir, CP_DOUBLE_MODE: 'hang' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
      assert.ok(await waitFor(() => notedPids(dir).length === 4, 20_000), `the double started: ${stderr}`);
      const sentAt = Date.now();
      child.kill(signal);
      const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 15_000))]);
      if (code === 'hung') child.kill('SIGKILL');
      assert.notEqual(code, 'hung', 'the CLI exits after the signal');
      const expected = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 }[signal];
      assert.equal(code, expected, stderr);
      assert.ok(Date.now() - sentAt < 10_000);
      assert.match(
        stderr,
        new RegExp(`^error \\(cancelled\\): stopped by ${signal}; every rank's process tree was killed$`, 'm'),
      );
      // SIGKILL is delivered asynchronously: a process the CLI killed may still be tearing down (its memory and
      // files released) for a moment after the CLI exits on a loaded machine, so two seconds of settling are allowed.
      await waitFor(() => notedPids(dir).filter(alive).length === 0, 2000);
      assert.deepEqual(notedPids(dir).filter(alive).map(describe), []);
    },
  );
}

test('a missing Python and a Python without torch are one-line errors with exit 2', async () => {
  const missing = await runCli(['run', '--python', '/nonexistent/python3', '--nproc', '2']);
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(missing.stderr, /^error \(no-python\): no Python interpreter found \(tried \/nonexistent\/python3\)/);
  assert.equal(missing.stderr.trim().split('\n').length, 1, missing.stderr);
  const envCheck = await runCli(['run', '--env-check', '--python', '/nonexistent/python3']);
  assert.equal(envCheck.code, 2, envCheck.stderr);
  assert.equal(envCheck.stderr.trim().split('\n').length, 1, envCheck.stderr);
  // A stand-in package that shadows any installed torch, as on a machine without it.
  const shadow = mkdtempSync(join(tmpdir(), 'cp-notorch-'));
  try {
    mkdirSync(join(shadow, 'torch'));
    writeFileSync(join(shadow, 'torch', '__init__.py'), 'raise ImportError("No module named \'torch\'")\n');
    const r = spawnSync(process.execPath, [await builtCli(), 'run', '--python', PYTHON, '--nproc', '2'], {
      encoding: 'utf8',
      env: { ...process.env, PYTHONPATH: shadow },
      timeout: 60_000,
    });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^error \(no-torch\): /);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  } finally {
    rmSync(shadow, { recursive: true, force: true });
  }
});

test('--timeout past the limit is refused at once, never handed to a timer that overflows', async () => {
  const r = await runCli(['run', '--python', '/nonexistent/python3', '--timeout', '1e10']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^error: --timeout = 10000000000 is over the limit of 604,800 s \(docs\/limits\.md\)$/m);
});

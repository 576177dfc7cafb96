// Class 4, signals and children: `run` with a stand-in Python (a shell script) whose ranks sleep, ignore
// SIGTERM, fork daemons, flood stdout, or never answer the environment check. The answer is a CLI that ends in
// bounded time with its documented exit code, and no process of the run left anywhere (found through /proc by a
// marker in their environment, which setsid() and double forks keep).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import {
  assertBounded,
  assertUserError,
  cli,
  fakePython,
  notLinux,
  processesMarked,
  waitFor,
  type HostileCase,
  type HostileRun,
} from './round';

function started(dir: string): number {
  return existsSync(join(dir, 'marks')) ? readdirSync(join(dir, 'marks')).length : 0;
}

/** Runs `run` with the stand-in Python, marking every process it starts, and returns the result. */
async function runMarked(
  dir: string,
  python: string,
  extra: readonly string[],
  options: { limitMs: number; onStart?: (child: ChildProcess) => void },
): Promise<HostileRun> {
  return cli(['run', '--python', python, ...extra], {
    env: { CP_ROUND_MARK: dir },
    limitMs: options.limitMs,
    onStart: options.onStart,
  });
}

/** Nothing started by the run is alive a moment after the CLI ended. */
async function assertNothingLeft(dir: string): Promise<void> {
  const left = (await waitFor(() => processesMarked(`CP_ROUND_MARK=${dir}`).length === 0, 3000))
    ? []
    : processesMarked(`CP_ROUND_MARK=${dir}`);
  for (const pid of left) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  assert.deepEqual(left, [], 'processes of the run were left alive');
}

/** Sends `signal` to the CLI once `ranks` processes of the run (ranks, or the environment check) have started. */
function signalWhenStarted(dir: string, ranks: number, signal: NodeJS.Signals) {
  return (child: ChildProcess): void => {
    void (async () => {
      await waitFor(() => started(dir) >= ranks, 20_000);
      if (child.pid !== undefined) process.kill(child.pid, signal);
    })();
  };
}

function signalCase(id: string, signal: NodeJS.Signals, rankBody: string, input: string): HostileCase {
  return {
    id,
    cls: 4,
    input,
    expect: `the CLI ends within 15 s of ${signal} with 128 + its number, every rank process killed`,
    skip: notLinux,
    async run(dir) {
      const python = fakePython(dir, rankBody);
      const r = await runMarked(dir, python, ['--nproc', '3'], {
        limitMs: 40_000,
        onStart: signalWhenStarted(dir, 3, signal),
      });
      assertBounded(r, `after ${signal}`);
      const number = { SIGTERM: 15, SIGHUP: 1, SIGQUIT: 3, SIGINT: 2 }[signal as string];
      assert.equal(r.code, 128 + (number ?? 0), r.stderr);
      await assertNothingLeft(dir);
    },
  };
}

export const SIGNAL_CASES: readonly HostileCase[] = [
  signalCase('sig-term-sleeping', 'SIGTERM', 'sleep 300', 'SIGTERM to run while 3 ranks sleep'),
  signalCase('sig-hup-starting', 'SIGHUP', 'sleep 300 & wait', 'SIGHUP to run while its ranks start a child each'),
  signalCase('sig-quit', 'SIGQUIT', 'sleep 300', 'SIGQUIT to run while its ranks run'),
  signalCase(
    'sig-term-ignored',
    'SIGTERM',
    "trap '' TERM; sleep 300 & wait; sleep 300",
    'SIGTERM to run whose ranks ignore SIGTERM',
  ),
  {
    id: 'sig-term-env-check',
    cls: 4,
    input: 'SIGTERM to run during the environment check of a Python that never answers',
    expect: 'ends within 15 s with 143; the Python is killed',
    skip: notLinux,
    async run(dir) {
      // The check marks its start, so the signal comes while it runs (not before the CLI set up its handlers).
      const python = fakePython(dir, 'exit 0', `mkdir -p "${dir}/marks"; touch "${dir}/marks/env"; sleep 300`);
      const r = await runMarked(dir, python, [], { limitMs: 30_000, onStart: signalWhenStarted(dir, 1, 'SIGTERM') });
      assertBounded(r);
      assert.equal(r.code, 143, r.stderr);
      await assertNothingLeft(dir);
    },
  },
  {
    id: 'sig-daemon-rank',
    cls: 4,
    input: 'ranks that fork a setsid daemon holding their pipes, then exit 0 without a result',
    expect: 'ends within 30 s, exit 1 naming the ranks, the daemons killed',
    skip: notLinux,
    async run(dir) {
      const python = fakePython(dir, 'setsid sh -c "sleep 300" & exit 0');
      const r = await runMarked(dir, python, ['--nproc', '2'], { limitMs: 30_000 });
      assertUserError(r, { code: 1, names: /rank|result/, oneLine: false });
      await assertNothingLeft(dir);
    },
  },
  {
    id: 'sig-rank-floods-stdout',
    cls: 4,
    input: 'a rank that prints 200 MB to stdout without a newline, then sleeps',
    expect: 'ends (watchdog --timeout 20) in bounded time and memory, exit 1, the rank killed',
    skip: notLinux,
    async run(dir) {
      const python = fakePython(dir, "head -c 200000000 /dev/zero | tr '\\000' a; sleep 300");
      const r = await runMarked(dir, python, ['--nproc', '1', '--timeout', '20'], { limitMs: 60_000 });
      assertUserError(r, { code: 1, names: /./, oneLine: false });
      await assertNothingLeft(dir);
    },
  },
  {
    id: 'sig-env-check-never-exits',
    cls: 4,
    input: 'run --timeout 3 with a Python that is a shell script that never exits',
    expect: 'ends within the timeout and a grace, one line, exit 1 or 2; the script killed',
    skip: notLinux,
    async run(dir) {
      const python = fakePython(dir, 'exit 0', 'sleep 300');
      const r = await runMarked(dir, python, ['--timeout', '3'], { limitMs: 20_000 });
      assertBounded(r);
      assert.ok(r.code === 1 || r.code === 2, `exit ${r.code}: ${r.stderr}`);
      assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
      await assertNothingLeft(dir);
    },
  },
  {
    id: 'sig-env-check-grandchild',
    cls: 4,
    input: 'a Python whose environment check answers, but leaves a child holding its stdout',
    expect: 'the check is not held up by the child: the run goes on (or fails) within 30 s; the child killed',
    skip: notLinux,
    async run(dir) {
      const env = `sleep 300 & echo '{"type":"env","python":"3.11","torch":"2.4-fake","distributed":true,"backend":"gloo","gpuCount":0,"gloo":true,"nccl":false}'`;
      const python = fakePython(dir, 'exit 3', env);
      const r = await runMarked(dir, python, ['--nproc', '1', '--timeout', '10'], { limitMs: 40_000 });
      assertBounded(r);
      assert.ok(r.code === 1 || r.code === 2, `exit ${r.code}: ${r.stderr}`);
      await assertNothingLeft(dir);
    },
  },
  {
    id: 'sig-env-check-floods',
    cls: 4,
    input: 'a Python that prints 100 MB on stdout when asked for its environment',
    expect: 'exit 2, one line, bounded memory',
    skip: notLinux,
    async run(dir) {
      const python = fakePython(dir, 'exit 0', "head -c 100000000 /dev/zero | tr '\\000' '{'");
      const r = await runMarked(dir, python, [], { limitMs: 40_000 });
      assertUserError(r, { names: /fake-python/ });
      await assertNothingLeft(dir);
    },
  },
  {
    id: 'sig-python-is-folder',
    cls: 4,
    input: 'run --python <a folder>',
    expect: 'exit 2, one line naming the folder and why it cannot run',
    async run(dir) {
      mkdirSync(join(dir, 'venv'));
      const r = await cli(['run', '--python', join(dir, 'venv')]);
      assertUserError(r, { names: /venv.*(folder|directory|permission|EACCES)/i });
    },
  },
  {
    id: 'sig-timeout-tiny',
    cls: 4,
    input: 'run --timeout 1e-9 with ranks that sleep',
    expect: 'the watchdog ends the run at once: exit 1 (or 2 for a timeout too small), no rank left',
    skip: notLinux,
    async run(dir) {
      const python = fakePython(dir, 'sleep 300');
      const r = await runMarked(dir, python, ['--nproc', '2', '--timeout', '1e-9'], { limitMs: 30_000 });
      assertBounded(r);
      assert.ok(r.code === 1 || r.code === 2, `exit ${r.code}: ${r.stderr}`);
      await assertNothingLeft(dir);
    },
  },
];

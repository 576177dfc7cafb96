// Finds a Python with torch and reports what it offers: torch version, backend, GPU count, NCCL version.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { NativeRunError } from './errors';
import { killGroups, newRunToken, RUN_TOKEN_ENV, spawnGroup } from './process-tree';

export interface NativeEnvironment {
  readonly python: string;
  readonly pythonVersion: string;
  readonly torch: string;
  readonly backend: 'nccl' | 'gloo';
  readonly gpuCount: number;
  readonly ncclVersion: string | null;
  readonly cudaVersion: string | null;
  readonly gloo: boolean;
  readonly nccl: boolean;
}

/**
 * Where the harness lives next to the bundle (dist/../harness) or the sources (src/native/../../harness);
 * $COLLECTIVE_PROFILER_HARNESS names another one (a site's own, or the lifecycle tests' test doubles).
 */
export function defaultHarnessPath(): string {
  const chosen = process.env.COLLECTIVE_PROFILER_HARNESS;
  if (chosen && chosen.trim() !== '') return chosen;
  const here = typeof __dirname === 'string' ? __dirname : process.cwd();
  const candidates = [join(here, '..', 'harness'), join(here, '..', '..', 'harness'), join(process.cwd(), 'harness')];
  for (const dir of candidates)
    if (existsSync(join(dir, 'collective_harness.py'))) return join(dir, 'collective_harness.py');
  return join(candidates[0], 'collective_harness.py');
}

/** The interpreters to try, best first: the setting, $COLLECTIVE_PROFILER_PYTHON, Debian's, then PATH's. */
export function pythonCandidates(configured?: string): string[] {
  const list = [configured, process.env.COLLECTIVE_PROFILER_PYTHON, '/usr/bin/python3', 'python3', 'python'];
  return [...new Set(list.filter((p): p is string => typeof p === 'string' && p.trim() !== ''))];
}

/** Output kept from the environment check: its answer is one short JSON line; a flood is cut here. */
const CHECK_OUTPUT_CAP_CHARS = 1 << 20;
/** How long the check's pipes may stay open after the interpreter exited (a child of it may hold them). */
const CHECK_DRAIN_MS = 500;

interface CheckRun {
  readonly code: number | string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly missing: boolean;
  readonly timedOut: boolean;
}

/**
 * Runs `python args` in its own process group, as the ranks are run: the answer comes when the interpreter
 * exits (its pipes get a short drain, never a wait on a child that holds them), output past a cap is dropped,
 * and on exit, timeout or abort the whole group and anything carrying its token is killed, so a check that
 * hangs, floods or leaves a daemon behind costs at most `timeoutMs`.
 */
function run(python: string, args: string[], timeoutMs: number, signal?: AbortSignal): Promise<CheckRun> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new NativeRunError('cancelled', 'cancelled before the environment check'));
    const token = newRunToken();
    const child = spawnGroup(python, args, { ...process.env, [RUN_TOKEN_ENV]: token });
    let stdout = '';
    let stderr = '';
    let finished = false;
    let timedOut = false;
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      if (stdout.length < CHECK_OUTPUT_CAP_CHARS) stdout += chunk.slice(0, CHECK_OUTPUT_CAP_CHARS - stdout.length);
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-CHECK_OUTPUT_CAP_CHARS);
    });
    const finish = (outcome: { code: number | string | null; missing?: boolean } | NativeRunError): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      const done = (): void => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        if (outcome instanceof NativeRunError) reject(outcome);
        else resolve({ code: outcome.code, stdout, stderr, missing: outcome.missing ?? false, timedOut });
      };
      const pids = child.pid === undefined ? [] : [child.pid];
      killGroups(pids, 200, token).then(done, done);
    };
    const onAbort = (): void => finish(new NativeRunError('cancelled', 'the environment check was cancelled'));
    signal?.addEventListener('abort', onAbort);
    const timer = setTimeout(
      () => {
        timedOut = true;
        finish({ code: null });
      },
      Math.min(timeoutMs, 2 ** 31 - 1),
    );
    child.on('error', (error: NodeJS.ErrnoException) =>
      finish({ code: error.code ?? 'error', missing: error.code === 'ENOENT' }),
    );
    child.on('exit', (code, exitSignal) => {
      // The answer is on stdout before the exit; a child the check left behind may hold the pipe open.
      if (!child.stdout || child.stdout.readableEnded) return finish({ code: code ?? exitSignal });
      const drained = setTimeout(() => finish({ code: code ?? exitSignal }), CHECK_DRAIN_MS);
      child.stdout.once('end', () => {
        clearTimeout(drained);
        finish({ code: code ?? exitSignal });
      });
    });
  });
}

/** Why an interpreter that ran gave no environment, in a few words. */
function whyNoAnswer(result: CheckRun, timeoutMs: number): string {
  if (result.timedOut) return `no answer within ${Math.round(timeoutMs / 1000)} s`;
  if (typeof result.code === 'string' && result.code !== 'error')
    return result.code === 'EACCES'
      ? 'cannot be run (EACCES: not an executable file)'
      : `cannot be run (${result.code})`;
  const last = result.stderr.trim().split('\n').pop()?.trim();
  return last ? last.slice(0, 500) : `exit ${String(result.code)} without an answer`;
}

/**
 * Returns the first candidate whose torch imports, with its environment. With an explicit `python`, only that
 * one is tried, so a wrong setting is reported rather than silently replaced.
 */
export async function checkEnvironment(
  options: { python?: string; harness?: string; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<NativeEnvironment> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const harness = options.harness ?? defaultHarnessPath();
  const candidates = options.python ? [options.python] : pythonCandidates();
  const problems: string[] = [];
  let sawPython = false;
  for (const python of candidates) {
    const result = await run(python, [harness, '--env-check'], timeoutMs, options.signal);
    if (result.missing) {
      problems.push(`${python}: not found`);
      continue;
    }
    sawPython = true;
    const line = result.stdout.split('\n').find((l) => l.startsWith('{'));
    let parsed: Record<string, unknown> | undefined;
    try {
      parsed = line ? (JSON.parse(line) as Record<string, unknown>) : undefined;
    } catch {
      // A Python that prints something else that starts with a brace is reported with its last stderr line below.
    }
    if (parsed?.type === 'env') {
      if (!parsed.distributed) {
        problems.push(`${python}: torch ${String(parsed.torch)} has no torch.distributed`);
        continue;
      }
      return {
        python,
        pythonVersion: String(parsed.python),
        torch: String(parsed.torch),
        backend: parsed.backend === 'nccl' ? 'nccl' : 'gloo',
        gpuCount: Number(parsed.gpuCount ?? 0),
        ncclVersion: (parsed.ncclVersion as string | null) ?? null,
        cudaVersion: (parsed.cudaVersion as string | null) ?? null,
        gloo: Boolean(parsed.gloo),
        nccl: Boolean(parsed.nccl),
      };
    }
    problems.push(`${python}: ${parsed?.type === 'error' ? String(parsed.message) : whyNoAnswer(result, timeoutMs)}`);
  }
  if (!sawPython)
    throw new NativeRunError(
      'no-python',
      `no Python interpreter found (tried ${candidates.join(', ')}); set the Python path`,
    );
  throw new NativeRunError('no-torch', `no Python with a working torch.distributed: ${problems.join('; ')}`);
}

// Finds a Python with torch and reports what it offers: torch version, backend, GPU count, NCCL version.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { NativeRunError } from './errors';

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

function run(
  python: string,
  args: string[],
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string; missing: boolean }> {
  return new Promise((resolve) => {
    execFile(python, args, { timeout: timeoutMs, maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      const missing = (error as NodeJS.ErrnoException | null)?.code === 'ENOENT';
      resolve({
        code: error ? (((error as { code?: number }).code as number | null) ?? 1) : 0,
        stdout,
        stderr,
        missing,
      });
    });
  });
}

/**
 * Returns the first candidate whose torch imports, with its environment. With an explicit `python`, only that
 * one is tried, so a wrong setting is reported rather than silently replaced.
 */
export async function checkEnvironment(
  options: { python?: string; harness?: string; timeoutMs?: number } = {},
): Promise<NativeEnvironment> {
  const harness = options.harness ?? defaultHarnessPath();
  const candidates = options.python ? [options.python] : pythonCandidates();
  const problems: string[] = [];
  let sawPython = false;
  for (const python of candidates) {
    const result = await run(python, [harness, '--env-check'], options.timeoutMs ?? 60_000);
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
    problems.push(
      `${python}: ${parsed?.type === 'error' ? String(parsed.message) : (result.stderr.trim().split('\n').pop() ?? `exit ${result.code}`)}`,
    );
  }
  if (!sawPython)
    throw new NativeRunError(
      'no-python',
      `no Python interpreter found (tried ${candidates.join(', ')}); set the Python path`,
    );
  throw new NativeRunError('no-torch', `no Python with a working torch.distributed: ${problems.join('; ')}`);
}

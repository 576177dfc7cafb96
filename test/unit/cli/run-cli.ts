// Runs the built CLI (`node dist/cli.js`) as a user would. `npm test` builds first; when dist/cli.js is missing
// (a subset run on a fresh clone) the CLI is bundled once into a temporary folder with the same esbuild options.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';

export const ROOT = resolve(import.meta.dirname, '..', '..', '..');
let cliPath: string | undefined;

/** The CLI bundle the tests run: dist/cli.js, or a temporary build of it. */
export async function builtCli(): Promise<string> {
  if (cliPath) return cliPath;
  const dist = join(ROOT, 'dist', 'cli.js');
  if (existsSync(dist)) return (cliPath = dist);
  const esbuild = await import('esbuild');
  const out = join(mkdtempSync(join(tmpdir(), 'cp-cli-')), 'cli.js');
  await esbuild.build({
    entryPoints: [join(ROOT, 'src', 'cli', 'main.ts')],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'error',
  });
  return (cliPath = out);
}

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export async function runCli(args: readonly string[], cwd = ROOT): Promise<CliRun> {
  const result = spawnSync(process.execPath, [await builtCli(), ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

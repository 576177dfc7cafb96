// The machinery of the third hostile round (issue 15): a case names its class, its input and the clear answer
// it expects, and runs the built CLI as a user would, in its own process group, under a wall-clock limit and
// with its peak memory measured, so a hang or an unbounded allocation fails the case instead of the suite.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { builtCli, ROOT } from '../cli/run-cli';

/** The seven classes of issue 15, in its order. */
export const CLASSES = {
  1: 'output paths',
  2: 'inputs that are not regular files',
  3: 'sizes with no upper bound',
  4: 'signals and children',
  5: '"clean" when nothing was checked',
  6: 'messages',
  7: 'corrupt values accepted as data',
} as const;
export type HostileClass = keyof typeof CLASSES;

export interface HostileCase {
  readonly id: string;
  readonly cls: HostileClass;
  /** The hostile input, in words. */
  readonly input: string;
  /** The clear answer expected, in words. */
  readonly expect: string;
  /** Why the case cannot run here (not root, no /proc), or undefined. */
  readonly skip?: () => string | undefined;
  /** Throws (an assertion) when the answer is not the expected one. */
  run(dir: string): Promise<void>;
}

export const FIXTURES_REAL = resolve(ROOT, '..', 'shared', 'fixtures-real');
export const EXAMPLES = resolve(ROOT, 'examples');
export const LLAMA_CONFIG = join(EXAMPLES, 'llama2-7b-ddp.collective.yaml');
/** Peak memory a single CLI run may take on hostile input; the largest legitimate cases stay far below it. */
export const MAX_RSS_BYTES = 1024 * 1024 * 1024;
/** Output kept per stream: a run that prints more is itself a failure the assertions see. */
const KEEP_OUTPUT_CHARS = 4 * 1024 * 1024;
const PRELOAD = pathToFileURL(resolve(import.meta.dirname, 'rss-preload.mjs')).href;

export interface HostileRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly stdoutBytes: number;
  readonly wallMs: number;
  /** Peak resident memory of the CLI process, or undefined when it did not exit by itself. */
  readonly maxRssBytes: number | undefined;
  readonly timedOut: boolean;
}

export interface RunOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly limitMs?: number;
  /** Called once the CLI has started, with its process (to send signals). */
  readonly onStart?: (child: ChildProcess) => void;
  /** What stdin is: closed at once (default), or a pipe held open and never written. */
  readonly stdin?: 'closed' | 'held-open';
}

/** Runs `node dist/cli.js ...args` and collects what a user would see. */
export async function cli(args: readonly string[], options: RunOptions = {}): Promise<HostileRun> {
  const rssDir = mkdtempSync(join(tmpdir(), 'cp-rss-'));
  const rssFile = join(rssDir, 'rss');
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', PRELOAD, await builtCli(), ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...options.env, CP_HOSTILE_RSS_FILE: rssFile },
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  if (options.stdin !== 'held-open') child.stdin?.end();
  let stdout = '';
  let stderr = '';
  let stdoutBytes = 0;
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdoutBytes += Buffer.byteLength(chunk);
    if (stdout.length < KEEP_OUTPUT_CHARS) stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    if (stderr.length < KEEP_OUTPUT_CHARS) stderr += chunk;
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child, 'SIGKILL');
  }, options.limitMs ?? 60_000);
  options.onStart?.(child);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done) =>
    child.on('close', (c, s) => done([c, s])),
  );
  clearTimeout(timer);
  child.stdin?.destroy();
  killGroup(child, 'SIGKILL');
  let maxRssBytes: number | undefined;
  try {
    maxRssBytes = Number(readFileSync(rssFile, 'utf8')) * 1024;
  } catch {
    maxRssBytes = undefined;
  }
  rmSync(rssDir, { recursive: true, force: true });
  return { code, signal, stdout, stderr, stdoutBytes, wallMs: performance.now() - started, maxRssBytes, timedOut };
}

/** Kills the CLI's process group (itself and anything it started in that group). */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

// eslint-disable-next-line no-control-regex -- the assertion is that no control character reaches the terminal.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** The run ended by itself in time, within the memory bound, without an internal error or a stack trace. */
export function assertBounded(r: HostileRun, what = ''): void {
  const context = `${what}\nexit ${r.code} signal ${r.signal}\nstderr: ${r.stderr.slice(0, 2000)}`;
  assert.ok(!r.timedOut, `did not end within its limit (${Math.round(r.wallMs)} ms)${context}`);
  assert.ok(r.maxRssBytes !== undefined, `killed before it could exit (${r.signal})${context}`);
  assert.ok(r.maxRssBytes <= MAX_RSS_BYTES, `peak memory ${Math.round(r.maxRssBytes / 2 ** 20)} MiB${context}`);
  assert.ok(r.code !== 70 && !/internal error/.test(r.stderr), `internal error${context}`);
  assert.ok(!/^\s+at .+:\d+:\d+\)?$/m.test(r.stderr), `a stack trace reached the user${context}`);
  assert.ok(!CONTROL.test(r.stderr), `a control character reached stderr: ${JSON.stringify(r.stderr.slice(0, 400))}`);
}

export interface UserErrorExpectation {
  /** The exit code documented for it (2 usage or input error, 1 findings or a failed run). */
  readonly code?: number;
  /** What the message must name: a position, a key, a value, a limit. */
  readonly names: RegExp;
  /** Exactly one line on stderr (the default); false where every problem of a file is listed, one per line. */
  readonly oneLine?: boolean;
}

/** A clear user error: the documented exit code, `error: ...` lines only, naming what was wrong. */
export function assertUserError(r: HostileRun, expected: UserErrorExpectation): void {
  assertBounded(r);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(r.code, expected.code ?? 2, `exit code\nstderr: ${r.stderr.slice(0, 2000)}`);
  if (expected.oneLine ?? true) assert.equal(lines.length, 1, `one line on stderr, got:\n${r.stderr.slice(0, 2000)}`);
  assert.match(lines[0], /^error/, r.stderr.slice(0, 2000));
  for (const line of lines) assert.match(line, /^(error| {2})/, `a line that is not part of an error: ${line}`);
  assert.match(r.stderr, expected.names);
}

/** No line of `text` is one that input forged: text from input may appear inside a line, never start one. */
export function assertNoForgedLine(text: string, marker = 'forged'): void {
  for (const line of text.split('\n'))
    assert.ok(!line.trimStart().startsWith(`error: ${marker}`), `a forged line: ${JSON.stringify(line)}`);
}

export function fresh(prefix = 'cp-round3-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * A stand-in for Python: a shell script that answers the environment check like a Python with torch and gloo,
 * then runs `rankBody` as each rank. $CP_MARK_DIR collects one file per started rank.
 */
export function fakePython(dir: string, rankBody: string, envCheckBody?: string): string {
  const path = join(dir, 'fake-python');
  const env = `echo '{"type":"env","python":"3.11","torch":"2.4-fake","distributed":true,"backend":"gloo","gpuCount":0,"gloo":true,"nccl":false}'`;
  writeFileSync(
    path,
    [
      '#!/bin/sh',
      'for a in "$@"; do if [ "$a" = "--env-check" ]; then',
      envCheckBody ?? env,
      'exit 0; fi; done',
      `mkdir -p "${dir}/marks"; touch "${dir}/marks/$$"`,
      rankBody,
      '',
    ].join('\n'),
  );
  chmodSync(path, 0o755);
  return path;
}

/** Live processes (not zombies) whose command line or environment contains `marker`. */
export function processesMarked(marker: string): number[] {
  const found: number[] = [];
  for (const name of safeReaddir('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'latin1');
      const environ = readFileSync(`/proc/${name}/environ`, 'latin1');
      if (cmdline.includes(marker) || environ.includes(marker)) found.push(Number(name));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

export async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

export const notRoot = (): string | undefined =>
  process.getuid?.() === 0 ? undefined : 'needs root (mount, mknod, bind mounts)';
export const notLinux = (): string | undefined => (process.platform === 'linux' ? undefined : 'needs Linux /proc');

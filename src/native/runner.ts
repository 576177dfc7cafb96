// Runs the harness on N local ranks (launched directly through env://, or through torchrun), streams progress,
// and guarantees that no process outlives the run: cancel and the hang watchdog kill every rank's process group.
import type { ChildProcess } from 'node:child_process';
import { NativeRunError, classifyFailure, tail } from './errors';
import {
  parseHarnessLine,
  type HarnessRun,
  type HarnessEnv,
  type HarnessLine,
  type HarnessProgress,
  type HarnessResult,
  type HarnessSpan,
} from './harness-protocol';
import { freeLoopbackPort, killGroups, newRunToken, RUN_TOKEN_ENV, spawnGroup } from './process-tree';
import { defaultHarnessPath } from './python';

export interface NativeRunOptions {
  readonly nproc: number;
  readonly sizesBytes: readonly number[];
  readonly bucketsBytes?: readonly number[];
  readonly algorithms?: readonly ('ring' | 'tree')[];
  readonly backend?: 'auto' | 'gloo' | 'nccl';
  readonly iters?: number;
  readonly warmup?: number;
  readonly python?: string;
  readonly harness?: string;
  /** 'direct' starts one process per rank itself; 'torchrun' hands that to torch.distributed.run. */
  readonly launcher?: 'direct' | 'torchrun';
  /** The watchdog: a run with no end after this long is killed as hung. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: HarnessProgress) => void;
  /** Called with each rank's process id as it starts (tests check /proc with these). */
  readonly onSpawn?: (pid: number) => void;
  readonly env?: NodeJS.ProcessEnv;
}

export interface NativeRunResult extends HarnessRun {
  readonly pids: readonly number[];
  readonly wallMs: number;
}

const STDERR_CAP = 64 * 1024;
/** The longest stdout line a rank may print: the harness's largest (a result with its per-step spans) is far less. */
const HARNESS_LINE_CAP_CHARS = 64 * 2 ** 20;
/** Node's timers take at most 2^31 - 1 ms; a longer delay overflows and fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** How long a dead rank's stderr may take to deliver its last bytes; a grandchild holding the pipe must not stall us. */
const STDERR_DRAIN_MS = 500;

/** Calls `then` once the stream has ended or closed, or after `limitMs`, whichever comes first. */
function afterStreamEnds(
  stream: (NodeJS.ReadableStream & { readableEnded?: boolean }) | null | undefined,
  limitMs: number,
  then: () => void,
): void {
  if (!stream || stream.readableEnded) return then();
  let done = false;
  const finish = (): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    then();
  };
  const timer = setTimeout(finish, limitMs);
  stream.once('end', finish);
  stream.once('close', finish);
}

function harnessArgs(options: NativeRunOptions): string[] {
  return [
    '--sizes',
    options.sizesBytes.join(','),
    ...(options.bucketsBytes?.length ? ['--buckets', options.bucketsBytes.join(',')] : []),
    '--algorithms',
    (options.algorithms ?? ['ring', 'tree']).join(','),
    '--backend',
    options.backend ?? 'auto',
    '--iters',
    String(options.iters ?? 5),
    '--warmup',
    String(options.warmup ?? 1),
    '--timeout-s',
    String(Math.max(10, Math.ceil((options.timeoutMs ?? 300_000) / 1000))),
  ];
}

export async function runNative(options: NativeRunOptions): Promise<NativeRunResult> {
  if (!(options.nproc >= 1)) throw new NativeRunError('launch', `--nproc must be at least 1, got ${options.nproc}`);
  if (options.signal?.aborted) throw new NativeRunError('cancelled', 'cancelled before start');
  const python = options.python ?? '/usr/bin/python3';
  const harness = options.harness ?? defaultHarnessPath();
  const port = await freeLoopbackPort();
  const started = Date.now();
  const token = newRunToken();
  const baseEnv = {
    ...process.env,
    ...options.env,
    MASTER_ADDR: '127.0.0.1',
    MASTER_PORT: String(port),
    PYTHONUNBUFFERED: '1',
    [RUN_TOKEN_ENV]: token,
  };
  const children: { child: ChildProcess; rank: number; stderr: string }[] = [];
  const launch = (args: string[], env: NodeJS.ProcessEnv, rank: number): void => {
    const child = spawnGroup(python, args, env);
    children.push({ child, rank, stderr: '' });
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
  };
  if (options.launcher === 'torchrun') {
    launch(
      [
        '-m',
        'torch.distributed.run',
        `--nproc_per_node=${options.nproc}`,
        '--nnodes=1',
        '--master_addr=127.0.0.1',
        `--master_port=${port}`,
        harness,
        ...harnessArgs(options),
      ],
      baseEnv,
      0,
    );
  } else {
    for (let rank = 0; rank < options.nproc; rank++) {
      launch(
        [harness, ...harnessArgs(options)],
        {
          ...baseEnv,
          RANK: String(rank),
          WORLD_SIZE: String(options.nproc),
          LOCAL_RANK: String(rank),
          LOCAL_WORLD_SIZE: String(options.nproc),
        },
        rank,
      );
    }
  }
  const pids = children.map((c) => c.child.pid).filter((p): p is number => p !== undefined);
  const lines: HarnessLine[] = [];
  return new Promise<NativeRunResult>((resolve, reject) => {
    let settled = false;
    let exited = 0;
    const cleanup = (): void => {
      clearTimeout(watchdog);
      options.signal?.removeEventListener('abort', onAbort);
    };
    // A process that outlived its rank (one that called setsid, say) may hold the pipes open forever: once the
    // run is decided they are closed on our side, so the CLI never waits on them.
    const releasePipes = (): void => {
      for (const { child } of children) {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }
    };
    const fail = (error: NativeRunError): void => {
      if (settled) return;
      settled = true;
      cleanup();
      const done = (): void => {
        releasePipes();
        reject(error);
      };
      killGroups(pids, undefined, token).then(done, done);
    };
    const onAbort = (): void => fail(new NativeRunError('cancelled', 'the run was cancelled; every rank was stopped'));
    options.signal?.addEventListener('abort', onAbort);
    const timeoutMs = Math.min(options.timeoutMs ?? 300_000, MAX_TIMER_MS);
    const watchdog = setTimeout(
      () =>
        fail(
          new NativeRunError(
            'watchdog',
            `no result after ${Math.round(timeoutMs / 1000)} s: a collective hung, so all ${children.length} rank process groups were killed`,
          ),
        ),
      timeoutMs,
    );
    for (const entry of children) {
      // The unfinished line is kept as pieces and joined only when its newline arrives: appending every chunk to
      // one string and splitting it again would cost the square of a long line's length.
      let pending: string[] = [];
      let pendingChars = 0;
      entry.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        if (settled) return;
        const parts = chunk.split('\n');
        const last = parts.pop() ?? '';
        if (parts.length > 0) {
          parts[0] = pending.join('') + parts[0];
          pending = [];
          pendingChars = 0;
        }
        if (last !== '') {
          pending.push(last);
          pendingChars += last.length;
        }
        if (pendingChars + Math.max(0, ...parts.map((p) => p.length)) > HARNESS_LINE_CAP_CHARS) {
          fail(
            new NativeRunError(
              'bad-output',
              `rank ${entry.rank} printed a line longer than ${HARNESS_LINE_CAP_CHARS / 2 ** 20} Mi characters; the harness never does, so the run was stopped`,
            ),
          );
          return;
        }
        for (const part of parts) {
          const line = parseHarnessLine(part);
          if (!line) continue;
          lines.push(line);
          if (line.type === 'progress') options.onProgress?.(line);
          if (line.type === 'error') fail(errorFromHarness(line, entry.stderr));
        }
      });
      entry.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        entry.stderr = (entry.stderr + chunk).slice(-STDERR_CAP);
      });
      entry.child.on('error', (error: NodeJS.ErrnoException) => {
        fail(
          error.code === 'ENOENT'
            ? new NativeRunError('no-python', `Python not found at ${python}; set the Python path`)
            : new NativeRunError('launch', `could not start ${python}: ${error.message}`),
        );
      });
      entry.child.on('exit', (code, signal) => {
        exited++;
        if (settled) return;
        if (code !== 0) {
          // 'exit' can fire before the last stderr bytes are read: wait (briefly) for stderr to end, so the report
          // quotes what the rank said as it died.
          afterStreamEnds(entry.child.stderr, STDERR_DRAIN_MS, () => {
            const known = classifyFailure(entry.stderr);
            const who = options.launcher === 'torchrun' ? 'torchrun' : `rank ${entry.rank}`;
            fail(
              new NativeRunError(
                known?.kind ?? 'rank-died',
                `${who} died (${signal ? `signal ${signal}` : `exit code ${code}`})${known ? `: ${known.hint}` : ''}\n${tail(entry.stderr)}`,
                { rank: entry.rank, exitCode: code, signal, stderrTail: tail(entry.stderr) },
              ),
            );
          });
          return;
        }
        if (exited < children.length) return;
        settled = true;
        cleanup();
        // Every rank ended; whatever they left running (a setsid daemon) is stopped before the run is reported,
        // and the last lines are read ('exit' can come before them) for at most STDERR_DRAIN_MS per rank.
        const finish = (): void => {
          releasePipes();
          const env = lines.find((l): l is HarnessEnv => l.type === 'env');
          if (!env || !lines.some((l) => l.type === 'done')) {
            reject(new NativeRunError('bad-output', `the harness ended without results\n${tail(children[0].stderr)}`));
            return;
          }
          resolve({
            env,
            results: lines.filter((l): l is HarnessResult => l.type === 'result'),
            spans: lines.filter((l): l is HarnessSpan => l.type === 'span'),
            pids,
            wallMs: Date.now() - started,
          });
        };
        const drained = Promise.all(
          children.map(
            ({ child }) => new Promise<void>((done) => afterStreamEnds(child.stdout, STDERR_DRAIN_MS, done)),
          ),
        );
        drained.then(() => killGroups(pids, undefined, token)).then(finish, finish);
      });
    }
  });
}

function errorFromHarness(line: { kind: string; rank?: number; message: string }, stderr: string): NativeRunError {
  const kind =
    line.kind === 'no-torch' ? 'no-torch' : line.kind === 'nccl' ? 'nccl' : line.kind === 'cuda' ? 'cuda' : 'harness';
  return new NativeRunError(kind, `${line.rank !== undefined ? `rank ${line.rank}: ` : ''}${line.message}`, {
    rank: line.rank,
    stderrTail: tail(stderr),
  });
}

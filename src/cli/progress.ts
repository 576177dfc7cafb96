// Progress for work that can take more than a second (validate's datasets, check's files, calibrate's rounds,
// sweep's sizes, profile's stages, import's files): one line on stderr,
// rewritten in place, shown only on a terminal, only once a second has passed, and never with machine-readable
// output or in CI, so logs and pipes never see it. The line is erased when the work ends.
import { formatBytes, asBytes } from '../engine/index';
import { terminalInline } from './terminal-text';

/** What `done` and `total` count: items (files, sizes, rounds) or bytes of a file, shown as "12.0 MiB/256 MiB". */
export type ProgressUnit = 'items' | 'bytes';

export interface Progress {
  /** `done` of `total` items finished; `label` names the one being worked on. */
  update(done: number, total: number, label?: string): void;
  /** Erases the line, if one was drawn. */
  finish(): void;
}

export interface ProgressOptions {
  /** False with --json, SARIF or any output meant for a program. */
  readonly enabled: boolean;
  readonly stream?: { isTTY?: boolean; columns?: number; write(text: string): unknown };
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Nothing is drawn before this many milliseconds have passed. */
  readonly delayMs?: number;
  readonly now?: () => number;
  readonly unit?: ProgressUnit;
}

/** Whether progress may be drawn: a terminal on stderr, not CI (the variable every CI service sets), not turned off. */
export function progressAllowed(options: Pick<ProgressOptions, 'stream' | 'env'> = {}): boolean {
  const stream = options.stream ?? process.stderr;
  const env = options.env ?? process.env;
  return stream.isTTY === true && !env.CI && env.TERM !== 'dumb';
}

export function createProgress(title: string, options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? (() => Date.now());
  const start = now();
  const delayMs = options.delayMs ?? 1000;
  const active = options.enabled && progressAllowed(options);
  let drawn = false;
  let lastDrawMs = -Infinity;
  return {
    update(done, total, label) {
      if (!active) return;
      const at = now();
      // Redrawing more than ten times a second costs time and shows nothing more.
      if (at - start < delayMs || at - lastDrawMs < 100) return;
      lastDrawMs = at;
      const count =
        options.unit === 'bytes' ? `${formatBytes(asBytes(done))}/${formatBytes(asBytes(total))}` : `${done}/${total}`;
      const text = `${title}: ${count}${label ? ` ${terminalInline(label)}` : ''}`;
      const width = Math.max(20, (stream.columns ?? 80) - 1);
      stream.write(`\r\x1b[2K${text.length > width ? `${text.slice(0, width - 1)}…` : text}`);
      drawn = true;
    },
    finish() {
      if (drawn) stream.write('\r\x1b[2K');
      drawn = false;
    },
  };
}

/** Makes the progress of one command run; CliIo carries one so tests can watch what a command reports. */
export type ProgressFactory = (title: string, enabled: boolean, unit?: ProgressUnit) => Progress;

/**
 * The progress every command uses: the one `io` supplies (a test's recorder), else a line on this process's stderr.
 * `enabled` is false with --json or any other output meant for a program.
 */
export function startProgress(
  io: { readonly progress?: ProgressFactory },
  title: string,
  enabled: boolean,
  unit: ProgressUnit = 'items',
): Progress {
  return io.progress ? io.progress(title, enabled, unit) : createProgress(title, { enabled, unit });
}

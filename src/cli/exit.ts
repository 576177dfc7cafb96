// How the CLI ends once its command has returned.

/** What ending reads and writes of `process` (the tests pass their own). */
export interface ExitingProcess {
  exitCode?: number | string | undefined;
  readonly stdout: { readonly writableLength: number };
  readonly stderr: { readonly writableLength: number };
  exit(code: number): void;
}

/**
 * Ends the process with `code` once the command has returned. Left to itself, Node ends when the event loop is
 * empty and then tears the V8 heap down page by page, which took about 4 % of a cold `simulate` run's CPU (perf,
 * 16,384 GPUs); process.exit() skips that teardown. It is taken only when nothing is waiting to be written to
 * stdout or stderr: where those are asynchronous (pipes on macOS, terminals on Windows) exit() would cut the
 * waiting output off, so the process then ends as before, when the writes are done. The commands await their own
 * files, child processes and worker threads before they return.
 */
export function endProcess(code: number, proc: ExitingProcess = process): void {
  proc.exitCode = code;
  if (proc.stdout.writableLength === 0 && proc.stderr.writableLength === 0) proc.exit(code);
}

// The error long work throws when the user cancels it. Pure, so the worker client and the tests use it without
// VS Code; commands recognise it (by name too, across bundles) and log it instead of showing an error.
export class CancelledError extends Error {
  constructor() {
    super('Cancelled.');
    this.name = 'CancelledError';
  }
}

/**
 * `work`, or a CancelledError as soon as `signal` aborts: for a wait that must end on time even where the work
 * cannot be interrupted (a file read before the worker starts). The work itself goes on, and its result is dropped.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new CancelledError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new CancelledError());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

// Long work runs under a cancellable progress notification. Cancelling aborts an AbortController whose signal is
// handed to the work (the native runner kills its process tree on abort; loops check `signal.aborted`).
import * as vscode from 'vscode';
import { CancelledError } from './glue/cancel';

export type ProgressReport = (message: string, fraction?: number) => void;

export { CancelledError } from './glue/cancel';

export async function withCancellableProgress<T>(
  title: string,
  work: (signal: AbortSignal, report: ProgressReport) => Promise<T>,
): Promise<T> {
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    async (progress, token) => {
      const controller = new AbortController();
      const subscription = token.onCancellationRequested(() => controller.abort(new CancelledError()));
      let reported = 0;
      const report: ProgressReport = (message, fraction) => {
        const increment = fraction === undefined ? undefined : Math.max(0, fraction * 100 - reported);
        if (fraction !== undefined) reported = Math.max(reported, fraction * 100);
        progress.report({ message, increment });
      };
      try {
        return await work(controller.signal, report);
      } finally {
        subscription.dispose();
      }
    },
  );
}

/** Throws CancelledError when the signal was aborted; call between steps of a loop. */
export function throwIfCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw new CancelledError();
}

/** Lets the event loop breathe so cancellation and other extensions get a turn during long loops. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

// Runs one engine task in a fresh worker thread (dist/extension-worker.js) and terminates it when the task ends or
// is cancelled. Errors come back with their message; cancellation rejects with CancelledError.
import { Worker } from 'node:worker_threads';
import { CancelledError } from '../glue/cancel';
import { l10n } from '../glue/l10n';
import type { EngineTask, EngineTaskResult, WorkerReply } from './engine-tasks';

export function runEngineTask<K extends EngineTask['kind']>(
  workerPath: string,
  task: Extract<EngineTask, { kind: K }>,
  signal?: AbortSignal,
  /** Sees the worker as it starts (the tests check that cancelling ends its thread). */
  onStart?: (worker: Worker) => void,
): Promise<Extract<EngineTaskResult, { kind: K }>> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new CancelledError());
      return;
    }
    const worker = new Worker(workerPath);
    onStart?.(worker);
    let settled = false;
    const finish = (action: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      action();
    };
    const onAbort = () => finish(() => reject(new CancelledError()));
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (reply: WorkerReply) =>
      finish(() => {
        if (reply.ok) resolve(reply.result as Extract<EngineTaskResult, { kind: K }>);
        else
          reject(
            Object.assign(new Error(reply.message), {
              name: reply.name,
              ...(reply.line !== undefined ? { line: reply.line, column: reply.column, file: reply.file } : {}),
            }),
          );
      }),
    );
    worker.once('error', (error) => finish(() => reject(error)));
    worker.once('exit', (code) =>
      finish(() =>
        reject(new Error(l10n.t('the engine worker stopped (exit code {0}) before answering', String(code)))),
      ),
    );
    worker.postMessage(task);
  });
}

// Worker threads that stay up across many batches of tasks: a search (calibrate) asks for one small batch at a
// time, hundreds of times, and starting threads for each would cost more than the batch. runParallel (pool.ts)
// starts and ends its workers around one list of tasks; this pool is started once, fed batch after batch, and
// closed at the end. Results come back in the tasks' order, computed by the same runTask as the serial path.
// Cancelling (the signal, or SIGINT when asked to listen) terminates every worker at once and fails the batch
// that was running and every later one.
import { Worker } from 'node:worker_threads';
import { CancelledError, rebuiltError } from './pool';
import type { WorkerReply, WorkerRequest } from './protocol';
import type { ParallelResults, ParallelTask } from './tasks';

export interface WorkerPoolOptions {
  readonly signal?: AbortSignal;
  /** Terminate the workers on SIGINT (the CLI); a library caller cancels through the signal instead. */
  readonly stopOnSigint?: boolean;
  /** Sees each worker as it starts (the tests check that cancelling ends its thread). */
  readonly onWorker?: (worker: Worker) => void;
}

interface RunningBatch {
  readonly tasks: readonly ParallelTask[];
  readonly results: unknown[];
  next: number;
  done: number;
  readonly resolve: (results: unknown[]) => void;
  readonly reject: (error: Error) => void;
}

export class WorkerPool {
  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private batch: RunningBatch | undefined;
  /** Why the pool stopped (cancelled, a worker failed, closed); every later batch fails with it. */
  private stopped: Error | undefined;
  private readonly onAbort = (): void => this.stop(new CancelledError());

  constructor(
    script: string,
    count: number,
    private readonly options: WorkerPoolOptions = {},
  ) {
    if (options.signal?.aborted) throw new CancelledError();
    options.signal?.addEventListener('abort', this.onAbort, { once: true });
    if (options.stopOnSigint) process.on('SIGINT', this.onAbort);
    for (let w = 0; w < count; w++) {
      const worker = new Worker(script);
      this.workers.push(worker);
      this.idle.push(worker);
      options.onWorker?.(worker);
      worker.on('message', (reply: WorkerReply) => this.answered(worker, reply));
      worker.on('error', (error) => this.stop(error));
      worker.on('exit', (code) => this.stop(new Error(`a worker thread stopped (exit code ${code}) before answering`)));
    }
  }

  /** The number of worker threads. */
  get size(): number {
    return this.workers.length;
  }

  /** Runs one batch on the workers; one batch at a time. */
  run<T extends ParallelTask>(tasks: readonly T[]): Promise<ParallelResults[T['kind']][]> {
    if (this.stopped) return Promise.reject(this.stopped);
    if (this.batch) return Promise.reject(new Error('the worker pool runs one batch at a time'));
    if (tasks.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.batch = {
        tasks,
        results: new Array<unknown>(tasks.length),
        next: 0,
        done: 0,
        resolve: resolve as (results: unknown[]) => void,
        reject,
      };
      for (const worker of this.idle.splice(0)) this.feed(worker);
    });
  }

  /** Ends every worker thread; later batches fail. */
  close(): void {
    this.stop(new Error('the worker pool is closed'));
  }

  private feed(worker: Worker): void {
    const batch = this.batch;
    if (!batch || batch.next >= batch.tasks.length) {
      this.idle.push(worker);
      return;
    }
    const request: WorkerRequest = { index: batch.next, task: batch.tasks[batch.next] };
    batch.next++;
    worker.postMessage(request);
  }

  private answered(worker: Worker, reply: WorkerReply): void {
    const batch = this.batch;
    if (this.stopped || !batch) return;
    if (!reply.ok) return this.stop(rebuiltError(reply));
    batch.results[reply.index] = reply.result;
    batch.done++;
    if (batch.done === batch.tasks.length) {
      this.batch = undefined;
      this.idle.push(worker);
      batch.resolve(batch.results);
    } else this.feed(worker);
  }

  private stop(reason: Error): void {
    if (this.stopped) return;
    this.stopped = reason;
    this.options.signal?.removeEventListener('abort', this.onAbort);
    if (this.options.stopOnSigint) process.removeListener('SIGINT', this.onAbort);
    for (const worker of this.workers) void worker.terminate();
    const batch = this.batch;
    this.batch = undefined;
    batch?.reject(reason);
  }
}

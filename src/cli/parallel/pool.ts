// Spreads independent simulations over worker threads (dist/cli-worker.js, one per two cores unless --jobs says
// otherwise) and puts their results back in the order of the tasks. With two cores or fewer, one task, --jobs 1 or
// no worker bundle (running from the sources) it runs them here, one after another, through the same runTask, so
// the output is the same bytes either way. Cancelling (the signal, or SIGINT when asked to listen) terminates every worker at once: a
// synchronous simulation cannot be interrupted otherwise.
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { EngineError, type System } from '../../engine/index';
import type { WorkerReply, WorkerRequest } from './protocol';
import { runTask, SystemCache, type ParallelResults, type ParallelTask } from './tasks';

/** The run was cancelled (its signal aborted, or SIGINT): the CLI exits 130 as an interrupted program does. */
export class CancelledError extends Error {
  constructor() {
    super('cancelled');
    this.name = 'CancelledError';
  }
}

export interface PoolOptions {
  /** Upper bound on worker threads (--jobs); by default one per two available cores (see workerCount). */
  readonly jobs?: number;
  /** The worker bundle; by default cli-worker.js beside this bundle, when it exists. */
  readonly workerScript?: string;
  readonly signal?: AbortSignal;
  /** Terminate the workers on SIGINT (the CLI); a library caller cancels through the signal instead. */
  readonly stopOnSigint?: boolean;
  /** The system the tasks' specs resolve to, already resolved: the serial path reuses it. */
  readonly system?: System;
  /** Called as task `index` starts, with the number of tasks finished so far (a progress line's "done of total"). */
  readonly onProgress?: (done: number, total: number, index: number) => void;
  /** Sees each worker as it starts (the tests check that cancelling ends its thread). */
  readonly onWorker?: (worker: Worker) => void;
}

export interface PoolRun<R> {
  readonly results: R[];
  /** Worker threads used; 0 when the tasks ran on this thread. */
  readonly workers: number;
}

/**
 * Workers for `tasks` tasks: never more than the tasks, the cores the process may use, or --jobs; by default one per
 * two cores. Each thread that simulates keeps about one more core busy with V8's compiler and collector threads
 * (measured on the 1,024- and 16,384-GPU sweeps: the main thread's CPU time again, on helper threads), and each
 * worker compiles the simulator again, so on two cores the workers only added CPU time (docs/performance.md).
 */
export function workerCount(tasks: number, jobs?: number, cores = availableParallelism()): number {
  return Math.max(1, Math.min(tasks, cores, jobs ?? Math.floor(cores / 2)));
}

/** cli-worker.js next to the running bundle (dist/), or undefined when running from the sources. */
export function defaultWorkerScript(): string | undefined {
  const path = join(__dirname, 'cli-worker.js');
  return existsSync(path) ? path : undefined;
}

/**
 * An error as the worker threw it: an EngineError or a RangeError (the engine's complaints about its input) stays
 * one, so commands turn it into a usage error as they do on the serial path.
 */
export function rebuiltError(reply: Extract<WorkerReply, { ok: false }>): Error {
  if (reply.name === 'EngineError') return new EngineError(reply.message);
  if (reply.name === 'RangeError') return new RangeError(reply.message);
  return Object.assign(new Error(reply.message), { name: reply.name });
}

export async function runParallel<T extends ParallelTask>(
  tasks: readonly T[],
  options: PoolOptions = {},
): Promise<PoolRun<ParallelResults[T['kind']]>> {
  type R = ParallelResults[T['kind']];
  if (options.signal?.aborted) throw new CancelledError();
  const count = workerCount(tasks.length, options.jobs);
  const script = count > 1 ? (options.workerScript ?? defaultWorkerScript()) : undefined;
  if (!script) {
    const systems = new SystemCache(options.system);
    const results = tasks.map((task, i) => {
      options.onProgress?.(i, tasks.length, i);
      return runTask(task, systems) as R;
    });
    return { results, workers: 0 };
  }
  return new Promise((resolve, reject) => {
    const results: R[] = new Array<R>(tasks.length);
    const workers: Worker[] = [];
    let next = 0;
    let done = 0;
    let settled = false;
    const onAbort = (): void => finish(new CancelledError());
    const finish = (error?: Error): void => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener('abort', onAbort);
      if (options.stopOnSigint) process.removeListener('SIGINT', onAbort);
      for (const worker of workers) void worker.terminate();
      if (error) reject(error);
      else resolve({ results, workers: workers.length });
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.stopOnSigint) process.on('SIGINT', onAbort);
    const feed = (worker: Worker): void => {
      if (next >= tasks.length) return;
      const request: WorkerRequest = { index: next, task: tasks[next] };
      options.onProgress?.(done, tasks.length, next);
      next++;
      worker.postMessage(request);
    };
    for (let w = 0; w < count; w++) {
      const worker = new Worker(script);
      workers.push(worker);
      options.onWorker?.(worker);
      worker.on('message', (reply: WorkerReply) => {
        if (settled) return;
        if (!reply.ok) return finish(rebuiltError(reply));
        results[reply.index] = reply.result as R;
        done++;
        if (done === tasks.length) finish();
        else feed(worker);
      });
      worker.on('error', (error) => finish(error));
      worker.on('exit', (code) => finish(new Error(`a worker thread stopped (exit code ${code}) before answering`)));
      feed(worker);
    }
  });
}

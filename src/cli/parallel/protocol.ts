// The messages between the CLI's pool and its worker threads. Types only, shared by both sides.
import type { ParallelResult, ParallelTask } from './tasks';

export interface WorkerRequest {
  /** The task's position in the caller's list: results come back in any order and are put back in this one. */
  readonly index: number;
  readonly task: ParallelTask;
}

export type WorkerReply =
  | { readonly index: number; readonly ok: true; readonly result: ParallelResult }
  | { readonly index: number; readonly ok: false; readonly name: string; readonly message: string };

// Per-key debouncing for "analyse as you type": each document waits until its edits pause. The timer functions
// are injected so the tests run on a fake clock.

export interface Timers {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export const REAL_TIMERS: Timers = {
  set: (callback, ms) => setTimeout(callback, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class KeyedDebouncer {
  private readonly pending = new Map<string, unknown>();

  constructor(private readonly timers: Timers = REAL_TIMERS) {}

  /** Runs `task` after `ms` of quiet for `key`; a newer call for the same key replaces the older one. */
  schedule(key: string, ms: number, task: () => void): void {
    this.cancel(key);
    const handle = this.timers.set(() => {
      this.pending.delete(key);
      task();
    }, ms);
    this.pending.set(key, handle);
  }

  cancel(key: string): void {
    const handle = this.pending.get(key);
    if (handle !== undefined) {
      this.timers.clear(handle);
      this.pending.delete(key);
    }
  }

  get size(): number {
    return this.pending.size;
  }

  dispose(): void {
    for (const key of [...this.pending.keys()]) this.cancel(key);
  }
}

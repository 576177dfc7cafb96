// Values that take a while to compute (a config's simulated training step for its code lens), shared by every
// caller that asks for the same key. A caller waits a bounded time; when the value settles after a caller gave
// up, `onLate` fires so the editor asks again and finds it. Without this, a lens resolved on a busy machine kept
// its fallback title until the next edit, because the editor does not resolve a lens twice on its own.

interface Pending<T> {
  readonly promise: Promise<T>;
  readonly abort: AbortController;
  /** Set when a caller stopped waiting: the value's arrival must then be announced. */
  late: boolean;
}

export class PendingValues<T> {
  private readonly settled = new Map<string, T>();
  private readonly pending = new Map<string, Pending<T>>();

  constructor(
    private readonly onLate: () => void,
    private readonly maxSettled = 100,
  ) {}

  /**
   * The value for `key`: at once if it settled before, within `waitMs` if it settles by then, otherwise undefined
   * (the computation goes on, and `onLate` fires when it ends). `compute` must resolve, not reject: a failure is a
   * value too (a lens that says why), so it is not computed again for the same key.
   */
  async get(key: string, compute: (signal: AbortSignal) => Promise<T>, waitMs: number): Promise<T | undefined> {
    if (this.settled.has(key)) return this.settled.get(key);
    const entry = this.pending.get(key) ?? this.start(key, compute);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const gaveUp = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => {
        entry.late = true;
        resolve(undefined);
      }, waitMs);
    });
    try {
      return await Promise.race([entry.promise, gaveUp]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The value for `key` if it has settled, without computing anything. */
  peek(key: string): T | undefined {
    return this.settled.get(key);
  }

  /** Forgets every value and stops every computation: the inputs they depend on (system, settings) changed. */
  clear(): void {
    for (const entry of this.pending.values()) entry.abort.abort();
    this.pending.clear();
    this.settled.clear();
  }

  /** Stops the computations whose key starts with `prefix` except `keep`: an older version of the same file. */
  dropPendingExcept(prefix: string, keep: string): void {
    for (const [key, entry] of this.pending) {
      if (key !== keep && key.startsWith(prefix)) {
        entry.abort.abort();
        this.pending.delete(key);
      }
    }
  }

  /**
   * Forgets every value and stops every computation whose key starts with `prefix`: the document they were
   * computed for was closed. Reopening it starts again at the same version, so without this a failure kept for that
   * key (a step that timed out, a worker that died) or a computation that never ended would answer for it for the
   * rest of the session.
   */
  forget(prefix: string): void {
    for (const [key, entry] of this.pending) {
      if (!key.startsWith(prefix)) continue;
      entry.abort.abort();
      this.pending.delete(key);
    }
    for (const key of this.settled.keys()) if (key.startsWith(prefix)) this.settled.delete(key);
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  private start(key: string, compute: (signal: AbortSignal) => Promise<T>): Pending<T> {
    const abort = new AbortController();
    const entry: Pending<T> = { promise: compute(abort.signal), abort, late: false };
    this.pending.set(key, entry);
    void entry.promise.then(
      (value) => {
        // A clear() or a newer version dropped this computation: its value answers an outdated question.
        if (this.pending.get(key) !== entry) return;
        this.pending.delete(key);
        if (this.settled.size >= this.maxSettled) this.settled.clear();
        this.settled.set(key, value);
        if (entry.late) this.onLate();
      },
      () => {
        if (this.pending.get(key) === entry) this.pending.delete(key);
      },
    );
    return entry;
  }
}

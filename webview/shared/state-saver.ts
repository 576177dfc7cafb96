// When a panel writes its state (webview setState) for VS Code to hand back after a reload. Scrolling and zooming
// send a stream of changes, so they are written once the stream pauses; a discrete change (a fold, a pin, a
// selection, a new trace) is written at once. A change still waiting when the page is hidden or unloaded is
// written then. Before this, every change waited a quarter second, and a reload inside that quarter second lost
// it: a pin made just before a fold was saved only with the fold, and a reload in between restored neither.

/** The timer functions the saver uses; the page's own by default, fakes in unit tests. */
export interface SaverTimers {
  set(callback: () => void, delayMs: number): unknown;
  clear(handle: unknown): void;
}

const PAGE_TIMERS: SaverTimers = {
  set: (callback, delayMs) => setTimeout(callback, delayMs),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class StateSaver<T> {
  private pending: unknown;
  private hasPending = false;

  constructor(
    /** Builds the state from what the panel shows now, or undefined while there is nothing worth saving. */
    private readonly snapshot: () => T | undefined,
    private readonly write: (state: T) => void,
    private readonly quietMs = 250,
    private readonly timers: SaverTimers = PAGE_TIMERS,
  ) {}

  /** A change that comes in a stream (scroll, zoom, typing): written once no other change came for quietMs. */
  schedule(): void {
    this.cancel();
    this.hasPending = true;
    this.pending = this.timers.set(() => this.saveNow(), this.quietMs);
  }

  /** A discrete change: written now, with any change still waiting. */
  saveNow(): void {
    this.cancel();
    const state = this.snapshot();
    if (state !== undefined) this.write(state);
  }

  /** Writes a change still waiting (the page is being hidden or unloaded); nothing when none is. */
  flush(): void {
    if (this.hasPending) this.saveNow();
  }

  /** True while a scheduled change has not been written. */
  get waiting(): boolean {
    return this.hasPending;
  }

  /** Writes what is waiting when the page is hidden or goes away, so a reload right after a change keeps it. */
  flushOnPageHide(
    page: Pick<Window, 'addEventListener'>,
    doc: Pick<Document, 'addEventListener' | 'visibilityState'>,
  ): void {
    page.addEventListener('pagehide', () => this.flush());
    doc.addEventListener('visibilitychange', () => {
      if (doc.visibilityState === 'hidden') this.flush();
    });
  }

  private cancel(): void {
    if (this.hasPending) this.timers.clear(this.pending);
    this.hasPending = false;
    this.pending = undefined;
  }
}

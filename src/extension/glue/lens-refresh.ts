// When to tell the editor that code lenses changed (onDidChangeCodeLenses). VS Code (1.139, codelensController)
// applies a resolve's answer to the lens line it was asked for even when a refresh has rendered newer lenses on
// that line meanwhile: the answer's command is copied into the newer lens, which then counts as resolved and is
// never resolved again, and the older lenses are released right after, which frees their commands' arguments. The
// line then shows a dead command (a click logs "Actual command not found") or an old placeholder ("simulating the
// step…") until something refreshes the lenses again. Seen in the e2e suite at load 15-30, where a resolve can take
// seconds. So a refresh asked for while any resolve is running waits until every running resolve has answered.

/** Longest a refresh waits for running resolves: one that never ends must not silence the lenses for good. */
export const MAX_REFRESH_HOLD_MS = 10_000;

export class LensRefresh {
  private running = 0;
  private holdTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly fire: () => void,
    private readonly maxHoldMs = MAX_REFRESH_HOLD_MS,
  ) {}

  /** Whether a refresh was asked for and waits for running resolves. */
  get held(): boolean {
    return this.holdTimer !== undefined;
  }

  /** Runs one resolve, counted as running until it settles. */
  async track<T>(resolve: () => Promise<T>): Promise<T> {
    this.running++;
    try {
      return await resolve();
    } finally {
      this.running--;
      // The answer goes back to the editor after this promise settles: the refresh follows it, in a later task, so
      // that the editor applies the answer before it asks for the new lenses.
      if (this.running === 0 && this.held) setTimeout(() => this.release(false), 0);
    }
  }

  /** Asks for a refresh: now when no resolve is running, otherwise once all have answered (or after maxHoldMs). */
  request(): void {
    if (this.running === 0 && !this.held) {
      this.fire();
      return;
    }
    this.holdTimer ??= setTimeout(() => this.release(true), this.maxHoldMs);
  }

  dispose(): void {
    clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
  }

  /** Fires a held refresh; unless `timedOut`, only when no resolve started while this release was queued. */
  private release(timedOut: boolean): void {
    if (!this.held || (this.running > 0 && !timedOut)) return;
    clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
    this.fire();
  }
}

// Long computations in a panel, cut into slices so that input is never held up for long. A computation is a
// generator that looks at a clock between small groups of elements (CLOCK_CHECK_ELEMENTS, microseconds of work)
// and yields when the running slice has spent its time; runInSlices then hands the page back (input, frames) and
// goes on in a later task. A slice is bounded by time, not by a count of elements: a loaded machine makes each
// element slower, and a fixed count then grows past the budget. `finish` runs the same generator at once, with a
// clock that is never due, for tests and callers that want the result now.
// A task over 50 ms is a "long task": a key or a click that arrives during it waits for the task to end.

/**
 * Elements a sliced loop handles between two looks at the clock: a few microseconds of work, so a slice ends
 * within microseconds of its budget; a power of two, so loops can test it with a mask.
 */
export const CLOCK_CHECK_ELEMENTS = 1 << 10;

/** Says whether the running slice has spent its time: a computation yields as soon as it is due. */
export interface SliceClock {
  due(): boolean;
}

/** The clock of a computation run to its end in one go: never due. */
export const UNSLICED: SliceClock = { due: () => false };

/** A computation that yields between groups of its work and returns T. */
export type Steps<T> = Generator<void, T, void>;

/** Runs a computation to its end in the current task. */
export function finish<T>(steps: Steps<T>): T {
  let step = steps.next();
  while (!step.done) step = steps.next();
  return step.value;
}

/** How a sliced computation ran: what a benchmark or a test checks against the 50 ms long-task line. */
export interface SliceReport {
  /** The longest time one slice held the page, ms. */
  readonly longestSliceMs: number;
  readonly slices: number;
  /** Slices that ran past 50 ms, long tasks by the browser's measure (a loaded machine can stall any slice). */
  readonly slicesOver50Ms: number;
  /** From the first slice to the result, ms, waits for the page included. */
  readonly elapsedMs: number;
}

export interface SliceOptions {
  /** Time one slice may run before it hands the page back, ms; the group of elements in progress finishes first. */
  readonly budgetMs?: number;
  /** Checked before every slice: true drops the computation (another trace was shown, say). */
  readonly cancelled?: () => boolean;
  /** Queues the next slice; by default a message to the page itself, which waits behind input and frames. */
  readonly schedule?: (next: () => void) => void;
  readonly now?: () => number;
  /**
   * Runs the first slice in the current task: a small computation then ends before the page is next drawn, and
   * nothing shows it was sliced. By default the first slice waits for a later task, as the others do.
   */
  readonly startNow?: boolean;
}

/** A task queued through a MessageChannel: unlike setTimeout(0) it is not clamped to 4 ms once nested. */
function nextTask(): (next: () => void) => void {
  if (typeof MessageChannel !== 'function') return (next) => void setTimeout(next, 0);
  const channel = new MessageChannel();
  const queue: (() => void)[] = [];
  channel.port1.onmessage = () => queue.shift()?.();
  return (next) => {
    queue.push(next);
    channel.port2.postMessage(undefined);
  };
}

/**
 * Runs a computation in slices of about budgetMs, the first in a later task; resolves with its result and how the
 * slices ran, or with undefined when it was cancelled. `compute` is given the clock its loops look at; a
 * computation that ignores it and yields often is sliced as well, the clock being read at each yield.
 */
export function runInSlices<T>(
  compute: (clock: SliceClock) => Steps<T>,
  options: SliceOptions = {},
): Promise<{ value: T; report: SliceReport } | undefined> {
  const budgetMs = options.budgetMs ?? 8;
  const now = options.now ?? (() => performance.now());
  const schedule = options.schedule ?? nextTask();
  let deadlineMs = -Infinity;
  const steps = compute({ due: () => now() >= deadlineMs });
  let longestSliceMs = 0;
  let slices = 0;
  let slicesOver50Ms = 0;
  let firstMs: number | undefined;
  return new Promise((resolve, reject) => {
    const slice = (): void => {
      if (options.cancelled?.()) {
        resolve(undefined);
        return;
      }
      const began = now();
      firstMs ??= began;
      deadlineMs = began + budgetMs;
      slices++;
      try {
        let step = steps.next();
        while (!step.done && now() < deadlineMs) step = steps.next();
        const heldMs = now() - began;
        if (heldMs > longestSliceMs) longestSliceMs = heldMs;
        if (heldMs > 50) slicesOver50Ms++;
        if (step.done)
          resolve({
            value: step.value,
            report: { longestSliceMs, slices, slicesOver50Ms, elapsedMs: now() - firstMs },
          });
        else schedule(slice);
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    };
    if (options.startNow) slice();
    else schedule(slice);
  });
}

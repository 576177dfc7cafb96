// The facts one file gives about torch.distributed.pipelining's schedules (read by pipeline-facts.ts).
import type { SourceRange } from '../types';

/** How a construction sets `scale_grads`: left out (torch's default, True), True, False, or an expression. */
export type GradScaling = 'default' | 'true' | 'false' | 'unknown';

export interface Construction {
  readonly range: SourceRange;
  readonly line: number;
  /** The callee as written (`schedule_class`, `Schedule1F1B`). */
  readonly callee: string;
  readonly scaling: GradScaling;
  /** The micro-batch count as written (`n_microbatches=` or the second positional argument). */
  readonly microbatches?: string;
  /** `loss_fn=wrap(fn, k)`: the wrapper's name and its arguments as written. */
  readonly lossWrapper?: { readonly callee: string; readonly args: readonly string[]; readonly range: SourceRange };
  /** The enclosing function, and the name the schedule is assigned to there. */
  readonly fn?: string;
  readonly variable?: string;
}

/** A tuple position a function or callable returns a schedule at; -1 when it returns the schedule itself. */
export type Position = number;

/** `return v` or `return v, …` of a function, where `v` was assigned a call to `callee` (or a construction). */
export interface ReturnedCall {
  readonly fn: string;
  readonly index: Position;
  readonly callee: string;
  readonly calleeIndex: Position;
}

/** An assignment of (a tuple of) names from a call: `(self.pp_schedule, …) = self.train_spec.pipelining_fn(…)`. */
export interface Holder {
  readonly targets: readonly string[];
  readonly tuple: boolean;
  readonly callee: string;
  readonly cls?: string;
  readonly fn?: string;
  readonly line: number;
  readonly range: SourceRange;
}

export interface StepCall {
  readonly receiver: string;
  readonly cls?: string;
  readonly fn?: string;
  readonly range: SourceRange;
  readonly line: number;
}

/** A `for … in range(count)` loop whose body neither clears the gradients nor steps an optimizer. */
export interface AccumulationLoop {
  readonly cls?: string;
  readonly fn?: string;
  readonly count: string;
  readonly range: SourceRange;
  readonly line: number;
  /** Functions called in the body (`self.forward_backward_step(…)` → `forward_backward_step`), with `self.`. */
  readonly calls: ReadonlySet<string>;
  /** `.step(` receivers called in the body. */
  readonly steps: ReadonlySet<string>;
  /** The first optimizer `.step()` after the loop in the same function. */
  readonly optimizerStep?: { readonly range: SourceRange; readonly line: number; readonly text: string };
}

export interface PipelineFacts {
  readonly constructions: readonly Construction[];
  /** Functions whose return annotation names a schedule, by name. */
  readonly annotatedReturns: ReadonlyMap<string, Position>;
  readonly returnedCalls: readonly ReturnedCall[];
  /** Class fields and module-level names annotated as callables that return a schedule (`pipelining_fn`). */
  readonly annotatedCallables: ReadonlyMap<string, Position>;
  readonly holders: readonly Holder[];
  readonly steps: readonly StepCall[];
  readonly loops: readonly AccumulationLoop[];
  /** Functions that return a closure dividing the wrapped loss by one of their parameters, with its position. */
  readonly lossDividers: ReadonlyMap<string, { readonly index: number; readonly range: SourceRange }>;
}

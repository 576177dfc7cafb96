// The shape of a helper's summary (summaries.ts builds it). A reduction found through a helper carries its summary
// (reductions.ts), and the summary is built from facts and verdicts that depend on reductions, so the shape lives
// here, below both, and neither file imports the other for it.
import type { SourceRange } from './types';

export interface HelperSummary {
  /** The file that defines the helper, as the program names it. */
  readonly path: string;
  readonly name: string;
  /** The parameter whose gradients are summed, and its position among the call's arguments. */
  readonly param: string;
  readonly index: number;
  /** `parameters`: the gradients of `param.parameters()`; `tensors`: `param` holds the gradients itself. */
  readonly shape: 'parameters' | 'tensors';
  /** Parameters whose default makes the helper sum (`_type='sum'`): a caller that passes them is not judged. */
  readonly defaultsThatSum: readonly string[];
  /** Where the helper sums, in its own file, for the message and the related location. */
  readonly range: SourceRange;
  readonly reducer: string;
}

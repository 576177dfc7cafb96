// The shapes shared by the gradient-accumulation rule (accumulation.ts) and its cross-function half
// (accumulation-split.ts). They live below both, so the split half depends on what it asks of the rule, not on the
// rule's file, and the two files do not import each other.
import type { PyNode } from './tree';
import type { FunctionInfo } from './scope';
import type { BackwardSite } from './losses';

export interface AccumulationVerdict {
  readonly site: BackwardSite;
  /** The loss expression given to backward (the node the fix divides). */
  readonly loss: PyNode;
  /** The micro-step count as written (`gradient_accumulation_steps`). */
  readonly count: PyNode;
  /** The loop or condition that takes one step per `count` micro-steps. */
  readonly evidence: PyNode;
  /** The optimizer step. */
  readonly step: PyNode;
  /**
   * False where the count is not in scope at the backward (it lives in another method or the caller), so no edit
   * there can divide by it.
   */
  readonly fixable?: boolean;
  /** The count as the message and fix write it, where it is not `count`'s own text (`len(micro_batches)`). */
  readonly countText?: string;
  /** Evidence in other functions: the method that steps, the caller's division of a returned loss. */
  readonly related?: readonly { readonly node: PyNode; readonly message: string }[];
}

/** What the cross-function half asks of the single-function rule: where the step is, and what rescales. */
export interface AccumulationEvidence {
  /** Whether gradients are rescaled in `fn` after `from` and before `step`, or by the step itself. */
  rescalesGradients(fn: FunctionInfo, from: number, step: PyNode): boolean;
  /** Whether a backward call scales its loss (a loss scaler's `scale(loss).backward()`). */
  backwardScales(call: PyNode): boolean;
  /** The `if i % K == 0: step` guard in `body` after `from`, as a verdict's count, evidence and step. */
  moduloGuard(body: PyNode | undefined, from: number): Omit<AccumulationVerdict, 'site' | 'loss'> | undefined;
  /** Whether a call is an optimizer step. */
  isStep(call: PyNode): boolean;
  /** The first optimizer step in a block, nested functions and classes left out. */
  stepsIn(block: PyNode | undefined): PyNode | undefined;
  /** The optimizer step among the statements after `stmt` in its block. */
  stepAfter(stmt: PyNode): PyNode | undefined;
  /** Whether `loss` is a mean that nothing divides by `count` before the backward at `before`. */
  undividedMean(loss: PyNode, fn: FunctionInfo, before: number, count: PyNode): boolean;
}

// What the judge (judge.ts) decides about one gradient reduction: the scaling terms it read and the verdict.
import type { PyNode } from './tree';
import type { Binding, Env, SizeClass } from './sizes';
import type { Decision } from './conditions';
import type { Fact } from './facts';
import type { ScaleOp } from './flow';
import type { UpdateEvidence } from './updates';
import type { ValueOrigin } from './constructor-request';
import type { GroupClass } from './groups';

export interface Term {
  readonly size: SizeClass;
  readonly sign: 1 | -1;
  /** Where the divisor is written: the factor, or the call-site argument it came from. */
  readonly node: PyNode;
  readonly op?: ScaleOp;
  readonly binding?: Binding;
  readonly fromLoss: boolean;
  /** A loss scaled inside a generic helper: `node` is the helper call. */
  readonly viaCall?: boolean;
  /** The factor as written and the environment it is read in (for the symbolic group sizes). */
  readonly written?: { readonly node: PyNode; readonly env: Env };
}

export interface Verdict {
  readonly code: 'CP001' | 'CP002' | 'CP003' | 'CP004';
  readonly exponent: number;
  readonly location: PyNode;
  readonly fact?: Fact;
  readonly term?: Term;
  /** The guard a call site defeated (`if _type == 'avg'`), with the binding that defeated it. */
  readonly defeated?: Decision;
  /** The call-site binding that chose a summing operation. */
  readonly opBinding?: Binding;
  readonly why: string;
  /** Where the scaled gradients reach the parameters. */
  readonly update?: UpdateEvidence;
  /** Suspected, not proven: reported only with the `hints` option. */
  readonly hint?: boolean;
  /** The data-parallel group the reduction ran over, as the analysis named it. */
  readonly group?: GroupClass;
  /** The whole message, when the rule that found it words it itself (a model-parallel group's divisor). */
  readonly message?: string;
  /**
   * Where the wrong factor was chosen, when a constructor argument carried it to the object that applies it: the
   * finding is shown there, with the application in its evidence.
   */
  readonly origin?: ValueOrigin;
  /** The factor as the message shows it (`1/dp`), for a finding shown where it was chosen. */
  readonly chosenFactor?: string;
  /** A proof that holds only in some configurations (flag-choice.ts) is a warning, not the rule's error. */
  readonly severity?: 'warning';
}

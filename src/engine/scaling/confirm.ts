// Runtime confirmation of a static scaling finding: run the pattern the rule describes on N simulated ranks and
// measure the learning-rate multiplier it really produces.
import { runScalingCheck, type ScalingLrRule, type ScalingCheckResult, type ScalingReduceOp } from '../scaling-check';

export interface FindingConfirmation {
  readonly code: string;
  readonly ranks: number;
  /** What the rule's pattern is run as. */
  readonly reduceOp: ScalingReduceOp;
  readonly lrRule: ScalingLrRule;
  /** The measured effective LR multiplier relative to what the code intends (N, 1/N, N², N/divisor …). */
  readonly multiplier: number;
  /** One sentence for a hover or a CLI line. */
  readonly summary: string;
  readonly check: ScalingCheckResult;
}

interface Pattern {
  readonly reduceOp: ScalingReduceOp;
  readonly lrRule: ScalingLrRule;
  readonly describe: string;
}

/** The rules whose effect is a learning-rate multiplier, and the reduction each one describes. */
const PATTERNS: Readonly<Record<string, Pattern>> = {
  CP001: { reduceOp: 'sum', lrRule: 'fixed', describe: 'gradients summed and not averaged' },
  CP002: { reduceOp: 'avg-then-divide', lrRule: 'fixed', describe: 'gradients averaged twice' },
  CP003: { reduceOp: 'sum-then-divide', lrRule: 'fixed', describe: 'gradients divided by the wrong number' },
  CP004: { reduceOp: 'sum', lrRule: 'fixed', describe: 'psum where pmean was meant' },
  CP005: { reduceOp: 'sum', lrRule: 'linear-scaled', describe: 'linear-scaled learning rate on top of a sum' },
};

/** The finding codes `confirmFinding` can run. */
export const CONFIRMABLE_CODES: readonly string[] = Object.keys(PATTERNS);

function formatMultiplier(value: number): string {
  if (value >= 0.999) return `${Number(value.toPrecision(4))}×`;
  return `1/${Number((1 / value).toPrecision(4))}×`;
}

/**
 * Runs the reduction a static finding describes on `ranks` simulated ranks. CP003 needs the divisor the code used
 * (default 8, the local GPU count, the most common wrong divisor). Returns undefined for codes that are not a
 * learning-rate multiplier (CP006 is a backend problem, CP007 depends on the DeepSpeed settings).
 */
export function confirmFinding(
  code: string,
  ranks: number,
  options: { divisor?: number; baseLr?: number; steps?: number } = {},
): FindingConfirmation | undefined {
  const pattern = PATTERNS[code.toUpperCase()];
  if (pattern === undefined) return undefined;
  const divisor = pattern.reduceOp === 'sum-then-divide' ? (options.divisor ?? Math.min(ranks, 8)) : undefined;
  const check = runScalingCheck({
    ranks,
    reduceOp: pattern.reduceOp,
    lrRule: pattern.lrRule,
    divisor,
    baseLr: options.baseLr,
    steps: options.steps,
  });
  // A linear-scaled LR is intended to be N× the base; the bug is what comes on top, but CP005's message names the
  // total (N²) effect against the configured base LR, so that is what is reported for it.
  const multiplier = pattern.lrRule === 'linear-scaled' ? check.lrMultiplier : check.excessMultiplier;
  const summary =
    `Ran ${pattern.describe}${divisor === undefined ? '' : ` (÷ ${divisor})`} on ${ranks} simulated ranks: the effective learning rate is ${formatMultiplier(multiplier)} ` +
    `the configured one${check.diverged ? ', and training diverged' : check.matchesReference ? '' : ', and the loss departs from the single-process run'}.`;
  return {
    code: code.toUpperCase(),
    ranks,
    reduceOp: pattern.reduceOp,
    lrRule: pattern.lrRule,
    multiplier,
    summary,
    check,
  };
}

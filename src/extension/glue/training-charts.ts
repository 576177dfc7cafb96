// Chart data from the training-step model: phase breakdown per bucket collective and the gradient-scaling
// check's loss curves (the bucket-size sweep's rows are in bucket-advice.ts). Pure.
import {
  confirmFinding,
  runScalingCheck,
  type Dtype,
  type LrRule,
  type ReduceOp,
  type ScalingCheckResult,
  type ScalingReduceOp,
  type StepResult,
} from '../../engine/index';
import type { PhaseBreakdownRow, ScalingCheckCurves } from '../../protocol';
import { l10n } from './l10n';

/** One row per collective of the step (the first micro-step's, to keep the chart readable), in issue order. */
export function stepPhaseRows(step: StepResult, maxRows = 64): PhaseBreakdownRow[] {
  const first = step.collectives.filter((c) => c.microStep === step.collectives[0]?.microStep);
  return first.slice(0, maxRows).map((c) => ({
    label: c.label,
    bytes: c.bytes,
    exchangeUs: c.phases.exchange,
    reduceUs: c.phases.reduce,
    broadcastUs: c.phases.broadcast,
  }));
}

/** Non-finite losses (a diverged run) become NaN, which the chart draws as a gap and JSON carries as null. */
const finiteOrNaN = (values: readonly number[]) => values.map((v) => (Number.isFinite(v) ? v : Number.NaN));

const SERIES_KIND: Readonly<Record<ScalingReduceOp, 'sum' | 'avg' | 'other'>> = {
  sum: 'sum',
  avg: 'avg',
  'premul-sum': 'avg',
  'sum-then-divide': 'other',
  'avg-then-divide': 'other',
};

/**
 * The curves come from the engine's scaling check, not from the user's model: the words travel with the chart, as a
 * summed run can converge faster than an averaged one on this small convex problem and still be wrong.
 */
export function syntheticModelNote(): string {
  return l10n.t(
    'Synthetic least-squares model: simulated ranks train a small linear regression with data-parallel SGD, reducing gradients with the op under test. The curves show how the reduction scales each update (the effective learning rate), not how your network trains: on this convex problem a larger step can even converge faster.',
  );
}

/** What the scaling chart runs: a finding's pattern, a config's reduction, or the plain sum-vs-average question. */
export type ScalingSubject =
  | { readonly kind: 'finding'; readonly code: string }
  | { readonly kind: 'config'; readonly reduceOp: ReduceOp; readonly lrRule: LrRule; readonly dtype?: Dtype }
  | { readonly kind: 'default' };

/**
 * The loss curves of the gradient-scaling check on `ranks` simulated ranks: the subject's reduction, a correct
 * average for contrast (unless the subject is one), and the single-process large-batch reference.
 */
export function scalingCurves(ranks: number, subject: ScalingSubject): ScalingCheckCurves {
  const runs: { label: string; kind: 'sum' | 'avg' | 'other'; result: ScalingCheckResult }[] = [];
  let verdict: string;
  if (subject.kind === 'finding' && confirmFinding(subject.code, ranks)) {
    const confirmation = confirmFinding(subject.code, ranks)!;
    runs.push({
      label: `${subject.code}: ${confirmation.reduceOp}`,
      kind: SERIES_KIND[confirmation.reduceOp],
      result: confirmation.check,
    });
    verdict = confirmation.summary;
  } else if (subject.kind === 'config') {
    const reduceOp: ScalingReduceOp = subject.reduceOp === 'premulsum' ? 'premul-sum' : subject.reduceOp;
    const result = runScalingCheck({ ranks, reduceOp, lrRule: subject.lrRule, dtype: subject.dtype });
    runs.push({
      label: l10n.t('configured: {0}, {1} LR', reduceOp, result.lrRule),
      kind: SERIES_KIND[reduceOp],
      result,
    });
    const outcome = result.matchesReference
      ? l10n.t(', matching the single-process run')
      : result.diverged
        ? l10n.t(', and training diverges')
        : l10n.t(', and the loss departs from the single-process run');
    const overflow = result.fp16Overflow.wouldOverflow
      ? l10n.t('; an fp16 sum before division would overflow at this world size')
      : '';
    verdict = l10n.t(
      'The configured reduction gives an effective learning rate of {0}× the base (intended {1}×){2}{3}.',
      Number(result.lrMultiplier.toPrecision(3)),
      Number(result.intendedMultiplier.toPrecision(3)),
      outcome,
      overflow,
    );
  } else {
    const sum = runScalingCheck({ ranks, reduceOp: 'sum', lrRule: 'fixed' });
    runs.push({ label: l10n.t('sum (all_reduce SUM, no division)'), kind: 'sum', result: sum });
    verdict = sum.diverged
      ? l10n.t(
          'Summed gradients over {0} ranks act as a {1}× learning rate and diverge; averaged ones match the single-process run.',
          ranks,
          Number(sum.lrMultiplier.toPrecision(3)),
        )
      : l10n.t(
          'Summed gradients over {0} ranks act as a {1}× learning rate; averaged ones match the single-process run.',
          ranks,
          Number(sum.lrMultiplier.toPrecision(3)),
        );
  }
  if (!runs.some((r) => r.kind === 'avg'))
    runs.push({
      label: l10n.t('average (ReduceOp.AVG)'),
      kind: 'avg',
      result: runScalingCheck({ ranks, reduceOp: 'avg', lrRule: 'fixed' }),
    });
  const reference = runs[0].result.lossCurve.reference;
  return {
    model: syntheticModelNote(),
    steps: reference.map((_, i) => i),
    series: [
      ...runs.map((r) => ({ label: r.label, kind: r.kind, loss: finiteOrNaN(r.result.lossCurve.dataParallel) })),
      { label: l10n.t('single-process reference'), kind: 'reference' as const, loss: finiteOrNaN(reference) },
    ],
    verdict,
  };
}

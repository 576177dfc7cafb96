// Expert weights whose gradient is scaled for the ranks twice (CP002). Megatron's data-parallel wrapper keeps the
// gradients of the weights marked `allreduce=False` apart from its averaged buffers and divides them by the
// data-parallel size after the sync: with the MoE dispatch summing the contributions of the expert-parallel ranks
// into each expert's gradient (session 13's model, expert-gradients.ts), that division makes it the mean over the
// data-parallel replicas' tokens, and an unmarked weight is in the averaged buffers. A gradient scaler applied to
// the same weight in the forward (`grad * 1/|G|` in an autograd backward, G a parallel group) divides it once more,
// so the weight's effective learning rate is 1/|G| of the configured one.
//
// Reported at the application when the program shows all of: the scaler's exact shape, the marker on the weight
// from an expert flag, a dispatch over a group named expert-parallel, the wrapper's list of the marked `main_grad`
// (accumulated from `.grad`) whose one other use is the division by the data-parallel size, the list named nowhere
// else, and no other function that selects the marked parameters scaling anything.
import { ruleInfo } from '../rules';
import type { Finding, RelatedLocation } from '../types';
import type { ExpertFacts, ExpertGradList, Located } from './expert-facts';
import type { GradientScaling } from './expert-grad-scalers';

interface At {
  readonly path: string;
  readonly item: Located;
}

export function expertDoubleScaleFindings(
  facts: ReadonlyMap<string, ExpertFacts>,
  scalings: ReadonlyMap<string, readonly GradientScaling[]>,
  usedElsewhere: (path: string, list: ExpertGradList) => boolean,
  wanted: ReadonlySet<string>,
  isTest: (path: string) => boolean,
): Map<string, Finding[]> {
  const out = new Map<string, Finding[]>();
  const program = [...facts].filter(([path]) => !isTest(path));
  const dispatch = program.flatMap(([path, f]) => f.dispatches.map((item) => ({ path, item })))[0];
  if (!dispatch || [...facts.values()].some((f) => f.scalings.length > 0)) return out;
  const division = program
    .flatMap(([path, f]) =>
      f.lists
        .filter((l) => l.dividedByDataParallel && (l.field === 'grad' || f.accumulatesMainGrad))
        .filter((l) => !usedElsewhere(path, l))
        .map((list) => ({ path, list })),
    )
    .find(() => true);
  if (!division) return out;
  for (const [path, list] of scalings) {
    if (!wanted.has(path) || isTest(path)) continue;
    for (const scaling of list) {
      const found = finding(path, scaling, division, dispatch);
      out.set(path, [...(out.get(path) ?? []), found]);
    }
  }
  return out;
}

function finding(
  path: string,
  s: GradientScaling,
  division: { path: string; list: ExpertGradList },
  dispatch: At,
): Finding {
  const at = (file: string, item: Located, message: string): RelatedLocation => ({
    range: item.range,
    message,
    ...(file === path ? {} : { file }),
  });
  const divided = division.list.dividedByDataParallel!;
  const message =
    `The gradient of \`self.${s.weight}\` is multiplied by ${s.scale} (one over the ${s.group.replace(/_/g, '-')} group's size) in \`${s.scaler}.backward\`, ` +
    `and the data-parallel wrapper already makes it the mean: under expert parallelism this weight is marked \`allreduce=False\`, and its gradient, ` +
    `the sum of the expert-parallel ranks' contributions through the token dispatch, is divided by the data-parallel size after the sync ` +
    `(\`self.${division.list.list}\` in ${division.path}); otherwise it is in the averaged buffers. ` +
    `The gradient is scaled for the ranks twice: the weight's effective learning rate is 1/|${s.group.replace(/_/g, '-')}| (the group's size) of the configured one. ` +
    `Remove the scaler, or the wrapper's division.`;
  const related = [
    at(path, s.backwardAt, 'the backward multiplies the weight’s gradient by the scale'),
    at(path, s.scaleAt, 'the scale: one over a parallel group’s size'),
    at(path, s.marker, 'the weight is marked as an expert-parallel weight'),
    at(division.path, divided, 'the wrapper divides the marked weights’ gradients by the data-parallel size'),
    at(
      dispatch.path,
      dispatch.item,
      'the tokens are moved over an expert-parallel group: the backward sums the ranks’ contributions',
    ),
  ];
  return {
    code: 'CP002',
    severity: ruleInfo('CP002').severity,
    range: s.site.range,
    message,
    related,
    fixes: [],
  };
}

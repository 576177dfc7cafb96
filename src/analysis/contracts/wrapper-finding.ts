// Words the CP002 finding of the optimizer wrapper contract (optimizer-wrappers.ts): where the batch of all ranks is
// given its value, the wrapper class (and the factory's choice of it), the two divisions, and the evidence chain
// from the per-gradient division to the world-size division. It is apart from the contract because wording a proven
// double division is a separate job from proving it along the wrapper's classes.
import { child, unparen, type PyNode } from '../tree';
import type { FileModel, FunctionInfo } from '../scope';
import { ruleInfo } from '../rules';
import type { Finding, RelatedLocation } from '../types';
import type { WrapperClaim } from './wrapper-claim';
import type { Assumed, FactoryChoice } from './wrapper-factory';

export function wrapperFinding(
  path: string,
  model: FileModel,
  fn: FunctionInfo,
  argument: PyNode,
  wrapper: string,
  claim: WrapperClaim,
  choice?: FactoryChoice,
  assumed?: Assumed,
): Finding {
  const s = model.syntax;
  const arg = unparen(argument);
  const name = s.text(arg);
  // A name is reported where it is given its value, which is where the batch of all ranks is computed.
  const assigned =
    arg.type === 'identifier'
      ? fn.assignments.find((a) => a.type === 'assignment' && s.text(child(a, 'left') ?? a) === name)
      : undefined;
  const at = assigned ?? arg;
  const divide = claim.divide;
  const world = claim.worldDivide;
  const where = (e: typeof divide) => `\`${e.className}.${e.method}\``;
  const chosen = choice
    ? ` (the class \`${clipped(s.text(choice.call).replace(/\s+/g, ' '))}\` returns for ${choice.decidedBy.map((d) => `\`${d}\``).join(', ')})`
    : '';
  const onPath = [...(assumed?.values.keys() ?? [])].map((n) => `\`${n}\``);
  const when = onPath.length > 0 ? `Where ${onPath.join(' and ')} ${onPath.length > 1 ? 'are' : 'is'} true, ` : '';
  const message =
    `${when}\`${name}\` is the batch of all ranks (a dataset's length over the steps of a loader whose sampler splits it among the ranks), ` +
    `and \`${wrapper}\`${chosen} divides each gradient by it in ${where(divide)} (\`${claim.attribute}\`), then sums the gradients over the ranks and ` +
    `divides them by the world size again in ${where(world)}: the applied gradient is 1/N (world size) of the mean, and the effective ` +
    `learning rate 1/N of the configured one. Pass the batch of one rank (divide \`${name}\` by the world size), or drop one of the divisions.`;
  const link = (e: typeof divide, text: string): RelatedLocation => ({
    range: e.model.syntax.source.range(e.node),
    message: text,
    ...(e.path === path ? {} : { file: e.path }),
  });
  const related = [
    link(divide, `each gradient is divided by \`${claim.attribute}\``),
    link(claim.reduce, 'the gradients are summed over all ranks'),
    link(world, 'and divided by the world size'),
  ];
  return {
    code: 'CP002',
    severity: ruleInfo('CP002').severity,
    range: s.source.range(at),
    message,
    related,
    fixes: [],
  };
}

function clipped(text: string): string {
  return text.length > 70 ? `${text.slice(0, 69)}…` : text;
}

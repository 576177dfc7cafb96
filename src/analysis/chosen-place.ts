// A wrong scaling factor that reached the object applying it through constructor arguments (Megatron's DDP picks
// `1 / dp` and hands it to its buffers, whose buckets multiply the gradients by it before the reduction) is fixed
// where it was chosen, often in another file. The finding is shown there; the construction sites it was passed
// through, the place that applies it, the reduction and the update follow as its evidence, in that order, so that
// SARIF's code flow reads from the choice to the step.
import type { ValueOrigin } from './constructor-request';
import type { Finding, RelatedLocation, SourceRange } from './types';

export interface ChosenPlaceInput {
  /** The file being analysed, as the program names it; undefined outside a program. */
  readonly path: string | undefined;
  readonly origin: ValueOrigin;
  /** The factor as the message shows it: `factor 1/dp` or `divisor dp`. */
  readonly factor: string;
  /** Where the factor is applied, in the analysed file. */
  readonly applied: SourceRange;
  /** The rule's sentence about the application (what was summed, over which group, the effective factor). */
  readonly message: string;
  /** The evidence of the analysed file (the reduction, the update). */
  readonly related: readonly RelatedLocation[];
  readonly finding: Omit<Finding, 'range' | 'message' | 'related'>;
}

/** The finding at the place the factor was chosen, and the file it belongs in when that is not the analysed one. */
export function findingAtChoice(input: ChosenPlaceInput): { file?: string; finding: Finding } {
  const { origin, path } = input;
  const home = origin.file ?? path;
  // A place is written with its file only when it is not in the finding's own file.
  const at = (file: string | undefined, range: SourceRange, message: string): RelatedLocation => {
    const where = file ?? path;
    return where === home || where === undefined ? { range, message } : { range, message, file: where };
  };
  const through = origin.through.map((p) => at(p.file, p.range, `passed to \`${calleeOf(p.text)}\` here`));
  const related = [
    ...through,
    at(path, input.applied, `the ${input.factor} is applied here`),
    ...input.related.map((r) => at(r.file ?? path, r.range, r.message)),
  ];
  const names = unique(origin.through.map((p) => `\`${calleeOf(p.text)}\``));
  const where =
    home === path || path === undefined
      ? `line ${input.applied.startLine + 1}`
      : `${path}:${input.applied.startLine + 1}`;
  const message = `The ${input.factor} chosen here is passed through ${listed(names)} to ${where}, where ${input.message}`;
  const finding: Finding = { ...input.finding, range: origin.range, message, related };
  return home === path ? { finding } : { file: home, finding };
}

/** `ParamAndGradBuffer( self.ddp_config, …` → `ParamAndGradBuffer`. */
function calleeOf(callText: string): string {
  return callText.split('(')[0].trim();
}

function unique(items: readonly string[]): string[] {
  return items.filter((x, i) => items.indexOf(x) === i);
}

function listed(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? 'a constructor';
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

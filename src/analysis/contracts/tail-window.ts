// The last, shorter accumulation window of an epoch, against transformers' Trainer. The Trainer's training loop
// cuts each epoch into windows of `gradient_accumulation_steps` micro-batches and steps after each; when the
// epoch's batch count is not a multiple of K, its last window holds r < K micro-batches and still steps. From
// 4.55.0 the loop records the size of the window being run in `self.current_gradient_accumulation_steps` (trl
// divides by it from 2324245, on `transformers>=4.55.0`), and the Trainer's own `training_step` divides by it. A
// subclass whose `training_step` divides every micro-batch's loss by the configured
// `self.args.gradient_accumulation_steps` gives that last step r/K of the window's mean gradient (CP003; fixed in
// LLaMA-Factory 1b47415). Releases before 4.55.0 are left out: their loops are not read here.
import type { Finding, RelatedLocation } from '../types';
import { ruleInfo } from '../rules';
import type { FileClasses } from './trainer-classes';
import { trainerHierarchy, type Located } from './hierarchy';
import { allowedReleases, allowsOnlyFrom, compareVersions, parseVersion, type Pin, type Version } from './versions';
import { RELEASES, statedPins, type TrainerWorkspace } from './hf-trainer';

const WINDOWED_LOOP = parseVersion('4.55.0')!;

/**
 * Versions to test that the pins can be met at all from 4.55.0 on: the known 4.x releases and the 5.x minors (pins
 * that contradict each other, `>=4.55` in one manifest and `<4.50` in another, describe no environment).
 */
const PROBES: readonly Version[] = [
  ...RELEASES.filter((v) => compareVersions(v, WINDOWED_LOOP) >= 0),
  ...Array.from({ length: 30 }, (_, minor) => [5, minor, 0]),
];

/** CP003 findings for Trainer subclasses whose `training_step` divides by the configured window size, by file. */
export function tailWindowFindings(ws: TrainerWorkspace): Map<string, Finding[]> {
  const out = new Map<string, Finding[]>();
  // A file that assigns the Trainer's loop or training_step replaces what the windows are: nothing is proven.
  if ([...ws.files.values()].some((f: FileClasses) => f.patchesLoop)) return out;
  const hierarchy = trainerHierarchy(ws.files, ws.resolve);
  for (const c of hierarchy.classes) {
    const division = c.facts.windowDivision;
    const up = hierarchy.ancestorsOf(c);
    if (!division || !up) continue;
    const family = [c, ...up, ...hierarchy.descendantsOf(c)];
    if (family.some((k) => k.facts.namesWindowSize || k.facts.formsWindows)) continue;
    const pins = ws.pinsFor(c.path);
    if (!allowsOnlyFrom(pins, WINDOWED_LOOP) || allowedReleases(pins, PROBES).allowed.length === 0) continue;
    const list = out.get(c.path) ?? [];
    out.set(c.path, [...list, tailFinding(c, pins)]);
  }
  return out;
}

function tailFinding(c: Located, pins: readonly Pin[]): Finding {
  const d = c.facts.windowDivision!;
  const name = c.facts.name;
  const message =
    `\`${name}.training_step\` divides \`${d.loss}\` by \`${d.divisor}\` (K) on every micro-batch, but with ` +
    `transformers 4.55.0 or newer (${statedPins(pins)}) the Trainer's loop ends each epoch with a shorter window ` +
    `when the epoch's batch count is not a multiple of K, and records its size in ` +
    `\`self.current_gradient_accumulation_steps\`: the step after a window of r < K micro-batches applies r/K of ` +
    `their mean gradient. Divide by \`self.current_gradient_accumulation_steps\`.`;
  const related: RelatedLocation[] = [
    { range: d.backward, message: `backward runs on \`${d.loss}\` divided by K, once per micro-batch of the window` },
    ...pins.map((p) => ({
      range: { startLine: p.line, startColumn: 0, endLine: p.line, endColumn: 0 },
      message: `the workspace requires \`${p.package}${p.specifier}\``,
      ...(p.file === c.path ? {} : { file: p.file }),
    })),
  ];
  return { code: 'CP003', severity: ruleInfo('CP003').severity, range: d.range, message, related, fixes: [] };
}

// The contract of transformers' `Trainer` with the subclasses that override `compute_loss`, per release. Since
// 4.46 the Trainer passes `compute_loss` the number of label tokens of the whole accumulation window
// (`num_items_in_batch`) and, when it believes the loss is normalised by that count, it no longer divides the
// loss by `gradient_accumulation_steps`. A subclass whose `compute_loss` returns its own per-micro-batch loss and
// ignores the count then has the gradients of the K micro-batches of a step summed, not averaged (CP008):
//
// - 4.46.0 and 4.46.1 divide no loss at all (`loss *= gradient_accumulation_steps` before accelerate's division);
//   LLaMA-Factory divided by hand for exactly these two releases (8185eb1, e2748fa), and unsloth rewrote that line
//   of `training_step` (a6e4a8b). 4.46.2 restored the division for models that take no loss kwargs.
// - From 4.48.0 (transformers #35207) the Trainer divides only when `self.model_accepts_loss_kwargs` is false, and
//   `Trainer.__init__` sets it true when the model's forward takes `**kwargs`, as transformers' language models do.
//   The fix is `self.model_accepts_loss_kwargs = False` after `super().__init__` (trl 40c2383, 59c2014, 8e65825,
//   d14f7f3, 6f99f42 in January 2025 on 4.48; c949b66 in July 2025 on 4.53).
// - Later releases also divide when `num_items_in_batch` is None, which depends on the batch having `labels`, so
//   they prove nothing here; 4.46.2 to 4.47 are left out for the same reason.
// Where the workspace states no transformers version, nothing is proven: the finding is a hint, off by default.
import { compareVersions, formatVersion, parseVersion, allowedReleases, type Pin, type Version } from './versions';
import type { FileClasses } from './trainer-classes';
import { trainerHierarchy, type Located } from './hierarchy';
import type { Finding, RelatedLocation, SourceRange } from '../types';
import { ruleInfo } from '../rules';

/** Releases of transformers from 4.40 on (the contract before 4.46 is the plain division, which needs none). */
export const RELEASES: readonly Version[] = [
  '4.40.0 4.40.1 4.40.2 4.41.0 4.41.1 4.41.2 4.42.0 4.42.1 4.42.2 4.42.3 4.42.4 4.43.0 4.43.1 4.43.2 4.43.3 4.43.4',
  '4.44.0 4.44.1 4.44.2 4.45.0 4.45.1 4.45.2 4.46.0 4.46.1 4.46.2 4.46.3 4.47.0 4.47.1 4.48.0 4.48.1 4.48.2 4.48.3',
  '4.49.0 4.50.0 4.50.1 4.50.2 4.50.3 4.51.0 4.51.1 4.51.2 4.51.3 4.52.0 4.52.1 4.52.2 4.52.3 4.52.4 4.53.0',
  '4.53.1 4.53.2 4.53.3 4.54.0 4.54.1 4.55.0 4.55.1 4.55.2 4.55.3 4.55.4 4.56.0 4.56.1 4.56.2 4.57.0 4.57.1',
]
  .join(' ')
  .split(' ')
  .map((v) => parseVersion(v)!);

export const NO_DIVISION = { from: [4, 46, 0], until: [4, 46, 2] } as const;
const DIVISION_UNLESS_FLAG = { from: [4, 48, 0], until: [4, 54, 0] } as const;

export function within(v: Version, window: { from: Version; until: Version }): boolean {
  return compareVersions(v, window.from) >= 0 && compareVersions(v, window.until) < 0;
}

/** Why the Trainer leaves a class's loss undivided, at which releases the workspace allows. */
interface Proof {
  readonly releases: string;
  readonly how: string;
  readonly pins: readonly Pin[];
}

function proofFor(pins: readonly Pin[]): Proof | 'unstated' | undefined {
  if (pins.length === 0) return 'unstated';
  const { allowed, bounded } = allowedReleases(pins, RELEASES);
  const flagged = allowed.filter((v) => within(v, DIVISION_UNLESS_FLAG));
  if (flagged.length > 0)
    return {
      releases: `${span(flagged)}, which the workspace allows`,
      how: "the Trainer divides the loss by `gradient_accumulation_steps` only when `self.model_accepts_loss_kwargs` is false, and `Trainer.__init__` sets it true for a model whose forward takes `**kwargs` (as transformers' language models do)",
      pins,
    };
  const newest = allowed[allowed.length - 1];
  if (bounded && newest && within(newest, NO_DIVISION))
    return {
      releases: `${formatVersion(newest)}, the newest release the workspace allows`,
      how: 'the Trainer divides no loss by `gradient_accumulation_steps` and leaves it to the loss to be normalised by `num_items_in_batch`',
      pins,
    };
  return undefined;
}

function span(versions: readonly Version[]): string {
  const first = formatVersion(versions[0]);
  const last = formatVersion(versions[versions.length - 1]);
  return first === last ? first : `${first} to ${last}`;
}

export interface TrainerWorkspace {
  readonly files: ReadonlyMap<string, FileClasses>;
  /** The file a module name denotes from another file (the program's module index). */
  resolve(from: string, module: string): string | undefined;
  /** The transformers pins that apply to a file (its folder's manifests and the program's require_version calls). */
  pinsFor(path: string): readonly Pin[];
}

/** CP008 findings for the Trainer subclasses whose loss the Trainer leaves undivided, by file. */
export function trainerContractFindings(ws: TrainerWorkspace, hints: boolean): Map<string, Finding[]> {
  const out = new Map<string, Finding[]>();
  const hierarchy = trainerHierarchy(ws.files, ws.resolve);
  for (const c of hierarchy.classes) {
    const loss = c.facts.computeLoss;
    const up = hierarchy.ancestorsOf(c);
    if (!loss || !up || !loss.acceptsCount || loss.readsCount || loss.namesAccumulation) continue;
    // The class, its ancestors or a subclass that set the flag, pass `compute_loss_func` or replace
    // `training_step` choose the scaling themselves.
    if (c.facts.choosesScaling || up.some((a) => a.facts.choosesScaling)) continue;
    if (hierarchy.descendantsOf(c).some((d) => d.facts.choosesScaling)) continue;
    const proof = proofFor(ws.pinsFor(c.path));
    if (proof === undefined || (proof === 'unstated' && !hints)) continue;
    const finding = trainerFinding(c, proof === 'unstated' ? undefined : proof);
    const list = out.get(c.path) ?? [];
    out.set(c.path, [...list, finding]);
  }
  return out;
}

/** Each distinct specifier once, where it is first stated: "`transformers>=4.46.0` in setup.py:80". */
export function statedPins(pins: readonly Pin[]): string {
  const seen = new Map<string, Pin>();
  for (const p of pins) if (!seen.has(p.specifier)) seen.set(p.specifier, p);
  return [...seen.values()].map((p) => `\`${p.package}${p.specifier}\` in ${p.file}:${p.line + 1}`).join('; ');
}

function trainerFinding(c: Located, proof: Proof | undefined): Finding {
  const loss = c.facts.computeLoss!;
  const name = c.facts.name;
  const range: SourceRange = c.facts.superInit ?? loss.range;
  const stated = proof
    ? `with transformers ${proof.releases} (${statedPins(proof.pins)}), ${proof.how}`
    : 'with transformers 4.48 to 4.53 (the workspace states no version, so this is not proven), the Trainer divides the loss by `gradient_accumulation_steps` only when `self.model_accepts_loss_kwargs` is false';
  const message =
    `\`${name}.compute_loss\` ignores \`num_items_in_batch\` and nothing sets \`self.model_accepts_loss_kwargs = False\`: ` +
    `${stated}; so the gradients of the K micro-batches of a step are summed, not averaged: the effective learning rate is K× (gradient accumulation steps) the configured one.`;
  const related: RelatedLocation[] = [
    {
      range: loss.range,
      message: `\`${name}.compute_loss\` returns its own loss and never reads \`num_items_in_batch\``,
    },
    ...(proof?.pins ?? []).map((p) => ({
      range: { startLine: p.line, startColumn: 0, endLine: p.line, endColumn: 0 },
      message: `the workspace requires \`${p.package}${p.specifier}\``,
      ...(p.file === c.path ? {} : { file: p.file }),
    })),
  ];
  if (c.facts.superInit)
    related.unshift({
      range: c.facts.range,
      message: `\`${name}\` subclasses transformers' \`Trainer\`; \`super().__init__\` sets \`model_accepts_loss_kwargs\` from the model's forward`,
    });
  return {
    code: 'CP008',
    severity: proof ? ruleInfo('CP008').severity : 'info',
    range,
    message,
    related,
    fixes: [],
  };
}

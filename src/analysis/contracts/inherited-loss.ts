// The contract of transformers 4.46.0 and 4.46.1 with a Trainer subclass that keeps the Trainer's own
// `compute_loss`. In those two releases `Trainer.training_step` multiplies every loss by
// `gradient_accumulation_steps` before `accelerator.backward` divides it by the same number: the Trainer expects
// the loss to be the micro-batch's share of the window's sum, normalised by `num_items_in_batch` (the label tokens
// of the whole window). `Trainer.compute_loss` passes that count to the model only when
// `self.model_accepts_loss_kwargs` is true (the model's forward takes `loss_kwargs`); any other model returns the
// mean over its own micro-batch, and the K means of a window are summed (CP008). LLaMA-Factory divided by hand
// for exactly these releases (8185eb1: "fix incorrect loss value for vlms"), unsloth rewrote that line of
// `training_step` at import (a6e4a8b), and 4.46.2 divides again for models that take no loss kwargs.
//
// The claim depends on the model, which is chosen at run time, so the finding is a warning that names the
// condition; it is given only where the newest release the workspace's pins allow is 4.46.0 or 4.46.1 (what a
// fresh install gets), and only for the most derived class of the workspace that inherits the Trainer's loss.
// It is reported at that class's name: what is wrong is a method the class lacks, and the fix is a `compute_loss`
// added to its body (or a change of the pins), not a statement beside `super().__init__`.
import type { Finding, RelatedLocation } from '../types';
import { allowedReleases, formatVersion, type Pin } from './versions';
import { trainerHierarchy, type Located } from './hierarchy';
import { NO_DIVISION, RELEASES, statedPins, within, type TrainerWorkspace } from './hf-trainer';

/** CP008 warnings for Trainer subclasses that keep `Trainer.compute_loss` under 4.46.0-4.46.1, by file. */
export function inheritedLossFindings(ws: TrainerWorkspace): Map<string, Finding[]> {
  const out = new Map<string, Finding[]>();
  // A patched `training_step` (unsloth's) or a `compute_loss_func` decides the scaling in code not judged here.
  if ([...ws.files.values()].some((f) => f.patchesLoop || f.passesLossFunc)) return out;
  const hierarchy = trainerHierarchy(ws.files, ws.resolve);
  for (const c of hierarchy.classes) {
    const up = hierarchy.ancestorsOf(c);
    if (!up) continue;
    const family = [c, ...up];
    // An override of compute_loss is judged by hf-trainer.ts; a class that sets the flag or replaces
    // training_step chooses the scaling itself.
    if (family.some((k) => k.facts.computeLoss || k.facts.choosesScaling)) continue;
    // A subclass in the workspace is the class that runs (or overrides the loss): judge it there, once.
    if (hierarchy.descendantsOf(c).length > 0) continue;
    const pins = ws.pinsFor(c.path);
    const newest = newestAllowed(pins);
    if (!newest || !within(newest, NO_DIVISION)) continue;
    const list = out.get(c.path) ?? [];
    out.set(c.path, [...list, inheritedFinding(c, up, formatVersion(newest), pins)]);
  }
  return out;
}

/** The newest known release the pins allow, where they bound it from above; undefined otherwise. */
function newestAllowed(pins: readonly Pin[]): readonly number[] | undefined {
  if (pins.length === 0) return undefined;
  const { allowed, bounded } = allowedReleases(pins, RELEASES);
  return bounded ? allowed[allowed.length - 1] : undefined;
}

function inheritedFinding(c: Located, up: readonly Located[], newest: string, pins: readonly Pin[]): Finding {
  const name = c.facts.name;
  const via = up.length > 0 ? ` (through ${up.map((a) => `\`${a.facts.name}\``).join(', ')})` : '';
  const message =
    `\`${name}\` keeps \`Trainer.compute_loss\`${via} and nothing sets \`self.model_accepts_loss_kwargs\`: with ` +
    `transformers ${newest}, the newest release the workspace allows (${statedPins(pins)}), ` +
    `\`Trainer.training_step\` multiplies every loss by \`gradient_accumulation_steps\` before \`accelerator.backward\` ` +
    `divides it by the same, expecting a loss normalised by the window's label count \`num_items_in_batch\`, and ` +
    `\`Trainer.compute_loss\` passes that count only to a model whose forward takes \`loss_kwargs\`. For any other ` +
    `model the loss is its own micro-batch's mean, so the gradients of the K micro-batches of a step are summed, not ` +
    `averaged: the effective learning rate is K× (gradient accumulation steps) the configured one. Divide the loss ` +
    `by \`self.args.gradient_accumulation_steps\` in a \`compute_loss\` override when the model takes no loss ` +
    `kwargs, or exclude 4.46.0 and 4.46.1 from the pins.`;
  const related: RelatedLocation[] = [
    // The workspace's bases it inherits the loss through, each defining no `compute_loss` either.
    ...up.map((a) => ({
      range: a.facts.range,
      message: `\`${a.facts.name}\` defines no \`compute_loss\` either`,
      ...(a.path === c.path ? {} : { file: a.path }),
    })),
    ...pins.map((p) => ({
      range: { startLine: p.line, startColumn: 0, endLine: p.line, endColumn: 0 },
      message: `the workspace requires \`${p.package}${p.specifier}\``,
      ...(p.file === c.path ? {} : { file: p.file }),
    })),
  ];
  return {
    code: 'CP008',
    severity: 'warning',
    range: c.facts.range,
    message,
    related,
    fixes: [],
  };
}

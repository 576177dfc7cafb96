// The workspace contracts' findings state the effect of a gradient factor for the optimizer their step reaches, in
// the same words as the per-file findings (optimizer-effect.ts): a contract reads its files as syntax trees, and this
// builds the file model the optimizer resolution needs, once per tree.
import { FileModel } from '../scope';
import { Syntax } from '../syntax';
import { optimizerAt, restateEffect } from '../optimizer-effect';
import type { PyNode, Source } from '../tree';

const models = new WeakMap<PyNode, FileModel>();

/** The message with its effect clause stated for the optimizer that the step `step` of the file `module` applies. */
export function effectAtStep(message: string, module: PyNode, source: Source, step: PyNode): string {
  let model = models.get(module);
  if (!model) {
    model = new FileModel(module, new Syntax(source));
    models.set(module, model);
  }
  return restateEffect(message, optimizerAt(model, step));
}

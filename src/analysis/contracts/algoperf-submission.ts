// The algoperf benchmark's submission API (algorithmic_efficiency's spec.py and submission_runner.py): the runner
// imports a submission module, calls its `init_optimizer_state(...)` once and hands the result to every
// `update_params(..., optimizer_state, ...)` call (later calls get what `update_params` returned first). A value
// unpacked from `optimizer_state` inside `update_params` is therefore, on the first step, what
// `init_optimizer_state` returned, though no call in the file shows it.
import type { FileModel } from '../scope';
import type { ParameterContract } from '../value-origins';

/** The algoperf submission API: the runner passes `init_optimizer_state`'s result to `update_params`. */
export function algoperfSubmissionApi(model: FileModel): ParameterContract | undefined {
  // The package was `algorithmic_efficiency` until 2024 and is `algoperf` since.
  const library = /^(algorithmic_efficiency|algoperf)(\.|$)/;
  if (![...model.imports.values()].some((m) => library.test(m))) return undefined;
  const topLevel = (name: string) => model.byName.get(name)?.find((f) => f.enclosing?.node.type === 'module');
  const init = topLevel('init_optimizer_state');
  const update = topLevel('update_params');
  if (!init || !update) return undefined;
  return (fn, param) => (fn === update && param === 'optimizer_state' ? { producer: init } : undefined);
}

// CP003, token weighting: a loss that is a mean over its own micro-batch's tokens, averaged over micro-batches with
// equal weights. When the micro-batches keep different numbers of tokens (a label mask), a token in a short
// micro-batch weighs more than one in a long one, and the gradient is not the mean over the window's tokens. The
// correct form divides each micro-batch's summed loss by the token count of the whole window (summed over the
// micro-batches, and all-reduced over the data-parallel ranks where they average).
//
// The rule speaks only where the code shows all of it (token-counts.ts proves the count is data-dependent):
// - Hugging Face Trainer contract: `compute_loss(..., num_items_in_batch=None)` is handed the window's token count
//   and never reads it, while the loss it returns is a mean over the micro-batch's own masked tokens. The Trainer
//   combines the micro-batches' losses with equal weights (dividing each by the accumulation steps).
// - An accumulation loop of this file (accumulation.ts finds the window): backward on each micro-batch's token
//   mean, divided by the micro-step count K, one step per K micro-batches.
import { child, named, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { AccumulationRule } from './accumulation';
import type { LossTracer } from './losses';
import { TokenCounts, type TokenMean } from './token-counts';
import { enclosingLoop } from './accumulation-syntax';
import { engineWindowVerdict } from './token-engine-window';
import type { Severity } from './types';

export interface TokenWeightingVerdict {
  /** Where the finding is shown: the micro-batch's loss (the call or division that makes the mean). */
  readonly node: PyNode;
  readonly message: string;
  readonly related: readonly { readonly node: PyNode; readonly message: string }[];
  /** Set where the rule's severity is lowered (a misweighting whose size depends on the data). */
  readonly severity?: Severity;
}

const WINDOW_COUNT = 'num_items_in_batch';

/**
 * `hints`: also report the engine-window shape (token-engine-window.ts), which is suspected, not proven: the
 * engine's accumulation window is read from a `%` in the loop, not from the engine's configuration.
 */
export function tokenWeightingVerdicts(
  model: FileModel,
  losses: LossTracer,
  accumulation: AccumulationRule,
  hints = false,
): TokenWeightingVerdict[] {
  const counts = new TokenCounts(model);
  const out: TokenWeightingVerdict[] = [];
  for (const fn of model.functions) {
    const v = trainerContractVerdict(model, counts, fn) ?? accumulationVerdict(model, counts, losses, accumulation, fn);
    const engine = v || !hints ? undefined : engineWindowVerdict(model, counts, losses, fn, (m) => describe(model, m));
    if (v) out.push(v);
    else if (engine) out.push({ ...engine, severity: 'warning' });
  }
  return out;
}

function trainerContractVerdict(
  model: FileModel,
  counts: TokenCounts,
  fn: FunctionInfo,
): TokenWeightingVerdict | undefined {
  const s = model.syntax;
  if (fn.name !== 'compute_loss' || !fn.className) return undefined;
  const param = fn.params.find((p) => p.name === WINDOW_COUNT);
  if (!param) return undefined;
  // Any read of the window's count (passed on, compared, divided by) may be the global normalisation.
  if (fn.nodes.some((n) => n.type === 'identifier' && s.text(n) === WINDOW_COUNT)) return undefined;
  if (fn.nodes.some((n) => n.type === 'dictionary_splat' || n.type === 'list_splat')) return undefined;
  if (ownsTrainingStep(model, fn.className)) return undefined;
  for (const ret of fn.nodes) {
    if (ret.type !== 'return_statement') continue;
    const value = named(ret)[0];
    const mean = value && counts.meanOf(value, fn, ret.start);
    if (!mean) continue;
    const where = entryOf(model, mean, fn, value);
    const message = `\`compute_loss\` is given \`${WINDOW_COUNT}\`, the token count of the whole gradient-accumulation window, and never reads it: the loss it returns is ${describe(model, mean)}. The Trainer combines the micro-batches' losses with equal weights, so with gradient accumulation a token in a micro-batch with few tokens weighs more than one in a micro-batch with many. Divide the summed loss by \`${WINDOW_COUNT}\` instead.`;
    return { node: where, message, related: evidence(mean, param.node) };
  }
  return undefined;
}

/**
 * A `training_step` of the same class that does not hand its work to the Trainer's (`super().training_step`)
 * decides itself how the micro-batches' losses are combined (GRPO-style trainers rescale there): the Trainer's
 * equal weighting is then not proven.
 */
function ownsTrainingStep(model: FileModel, className: string): boolean {
  const steps = (model.byName.get('training_step') ?? []).filter((f) => f.className === className);
  return steps.some(
    (step) =>
      !step.calls.some(
        (c) => model.syntax.calleeName(c) === 'training_step' && /^super\(/.test(model.syntax.calleeText(c)),
      ),
  );
}

function accumulationVerdict(
  model: FileModel,
  counts: TokenCounts,
  losses: LossTracer,
  accumulation: AccumulationRule,
  fn: FunctionInfo,
): TokenWeightingVerdict | undefined {
  for (const site of losses.backwardSites(fn)) {
    if (site.kind !== 'backward' || !site.loss) continue;
    const window = accumulation.window(site, fn);
    if (!window) continue;
    const countText = window.countText ?? model.syntax.text(window.count);
    const divided =
      dividedBy(model, site.loss, fn, site.call.start, countText) ?? accumulation.backwardScales(site.call);
    if (!divided) continue;
    const mean = counts.meanOf(site.loss, fn, site.call.start);
    if (!mean || !inside(mean.mask, enclosingLoop(site.call, fn.node) ?? fn.node, mean.helper)) continue;
    const message = `backward() runs on \`${countText}\` micro-batches before each optimizer step, and each one's loss is ${describe(model, mean)}, divided by \`${countText}\`: the micro-batches weigh the same whatever their token counts, so a token in a micro-batch with few tokens weighs more than one in a micro-batch with many. Sum the token losses and divide by the token count of all \`${countText}\` micro-batches instead.`;
    return {
      node: site.call,
      message,
      related: [
        ...evidence(mean),
        { node: window.evidence, message: `one optimizer step per \`${countText}\` micro-batches` },
        { node: window.step, message: 'the step applies the equally weighted micro-batch gradients' },
      ],
    };
  }
  return undefined;
}

/** True when the loss (or a value it was assigned from) is divided by the micro-step count. */
function dividedBy(
  model: FileModel,
  loss: PyNode,
  fn: FunctionInfo,
  before: number,
  countText: string,
): true | undefined {
  const s = model.syntax;
  const divides = (n: PyNode) =>
    new RegExp(`/\\s*\\(?\\s*${escape(countText)}\\b`).test(s.text(n).replace(/\s+/g, ' '));
  if (divides(loss)) return true;
  const name = s.text(loss);
  for (const a of fn.assignments) {
    if (a.start >= before) break;
    const left = child(a, 'left');
    if (!left || s.text(left) !== name) continue;
    const right = child(a, 'right');
    if (a.type === 'augmented_assignment' && s.operator(a) === '/=' && right && s.text(right) === countText)
      return true;
    if (a.type === 'assignment' && right && divides(right)) return true;
  }
  return undefined;
}

/** The mask is made on each micro-batch: inside the accumulation loop, or in a helper the loop calls. */
function inside(mask: PyNode, perBatch: PyNode, helper: FunctionInfo | undefined): boolean {
  if (helper) return true;
  return mask.start >= perBatch.start && mask.end <= perBatch.end;
}

/** The node of `fn` the mean enters through: the call to the helper that makes it, or the mean itself. */
function entryOf(model: FileModel, mean: TokenMean, fn: FunctionInfo, fallback: PyNode): PyNode {
  if (!mean.helper) return mean.mean.start >= fn.node.start && mean.mean.end <= fn.node.end ? mean.mean : fallback;
  const call = fn.calls.find((c) => c.start < fallback.start && model.resolveCall(c) === mean.helper);
  return call ?? fallback;
}

function describe(model: FileModel, mean: TokenMean): string {
  const s = model.syntax;
  const where = mean.helper ? ` (in \`${mean.helper.name}\`)` : '';
  return `a mean over this micro-batch's own tokens, \`${clipText(s.text(mean.mean))}\`${where}, counted from \`${clipText(s.text(mean.mask))}\``;
}

function evidence(mean: TokenMean, param?: PyNode): { node: PyNode; message: string }[] {
  const out = [
    { node: mean.mask, message: 'the per-micro-batch token count is made from this mask' },
    { node: mean.mean, message: 'the loss is divided by that count: a mean over this micro-batch only' },
  ];
  if (param) out.push({ node: param, message: `\`${WINDOW_COUNT}\`, the window's token count, is never read` });
  return out;
}

function clipText(t: string): string {
  const one = t.replace(/\s+/g, ' ');
  return one.length > 60 ? `${one.slice(0, 57)}...` : one;
}

function escape(t: string): string {
  return t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

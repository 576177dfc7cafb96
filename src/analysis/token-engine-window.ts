// CP003, token weighting under an engine's accumulation window: the loss is a mean over this micro-batch's tokens
// whose count the code sums over the data-parallel ranks (`n = mask.sum(); dist.all_reduce(n)`), and the backward
// pass is handed to an engine (`model_engine.backward(loss)`, `strategy.backward(loss, model, optimizer)`) inside a
// loop that counts micro-batches per optimizer step (`step % gradient_accumulation_steps`). The engine divides each
// micro-batch's loss by the accumulation steps, so the window's micro-batches weigh the same whatever their token
// counts; the all-reduce shows that the author means one token mean over the whole batch, and it covers the ranks
// but not the other micro-batches of the window.
//
// A per-micro-batch mean without the all-reduce is left alone: with padding it is everywhere, and nothing in the
// code says the author wants token weighting. So is a loop without a visible accumulation count: with one
// micro-batch per step the rank-summed count is exactly right.
//
// This is a hint (reported only with the `hints` option), not a proof. The window is read from a `%` with an
// accumulation name in the loop, not from the engine: the engine's own window comes from its configuration, which
// may differ: OpenRLHF's DeepSpeed strategy sets `gradient_accumulation_steps` to 1 on its dynamic-batch path, yet
// still computes `accumulated_gradient` from the batch sizes, and its own EMA update reads
// `% self.accumulated_gradient == 0 or self.use_dynamic_batch`. Nor is the receiver of `.backward(loss)` proven to
// be an engine that divides by the window.
import { child, named, unparen, visit, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { LossTracer } from './losses';
import type { TokenCounts, TokenMean } from './token-counts';
import { ACCUMULATION_NAME, enclosingLoop } from './accumulation-syntax';
import { COLLECTIVE } from './local-normaliser';

export interface EngineWindowVerdict {
  readonly node: PyNode;
  readonly message: string;
  readonly related: readonly { readonly node: PyNode; readonly message: string }[];
}

/** Reductions that do not sum (an all-reduce with one of these ops is a max, a mean, ...): not a total count. */
const NOT_A_SUM = /\b(MAX|MIN|PRODUCT|AVG|BAND|BOR|BXOR|PREMUL_SUM|max|min|mean|avg)\b|pmean|pmax|pmin/;

export function engineWindowVerdict(
  model: FileModel,
  counts: TokenCounts,
  losses: LossTracer,
  fn: FunctionInfo,
  describe: (mean: TokenMean) => string,
): EngineWindowVerdict | undefined {
  const s = model.syntax;
  for (const site of losses.backwardSites(fn)) {
    // The engine's backward takes the loss as an argument; `loss.backward()` is plain autograd with no division.
    if (site.kind !== 'backward' || !site.loss || !s.args(site.call).positional[0]) continue;
    const loop = enclosingLoop(site.call, fn.node);
    if (!loop) continue;
    const window = accumulationModulo(model, loop);
    if (!window) continue;
    const mean = counts.meanOf(site.loss, fn, site.call.start);
    if (!mean || unparen(mean.mean).type !== 'binary_operator') continue;
    const home = mean.helper ?? fn;
    // The count is made on each micro-batch: in the loop, or in a helper the loop calls.
    if (!mean.helper && !(mean.mask.start >= loop.start && mean.mask.end <= loop.end)) continue;
    const summed = rankSum(model, home, child(mean.mean, 'right'), mean.mean.start);
    if (!summed) continue;
    const k = s.text(window.count);
    const message = `backward() is handed to the engine on each micro-batch, and the loop takes one optimizer step per \`${k}\` of them; each micro-batch's loss is ${describe(mean)}, whose token count is summed over the data-parallel ranks but not over the window's other micro-batches. The engine divides every micro-batch's loss by the accumulation steps, so the micro-batches weigh the same whatever their token counts, and a token in a micro-batch with few tokens weighs more than one in a micro-batch with many (the effective learning rate of each token changes with the data). Sum the token counts of all \`${k}\` micro-batches (and the ranks) before dividing.`;
    return {
      node: site.call,
      message,
      related: [
        { node: mean.mask, message: 'the per-micro-batch token count is made from this mask' },
        { node: summed, message: 'the count is summed over the data-parallel ranks: one token mean is intended' },
        { node: mean.mean, message: 'the loss is divided by the count of this micro-batch alone' },
        { node: window.modulo, message: `the loop counts \`${k}\` micro-batches per optimizer step` },
      ],
    };
  }
  return undefined;
}

/** `step % gradient_accumulation_steps` (or `% self.strategy.accumulated_gradient`) in the loop's body. */
export function accumulationModulo(model: FileModel, loop: PyNode): { modulo: PyNode; count: PyNode } | undefined {
  const s = model.syntax;
  const body = child(loop, 'body');
  if (!body) return undefined;
  let found: { modulo: PyNode; count: PyNode } | undefined;
  visit(body, (n) => {
    if (found) return false;
    if (n.type === 'binary_operator' && s.operator(n) === '%') {
      const right = child(n, 'right');
      const last = right && unparen(right).type === 'attribute' ? child(unparen(right), 'attribute') : right;
      if (right && last && ACCUMULATION_NAME.test(s.text(last))) found = { modulo: n, count: right };
    }
    return !found && n.type !== 'function_definition' && n.type !== 'class_definition';
  });
  return found;
}

/**
 * The collective call that sums the count in place over the ranks, before the division: `dist.all_reduce(n)`
 * (the default op is a sum), `all_reduce(n, op=ReduceOp.SUM)`. The count is the identifier the division reads,
 * through casts and clamps (`n.clamp(min=1)`).
 */
function rankSum(model: FileModel, fn: FunctionInfo, divisor: PyNode | undefined, before: number): PyNode | undefined {
  const s = model.syntax;
  const name = divisor && countName(model, divisor);
  if (!name) return undefined;
  for (const call of fn.calls) {
    if (call.start >= before) break;
    if (!/all_?reduce/i.test(s.calleeName(call)) || !COLLECTIVE.test(s.calleeName(call))) continue;
    const first = s.args(call).positional[0];
    if (!first || countName(model, first) !== name) continue;
    if (NOT_A_SUM.test(s.text(call))) continue;
    return call;
  }
  return undefined;
}

function countName(model: FileModel, n: PyNode): string | undefined {
  const s = model.syntax;
  let cur = unparen(n);
  for (let i = 0; i < 6; i++) {
    if (cur.type === 'identifier') return s.text(cur);
    if (cur.type === 'attribute' && /^self\.\w+$/.test(s.text(cur))) return s.text(cur);
    if (cur.type === 'call' && s.calleeObject(cur)) cur = unparen(s.calleeObject(cur)!);
    else if (cur.type === 'binary_operator' && s.operator(cur) === '+' && named(cur)[0]) cur = unparen(named(cur)[0]);
    else return undefined;
  }
  return undefined;
}

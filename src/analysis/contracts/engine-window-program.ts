// CP003's engine-window shape (token-engine-window.ts) where the loss's token mean is made in other files: the loop
// hands each micro-batch's loss to an engine's backward (`self.strategy.backward(loss, model, optimizer)`) and
// counts micro-batches per step (`step % self.strategy.accumulated_gradient`), and the loss is a sum divided by a
// count that a helper of another file sums from a data-dependent mask and all-reduces over the ranks, handed to the
// loss through a splatted dictionary (splat-token-count.ts). The single-file rule cannot see such a count; this one
// reports only traces that leave the loop's file, so the two never report the same loss.
//
// Like the single-file shape it is a hint (a warning, with `hints` only) where the engine is not followed: the window
// is then read from the `%` in the loop. Where the receiver of `.backward(loss)` is resolved to a DeepSpeed engine
// whose configured window is decided above 1 (engine-config-window.ts), it is an error, and the message says at
// which argument defaults and world sizes the window holds.
import type { PyNode } from '../tree';
import type { Finding, RelatedLocation } from '../types';
import { enclosingLoop, ACCUMULATION_NAME } from '../accumulation-syntax';
import { accumulationModulo } from '../token-engine-window';
import type { Frame, Value } from './bound-values';
import type { ProgramModels } from './program-models';
import { SplatTokenCounts, type SplatTokenMean } from './splat-token-count';
import { EngineConfigWindows, windowText, type EngineWindow } from './engine-config-window';

/** A file can hold the shape only if it hands a loss to a backward call and names an accumulation count. */
const MAY_HOLD = (text: string) => /\.backward\(\s*\w/.test(text) && ACCUMULATION_NAME.test(text) && text.includes('%');

export function engineWindowProgramFindings(
  models: ProgramModels,
  wanted: ReadonlySet<string>,
  isTest: (path: string) => boolean,
  hints: boolean,
): Map<string, Finding[]> {
  const out = new Map<string, Finding[]>();
  const tokens = new SplatTokenCounts(models);
  const engines = new EngineConfigWindows(models, tokens);
  for (const path of wanted) {
    const text = models.text(path);
    if (text === undefined || isTest(path) || !MAY_HOLD(text)) continue;
    const model = models.modelOf(path);
    if (!model) continue;
    const found = model.functions.flatMap((fn) => judgeFunction(tokens, engines, { at: { path, model, fn } }, hints));
    if (found.length > 0) out.set(path, found);
  }
  return out;
}

function judgeFunction(tokens: SplatTokenCounts, engines: EngineConfigWindows, root: Frame, hints: boolean): Finding[] {
  const { model, fn } = root.at;
  const s = model.syntax;
  const out: Finding[] = [];
  for (const call of fn.calls) {
    const loss = s.args(call).positional[0];
    if (s.calleeName(call) !== 'backward' || !s.calleeObject(call) || !loss) continue;
    const loop = enclosingLoop(call, fn.node);
    const window = loop && accumulationModulo(model, loop);
    if (!window) continue;
    const mean = tokens.meanOf({ node: loss, frame: root });
    // A trace that stays in this file is the single-file rule's (token-engine-window.ts).
    if (!mean || mean.files.size < 2 || !madePerMicroBatch(mean, root, loop)) continue;
    const engine = engines.windowOf(call, root);
    const proven = engine && (engine.sizes === 'all' || engine.sizes.length > 0) ? engine : undefined;
    if (proven || hints) out.push(finding(root, call, s.text(window.count), window.modulo, mean, proven));
  }
  return out;
}

/** The count's mask is made on each micro-batch: in the loop, or in a frame the loop's call entered. */
function madePerMicroBatch(mean: SplatTokenMean, root: Frame, loop: PyNode): boolean {
  if (mean.mask.frame !== root) return true;
  return mean.mask.node.start >= loop.start && mean.mask.node.end <= loop.end;
}

function finding(
  root: Frame,
  call: PyNode,
  count: string,
  modulo: PyNode,
  mean: SplatTokenMean,
  engine: EngineWindow | undefined,
): Finding {
  const { path, fn, model } = root.at;
  const text = (v: Value) => clip(v.frame.at.model.syntax.text(v.node));
  const where = (v: Value) => `\`${v.frame.at.fn.name}\`${v.frame.at.path === path ? '' : ` (${v.frame.at.path})`}`;
  const k = clip(count);
  const message = `backward() is handed to the engine on each micro-batch of \`${fn.name}\`, and the loop takes one optimizer step per \`${k}\` of them; each micro-batch's loss is a mean over its own tokens, \`${text(mean.mean)}\` in ${where(mean.mean)}, whose count \`${text(mean.count)}\` (made in ${where(mean.count)}) is summed over the data-parallel ranks but not over the window's other micro-batches. ${engine ? windowText(engine) : "The engine divides every micro-batch's loss by the accumulation steps"}, so the micro-batches weigh the same whatever their token counts, and a token in a micro-batch with few tokens weighs more than one in a micro-batch with many. Sum the token counts of all \`${k}\` micro-batches (and the ranks) before dividing.`;
  const link = (v: Value, m: string): RelatedLocation => ({
    range: v.frame.at.model.syntax.source.range(v.node),
    message: m,
    ...(v.frame.at.path === path ? {} : { file: v.frame.at.path }),
  });
  return {
    code: 'CP003',
    severity: engine ? 'error' : 'warning',
    range: model.syntax.source.range(call),
    message,
    related: [
      link(mean.mask, 'the per-micro-batch token count is made from this mask'),
      link(mean.count, "the count: this micro-batch's tokens"),
      link(mean.rankSum, 'the count is summed over the data-parallel ranks: one token mean is intended'),
      link(mean.mean, 'the loss is divided by the count of this micro-batch alone'),
      link({ node: modulo, frame: root }, `the loop counts \`${k}\` micro-batches per optimizer step`),
      ...(engine
        ? [
            link(engine.handOff, 'the strategy hands the loss to the engine, which divides it by its window'),
            link(engine.engine, "the engine is built from this config, whose window is read from the config's entries"),
          ]
        : []),
    ],
    fixes: [],
  };
}

function clip(t: string): string {
  const one = t.replace(/\s+/g, ' ');
  return one.length > 60 ? `${one.slice(0, 57)}...` : one;
}

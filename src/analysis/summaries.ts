// What a function does to the scale of the gradients it is given, as seen from another file. A helper such as
// `reduce_gradients(model)` that sums its argument's gradients over the data-parallel group and never divides is
// summarised once, in its own file; a call to it elsewhere then acts as that reduction, judged with the caller's
// divisions, loss scaling and update. Only top-level functions are summarised: a method needs its object.
import { child, hasSplat, unparen, type PyNode } from './tree';
import type { FileModel } from './scope';
import type { Fact } from './facts';
import type { Verdict } from './judge-verdict';
import type { Reduction } from './reductions';
import type { SourceRange } from './types';
import type { HelperSummary } from './helper-summary';

// The summary's shape lives in helper-summary.ts, below reductions.ts, which carries it on a reduction.
export type { HelperSummary } from './helper-summary';

/** The summary of a top-level function whose caller-less verdict is a plain sum of one parameter's gradients. */
export function summarise(
  path: string,
  model: FileModel,
  fact: Fact,
  verdict: Verdict,
  range: SourceRange,
): HelperSummary | undefined {
  if (verdict.code !== 'CP001' || verdict.exponent !== 1 || fact.frames.length !== 1) return undefined;
  const frame = fact.frames[0];
  const fn = frame.fn;
  if (
    fn.node.type !== 'function_definition' ||
    fn.className ||
    fn.enclosing?.node.type !== 'module' ||
    frame.key === undefined
  )
    return undefined;
  const params = model.callableParams(fn);
  const members = frame.flow.members(frame.key.replace(/\.grad$/, ''));
  for (const p of params) {
    const shape = members.includes(`#${p.name}.parameters()`)
      ? 'parameters'
      : members.includes(p.name)
        ? 'tensors'
        : undefined;
    if (!shape) continue;
    const defaultsThatSum = [verdict.opBinding, verdict.defeated?.binding]
      .filter((b) => b?.isDefault)
      .map((b) => b!.param);
    return {
      path,
      name: fn.name,
      param: p.name,
      index: p.index,
      shape,
      defaultsThatSum,
      range,
      reducer: model.syntax.calleeText(fact.reduction.call),
    };
  }
  return undefined;
}

/** The reduction a call performs through a summarised helper, or undefined when the caller changes its defaults. */
export function helperReduction(model: FileModel, call: PyNode, summary: HelperSummary): Reduction | undefined {
  const args = model.syntax.args(call);
  const argList = child(call, 'arguments');
  if (hasSplat(argList)) return undefined;
  // A caller that sets the parameter choosing the operation (by name, or by a position past the gradients) may
  // average; only the summing default is known.
  if (summary.defaultsThatSum.some((name) => args.keywords.has(name))) return undefined;
  if (summary.defaultsThatSum.length > 0 && args.positional.length > summary.index + 1) return undefined;
  const tensor = args.keywords.get(summary.param)?.value ?? args.positional[summary.index];
  if (!tensor) return undefined;
  return { call, framework: 'torch', op: { kind: 'sum' }, tensor: unparen(tensor), asyncOp: false, via: summary };
}

/** The top-level function a call names through this file's imports: `[module, name]`, for the program to resolve. */
export function importedCallee(model: FileModel, call: PyNode): { module: string; name: string } | undefined {
  const s = model.syntax;
  const fnNode = child(call, 'function');
  if (!fnNode) return undefined;
  if (fnNode.type === 'identifier') {
    const target = model.moduleOf(s.text(fnNode));
    if (!target || !target.includes('.') || model.byName.has(s.text(fnNode))) return undefined;
    const cut = target.lastIndexOf('.');
    return { module: target.slice(0, cut), name: target.slice(cut + 1) };
  }
  if (fnNode.type === 'attribute') {
    const obj = child(fnNode, 'object');
    const attr = child(fnNode, 'attribute');
    if (!obj || !attr || obj.type !== 'identifier') return undefined;
    const module = model.moduleOf(s.text(obj));
    return module ? { module, name: s.text(attr) } : undefined;
  }
  return undefined;
}

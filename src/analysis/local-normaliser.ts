// What two kinds of helpers do, as seen from another file, for the rule of the loss normalised on each rank and
// summed across ranks (local-normaliser-rule.ts). Both are read from one file's syntax in its first pass:
//
// - a rescaling reduction, `all_reduce_and_rescale_tensors(tensors, rescale_denom)`: a top-level function that sums
//   with `all_reduce` over the default group and divides by one of its parameters, nothing else; the caller's
//   argument for that parameter then decides the scale.
// - a loss normaliser, `sharded_compute_loss(..., normalization)`: a function or method whose backward pass runs on
//   a loss divided by one of its parameters; the caller's argument is then the loss's normaliser.
import { ancestors, child, statementOf, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { SourceRange } from './types';

export interface RescaleHelperSummary {
  readonly path: string;
  readonly name: string;
  /** The parameter holding the tensors summed, and the one they are divided by, with their positions. */
  readonly tensorsParam: string;
  readonly tensorsIndex: number;
  readonly denomParam: string;
  readonly denomIndex: number;
  /** Where the helper sums, in its own file. */
  readonly range: SourceRange;
  readonly reducer: string;
}

export interface LossNormaliserSummary {
  readonly path: string;
  /** The function's or method's name; methods are matched by name at `obj.name(...)` calls. */
  readonly name: string;
  readonly isMethod: boolean;
  /** The parameter the loss is divided by before backward, and its position as a caller passes it. */
  readonly param: string;
  readonly index: number;
  /** The backward call, in its own file. */
  readonly range: SourceRange;
}

export interface FileNormalisers {
  readonly rescale: readonly RescaleHelperSummary[];
  readonly losses: readonly LossNormaliserSummary[];
}

export const NO_NORMALISERS: FileNormalisers = { rescale: [], losses: [] };

/** Calls whose arguments cross ranks: a count given to one of them is no longer this rank's own. */
export const COLLECTIVE = /all_?reduce|all_?gather|allgather|reduce_scatter|broadcast|psum|pmean|^reduce$|^gather$/i;

export function normaliserSummaries(
  path: string,
  model: FileModel,
  range: (n: PyNode) => SourceRange,
): FileNormalisers {
  const rescale: RescaleHelperSummary[] = [];
  const losses: LossNormaliserSummary[] = [];
  // Most files neither sum nor run a backward pass: their functions are not read.
  const text = model.syntax.source.text;
  const sums = text.includes('all_reduce');
  const backwards = text.includes('backward');
  if (!sums && !backwards) return { rescale, losses };
  for (const fn of model.functions) {
    if (fn.node.type !== 'function_definition') continue;
    const helper = sums ? rescaleHelper(path, model, fn, range) : undefined;
    if (helper) rescale.push(helper);
    const loss = backwards ? lossNormaliser(path, model, fn, range) : undefined;
    if (loss) losses.push(loss);
  }
  return { rescale, losses };
}

/** The function and the functions nested in it (`all_reduce_buffer` inside the helper). */
function withNested(model: FileModel, fn: FunctionInfo): FunctionInfo[] {
  return model.functions.filter((f) => {
    for (let g: FunctionInfo | undefined = f; g; g = g.enclosing) if (g === fn) return true;
    return false;
  });
}

function rescaleHelper(
  path: string,
  model: FileModel,
  fn: FunctionInfo,
  range: (n: PyNode) => SourceRange,
): RescaleHelperSummary | undefined {
  const s = model.syntax;
  if (fn.className || fn.enclosing?.node.type !== 'module') return undefined;
  const fns = withNested(model, fn);
  const calls = fns.flatMap((f) => f.calls);
  const sums = calls.filter((c) => isDefaultGroupSum(model, c));
  if (sums.length === 0) return undefined;
  // Any other collective (a second reduction over a named group, a broadcast) makes the scale another question.
  // Calls of the helper's own nested functions (`all_reduce_buffer()`) are not collectives.
  const own = new Set(fns.map((f) => f.name));
  const isOwn = (c: PyNode) => child(c, 'function')?.type === 'identifier' && own.has(s.calleeName(c));
  if (calls.some((c) => COLLECTIVE.test(s.calleeName(c)) && !sums.includes(c) && !isOwn(c))) return undefined;
  const divisors = new Set<string>();
  for (const c of calls) {
    const name = s.calleeName(c);
    if (/^(mul_?|multiply_?)$/.test(name)) return undefined;
    if (!/^(div_?|divide_?|true_divide_?)$/.test(name) || !s.calleeObject(c)) continue;
    const arg = s.args(c).positional[0];
    if (!arg) return undefined;
    divisors.add(s.text(s.stripWrappers(arg)));
  }
  for (const f of fns)
    for (const a of f.assignments) {
      if (a.type !== 'augmented_assignment') continue;
      const op = s.operator(a);
      if (op === '*=') return undefined;
      if (op === '/=') divisors.add(s.text(s.stripWrappers(child(a, 'right') ?? a)));
    }
  if (divisors.size !== 1) return undefined;
  const denom = [...divisors][0];
  const params = model.callableParams(fn);
  const denomParam = params.find((p) => p.name === denom);
  // The tensors are the first other parameter, and what every sum reduces comes from it (`for t in tensors`).
  const tensorsParam = params.find((p) => p !== denomParam);
  if (!denomParam || !tensorsParam || fns.some((f) => reassigns(model, f, denom))) return undefined;
  return {
    path,
    name: fn.name,
    tensorsParam: tensorsParam.name,
    tensorsIndex: tensorsParam.index,
    denomParam: denomParam.name,
    denomIndex: denomParam.index,
    range: range(sums[0]),
    reducer: s.calleeText(sums[0]),
  };
}

/** `torch.distributed.all_reduce(t)` or `dist.all_reduce(t)`: no operation but SUM, no group. */
function isDefaultGroupSum(model: FileModel, call: PyNode): boolean {
  const s = model.syntax;
  if (s.calleeName(call) !== 'all_reduce') return false;
  const obj = s.calleeObject(call);
  const objText = obj ? s.text(obj).replace(/\s+/g, '') : '';
  if (objText !== 'torch.distributed' && model.moduleOf(objText) !== 'torch.distributed') return false;
  const args = s.args(call);
  if (args.positional.length !== 1 || args.keywords.has('group')) return false;
  if ([...args.keywords.keys()].some((k) => k !== 'op' && k !== 'async_op')) return false;
  const op = args.keywords.get('op')?.value;
  return !op || /\bSUM\b/.test(s.text(op));
}

function reassigns(model: FileModel, fn: FunctionInfo, name: string): boolean {
  return fn.assignments.some((a) => {
    const left = child(a, 'left');
    return !!left && unparen(left).type === 'identifier' && model.syntax.text(left) === name;
  });
}

function lossNormaliser(
  path: string,
  model: FileModel,
  fn: FunctionInfo,
  range: (n: PyNode) => SourceRange,
): LossNormaliserSummary | undefined {
  const s = model.syntax;
  const backwards = fn.calls.filter((c) => /^backward$/.test(s.calleeName(c)));
  if (backwards.length !== 1) return undefined;
  const site = backwards[0];
  const loss = s.calleeObject(site);
  if (!loss || s.args(site).positional.length > 0) return undefined;
  const divisor = divisorOf(model, fn, unparen(loss), site.start);
  if (divisor?.type !== 'identifier') return undefined;
  const params = model.callableParams(fn);
  const param = params.find((p) => p.name === s.text(divisor));
  if (!param || reassigns(model, fn, param.name)) return undefined;
  return {
    path,
    name: fn.name,
    isMethod: !!fn.className && params !== fn.params,
    param: param.name,
    index: param.index - (fn.params.length - params.length),
    range: range(site),
  };
}

/**
 * The single divisor of a loss before backward: `loss.div(n)`, `(loss / n)`, or a name assigned one of them just
 * before. Wrappers that keep the value (`float(n)`) are seen through; anything else is no divisor.
 */
export function divisorOf(model: FileModel, fn: FunctionInfo, loss: PyNode, before: number): PyNode | undefined {
  const s = model.syntax;
  let expr = loss;
  if (expr.type === 'identifier') {
    const name = s.text(expr);
    const values = fn.assignments.filter((a) => {
      const left = child(a, 'left');
      return a.start < before && !!left && unparen(left).type === 'identifier' && s.text(left) === name;
    });
    // The last assignment before the backward, written in a block that holds the backward too, sets the loss.
    const last = values[values.length - 1];
    const site = fn.calls.find((c) => c.start === before);
    if (!last || last.type !== 'assignment' || !site || !ancestors(site).includes(blockOf(last))) return undefined;
    expr = unparen(child(last, 'right') ?? expr);
  }
  let divisor: PyNode | undefined;
  if (expr.type === 'call' && /^(div|divide|true_divide)$/.test(s.calleeName(expr)) && s.calleeObject(expr)) {
    const args = s.args(expr).positional;
    if (args.length === 1) divisor = args[0];
  } else if (expr.type === 'binary_operator') {
    const factors = s.factors(expr);
    const divided = factors.filter((f) => f.sign === -1);
    if (divided.length === 1 && factors.length === 2) divisor = divided[0].node;
  }
  if (!divisor) return undefined;
  return s.stripWrappers(divisor);
}

/** The block (or module) whose statement holds the node. */
function blockOf(node: PyNode): PyNode {
  return statementOf(node).parent ?? node;
}

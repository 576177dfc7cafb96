// CP002 for gradients divided once per parameter and again by the bucket all-reduce that averages them (DeepSpeed
// ZeRO 1/2 before #4957: with MoE parameters in the bucket, each gradient was divided by its group's size in the
// loop over the bucket's parameters, and the bucket's slices were then reduced with `divide=` the same flag, so the
// helper divided them by the group's size again before its SUM all-reduce). The rule speaks only when all of this
// is in view:
// - a call to a bucket-averaging helper (bucket-averaging.ts) whose divide flag is true on the path: a literal, its
//   default, or a flag expression that some assignment can make true;
// - the bucket it is given holds slices of a parameter `T` of the calling method: a list, or a dict of lists (the
//   buckets keyed by group) read back by key, filled with views of `T` (`T.narrow(...)`, `T[a:b]`);
// - in the same method, a loop over an attribute list (`for ..., param, ... in self.params_in_bucket`) divides each
//   parameter's own gradient (`param.grad`, or a method that returns it) by a group's size, with the helper's other
//   factors (`/ float(self.sequence_parallel_size)`);
// - `T` is the buffer those gradients live in: a call site passes `self.BUF[...]`, and a method of the class points
//   the gradient of each parameter it appends to that attribute list at a slice of `self.BUF` (`grad.data = ...`);
// - the guards of all these places can hold together: no condition is needed both true and false (path-sensitive
//   only as far as the same condition, written the same way, on the same object).
// The helper's average then leaves each such gradient divided once more by its group's size: the learning rate is
// 1/N of the configured one for those parameters.
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import { guardsOf } from './conditions';
import {
  argumentFor,
  bucketAveragingHelpers,
  compact,
  divideArgument,
  divisionsOf,
  enclosingFor,
  worldSizeGroup,
  type BucketAveragingHelper,
} from './bucket-averaging';
import { clip } from './messages';

export interface BucketDoubleDivideVerdict {
  readonly node: PyNode;
  readonly message: string;
  readonly related: readonly { readonly node: PyNode; readonly message: string }[];
}

/** A condition as written (without `not`) and the value a place needs. */
interface Constraint {
  readonly text: string;
  readonly value: boolean;
}

const VIEW_METHODS = new Set(['narrow', 'view', 'view_as', 'reshape', 'flatten', 'data', 'split', 'chunk']);

export function bucketDoubleDivideVerdicts(model: FileModel): BucketDoubleDivideVerdict[] {
  const helpers = bucketAveragingHelpers(model);
  if (helpers.size === 0) return [];
  const out: BucketDoubleDivideVerdict[] = [];
  for (const fn of model.functions) {
    if (!fn.className || fn.node.type !== 'function_definition') continue;
    for (const call of fn.calls) {
      const callee = model.resolveCall(call);
      const helper = callee && callee !== fn ? helpers.get(callee) : undefined;
      if (helper) {
        const v = judgeCall(model, fn, call, helper);
        if (v) out.push(v);
      }
    }
  }
  return out;
}

function judgeCall(
  model: FileModel,
  fn: FunctionInfo,
  call: PyNode,
  helper: BucketAveragingHelper,
): BucketDoubleDivideVerdict | undefined {
  const flag = divideArgument(model, helper, call);
  if (flag === undefined || flag === false) return undefined;
  const constraints: Constraint[] = guardsOf(call, fn).map(constraintOf(model));
  if (flag !== true) {
    const c = constraintOf(model)({ test: flag, expect: true });
    // A parameter of this function is decided by its callers, where a forwarding helper is judged.
    if (fn.params.some((p) => p.name === c.text) || !canBe(model, c)) return undefined;
    constraints.push(c);
  }
  const bucketArg = argumentFor(model, helper.fn, call, helper.bucketParam);
  const buffer = bucketArg && slicedParam(model, fn, bucketArg);
  if (!buffer) return undefined;
  for (const division of perParameterDivisions(model, fn, helper)) {
    const here = [...constraints, ...guardsOf(division.node, fn).map(constraintOf(model))];
    if (!consistent(here) || rescales(model, fn, buffer, division.gradient)) continue;
    const alias = aliasedBuffer(model, fn, buffer, division.list, here);
    if (!alias) continue;
    return verdict(model, call, helper, flag, division, alias, buffer);
  }
  return undefined;
}

/**
 * A multiplication of the buffer (or a view of it) or of the gradients in the method may undo a division (a
 * pre-divide scaled back after the reduction): the factor is then not proven.
 */
function rescales(model: FileModel, fn: FunctionInfo, buffer: string, gradient: string): boolean {
  const s = model.syntax;
  const scaled = (target: PyNode) => {
    const base = viewBase(model, fn, target, 0);
    return base === buffer || base === gradient || compact(s.text(target)).split('.')[0] === gradient;
  };
  for (const call of fn.calls) {
    const object = s.calleeObject(call);
    if (['mul_', 'mul', 'multiply'].includes(s.calleeName(call)) && object && scaled(object)) return true;
  }
  for (const a of fn.assignments) {
    const left = child(a, 'left');
    if (a.type === 'augmented_assignment' && left && s.operator(a) === '*=' && scaled(left)) return true;
  }
  return false;
}

interface PerParameterDivision {
  readonly node: PyNode;
  readonly divisor: PyNode;
  /** The gradient's name in the loop (`grad_reduc`). */
  readonly gradient: string;
  /** The attribute list the loop runs over (`self.params_in_ipg_bucket`). */
  readonly list: string;
}

/** Divisions of each parameter's gradient, inside a loop over an attribute list, by a group's size. */
function perParameterDivisions(
  model: FileModel,
  fn: FunctionInfo,
  helper: BucketAveragingHelper,
): PerParameterDivision[] {
  const s = model.syntax;
  const out: PerParameterDivision[] = [];
  const otherFactors = (divisor: PyNode) =>
    s
      .factors(divisor)
      .filter((f) => worldSizeGroup(model, f.node) === undefined)
      .map((f) => `${f.sign}:${compact(s.text(s.stripWrappers(f.node)))}`)
      .sort()
      .join(',');
  const helperOthers = otherFactors(helper.base.divisor);
  for (const gradient of gradientLocals(model, fn)) {
    for (const division of divisionsOf(model, fn, gradient.name)) {
      const loop = enclosingFor(division.node, fn);
      if (!loop || !loopsOver(model, loop, gradient.param)) continue;
      const iterable = child(loop, 'right');
      const list = iterable ? compact(s.text(iterable)) : '';
      if (!/^self\.\w+$/.test(list)) continue;
      const byGroupSize = s
        .factors(division.divisor)
        .some((f) => f.sign === 1 && worldSizeGroup(model, f.node) !== undefined);
      if (!byGroupSize || otherFactors(division.divisor) !== helperOthers) continue;
      out.push({ node: division.node, divisor: division.divisor, gradient: gradient.name, list });
    }
  }
  return out.sort((a, b) => a.node.start - b.node.start);
}

/** Locals holding a parameter's own gradient: `g = p.grad`, `g = self.grad_of(p)` where `grad_of` returns `p.grad`. */
function gradientLocals(model: FileModel, fn: FunctionInfo): { name: string; param: string }[] {
  const out: { name: string; param: string }[] = [];
  for (const a of fn.assignments) {
    const left = child(a, 'left');
    const right = child(a, 'right');
    if (a.type !== 'assignment' || left?.type !== 'identifier' || !right) continue;
    const param = gradientOf(model, right);
    if (param) out.push({ name: model.syntax.text(left), param });
  }
  return out;
}

/** `p` when the expression is `p.grad` (or `.data` of it), or a method call that returns its argument's `.grad`. */
function gradientOf(model: FileModel, expr: PyNode): string | undefined {
  const s = model.syntax;
  const n = unparen(expr);
  const direct = /^(\w+)\.grad(\.data)?$/.exec(compact(s.text(n)));
  if (direct) return direct[1];
  if (n.type !== 'call') return undefined;
  const callee = model.resolveCall(n);
  const first = s.args(n).positional[0];
  if (!callee || !first || unparen(first).type !== 'identifier') return undefined;
  const params = model.callableParams(callee);
  if (params.length < 1) return undefined;
  return returnsGradientOf(model, callee, params[0].name) ? s.text(unparen(first)) : undefined;
}

/** Some `return` of the function gives `param.grad` (a branch of a conditional expression counts). */
function returnsGradientOf(model: FileModel, fn: FunctionInfo, param: string): boolean {
  const s = model.syntax;
  return fn.nodes.some((n) => {
    if (n.type !== 'return_statement') return false;
    const value = named(n)[0];
    if (!value) return false;
    const v = unparen(value);
    const options = v.type === 'conditional_expression' ? named(v) : [v];
    return options.some((o) => new RegExp(`^${param}\\.grad(\\.data)?$`).test(compact(s.text(o))));
  });
}

function loopsOver(model: FileModel, loop: PyNode, name: string): boolean {
  const left = child(loop, 'left');
  return !!left && new RegExp(`(^|[^\\w.])${name}([^\\w]|$)`).test(model.syntax.text(left));
}

/**
 * The parameter of `fn` whose slices the bucket holds: `buckets[key]` of a dict of lists, or a list, whose appended
 * items (or the tensors in appended tuples) are all views of that one parameter.
 */
function slicedParam(model: FileModel, fn: FunctionInfo, bucket: PyNode): string | undefined {
  const s = model.syntax;
  const b = unparen(bucket);
  const container = b.type === 'subscript' ? child(b, 'value') : b;
  if (container?.type !== 'identifier') return undefined;
  const name = s.text(container);
  const keyed = b.type === 'subscript';
  let param: string | undefined;
  for (const call of fn.calls) {
    if (s.calleeName(call) !== 'append') continue;
    const object = s.calleeObject(call);
    if (!object || !fillsContainer(model, object, name, keyed)) continue;
    const item = s.args(call).positional[0];
    const items = item && unparen(item).type === 'tuple' ? named(unparen(item)) : item ? [item] : [];
    for (const it of items) {
      const base = viewBase(model, fn, it, 0);
      if (!base || !fn.params.some((p) => p.name === base)) continue;
      if (param && param !== base) return undefined;
      param = base;
    }
  }
  return param;
}

/** `buckets[k].append`, `buckets.setdefault(k, []).append` for a dict; `bucket.append` for a list. */
function fillsContainer(model: FileModel, object: PyNode, name: string, keyed: boolean): boolean {
  const s = model.syntax;
  const o = unparen(object);
  if (!keyed) return o.type === 'identifier' && s.text(o) === name;
  if (o.type === 'subscript') return compact(s.text(child(o, 'value') ?? o)) === name;
  return o.type === 'call' && s.calleeName(o) === 'setdefault' && compact(s.text(s.calleeObject(o) ?? o)) === name;
}

/** The name (a local's source followed through views) or `self.attr` an expression is a view of. */
function viewBase(model: FileModel, fn: FunctionInfo, expr: PyNode, depth: number): string | undefined {
  const s = model.syntax;
  const n = unparen(expr);
  if (depth > 6) return undefined;
  if (n.type === 'identifier') {
    const name = s.text(n);
    if (fn.params.some((p) => p.name === name)) return name;
    const values = fn.assignments.filter(
      (a) => a.type === 'assignment' && child(a, 'left')?.type === 'identifier' && s.text(child(a, 'left')!) === name,
    );
    if (values.length !== 1) return undefined;
    return viewBase(model, fn, child(values[0], 'right')!, depth + 1);
  }
  if (n.type === 'subscript') return viewBase(model, fn, child(n, 'value')!, depth + 1);
  if (n.type === 'attribute') {
    const text = compact(s.text(n));
    if (/^self\.\w+$/.test(text)) return text;
    const attr = child(n, 'attribute');
    return attr && s.text(attr) === 'data' ? viewBase(model, fn, child(n, 'object')!, depth + 1) : undefined;
  }
  if (n.type === 'call' && VIEW_METHODS.has(s.calleeName(n))) {
    const object = s.calleeObject(n);
    return object ? viewBase(model, fn, object, depth + 1) : undefined;
  }
  return undefined;
}

interface Alias {
  /** The call that passes the buffer to the averaging method. */
  readonly site: PyNode;
  /** `grad.data = <slice of the buffer>`. */
  readonly assignment: PyNode;
  readonly buffer: string;
}

/**
 * A call of `fn` passes `self.BUF[...]` for `param`, and a method of the class points the gradient of each parameter
 * it appends to `list` at a slice of `self.BUF`; the guards of both places agree with `constraints` on the object's
 * own flags.
 */
function aliasedBuffer(
  model: FileModel,
  fn: FunctionInfo,
  param: string,
  list: string,
  constraints: Constraint[],
): Alias | undefined {
  const s = model.syntax;
  const own = (cs: Constraint[]) => cs.filter((c) => /^self\./.test(c.text));
  for (const site of model.callSites.get(fn.name) ?? []) {
    if (model.resolveCall(site.call) !== fn) continue;
    const arg = argumentFor(model, fn, site.call, param);
    const buffer = arg && viewBase(model, site.caller, arg, 0);
    if (!buffer || !/^self\./.test(buffer)) continue;
    const siteConstraints = [...own(constraints), ...own(guardsOf(site.call, site.caller).map(constraintOf(model)))];
    if (!consistent(siteConstraints)) continue;
    for (const method of model.functions) {
      if (method.className !== fn.className) continue;
      for (const a of method.assignments) {
        const left = child(a, 'left');
        const right = child(a, 'right');
        if (a.type !== 'assignment' || left?.type !== 'attribute' || !right) continue;
        if (s.text(child(left, 'attribute')!) !== 'data') continue;
        if (viewBase(model, method, right, 0) !== buffer) continue;
        const gradient = gradientBehind(model, method, child(left, 'object')!);
        if (!gradient || !appendsTo(model, method, list, gradient)) continue;
        const all = [...siteConstraints, ...own(guardsOf(a, method).map(constraintOf(model)))];
        if (consistent(all)) return { site: site.call, assignment: a, buffer };
      }
    }
  }
  return undefined;
}

/** The parameter whose gradient an expression is: `p.grad`, or a local assigned from it. */
function gradientBehind(model: FileModel, fn: FunctionInfo, expr: PyNode): string | undefined {
  const n = unparen(expr);
  const direct = gradientOf(model, n);
  if (direct) return direct;
  if (n.type !== 'identifier') return undefined;
  const name = model.syntax.text(n);
  return gradientLocals(model, fn).find((g) => g.name === name)?.param;
}

function appendsTo(model: FileModel, fn: FunctionInfo, list: string, name: string): boolean {
  const s = model.syntax;
  return fn.calls.some((call) => {
    const object = s.calleeObject(call);
    const item = s.args(call).positional[0];
    return (
      s.calleeName(call) === 'append' &&
      !!object &&
      compact(s.text(object)) === list &&
      !!item &&
      new RegExp(`(^|[^\\w.])${name}([^\\w]|$)`).test(s.text(item))
    );
  });
}

function constraintOf(model: FileModel): (g: { test: PyNode; expect: boolean }) => Constraint {
  return (g) => {
    let n = unparen(g.test);
    let value = g.expect;
    while (n.type === 'not_operator' && child(n, 'argument')) {
      n = unparen(child(n, 'argument')!);
      value = !value;
    }
    return { text: compact(model.syntax.text(n)), value };
  };
}

function consistent(constraints: Constraint[]): boolean {
  const seen = new Map<string, boolean>();
  for (const c of constraints) {
    if (seen.has(c.text) && seen.get(c.text) !== c.value) return false;
    seen.set(c.text, c.value);
  }
  return true;
}

/** A `self.flag` that every assignment sets to the other literal can never take the value needed. */
function canBe(model: FileModel, c: Constraint): boolean {
  if (!/^self\.\w+$/.test(c.text)) return true;
  const values = model.assignedValues.get(c.text) ?? [];
  if (values.length === 0) return true;
  return values.some(({ value }) => {
    const v = unparen(value);
    if (v.type === 'true') return c.value;
    if (v.type === 'false') return !c.value;
    return true;
  });
}

function verdict(
  model: FileModel,
  call: PyNode,
  helper: BucketAveragingHelper,
  flag: PyNode | true,
  division: PerParameterDivision,
  alias: Alias,
  param: string,
): BucketDoubleDivideVerdict {
  const s = model.syntax;
  const source = s.source;
  const line = (n: PyNode) => source.lineOf(n) + 1;
  const callee = clip(s.calleeText(call), 40);
  const divisor = clip(s.text(division.divisor), 80);
  const groupArg = helper.groupParam ? argumentFor(model, helper.fn, call, helper.groupParam) : undefined;
  const group = groupArg ? `\`${clip(s.text(groupArg), 40)}\`` : 'its group';
  const when = flag === true ? '' : ` when \`${clip(s.text(flag), 60)}\` is true`;
  const flagNode = helper.divideParam ? model.syntax.args(call).keywords.get(helper.divideParam)?.node : undefined;
  const message =
    `\`${callee}\` averages the bucket's gradients over ${group}${when}: \`${helper.base.divide.type === 'call' ? s.calleeText(helper.base.divide).replace(/^.*\./, '') : '/='}\` by \`${clip(s.text(helper.base.divisor), 80)}\` (line ${line(helper.base.divide)}) before its SUM \`${clip(s.calleeText(helper.base.reduce), 30)}\` (line ${line(helper.base.reduce)}). ` +
    `On the same path each parameter's gradient \`${division.gradient}\` (of \`${division.list}\`) was already divided by \`${divisor}\` (line ${line(division.node)}), and the bucket holds slices of \`${param}\`, ` +
    `which is \`${alias.buffer}\` (line ${line(alias.site)}), the buffer those gradients are slices of (line ${line(alias.assignment)}): they are averaged twice, and the effective learning rate of these parameters is 1/N× the configured one (N = \`${divisor}\`, the group's size).`;
  return {
    node: flagNode ?? call,
    message,
    related: [
      { node: division.node, message: `each parameter's gradient is divided by \`${divisor}\` here` },
      {
        node: helper.base.divide,
        message: `the bucket is divided again by \`${clip(s.text(helper.base.divisor), 80)}\``,
      },
      { node: helper.base.reduce, message: `and summed over the group here` },
      { node: alias.assignment, message: `the gradient is made a slice of \`${alias.buffer}\` here` },
      { node: alias.site, message: `\`${alias.buffer}\` is passed as \`${param}\`, whose slices are bucketed` },
    ],
  };
}

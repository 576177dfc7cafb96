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
import { child, unparen, type PyNode } from './tree';
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
import {
  aliasedBuffer,
  consistent,
  constraintOf,
  gradientLocals,
  loopsOver,
  slicedParam,
  viewBase,
  type Alias,
  type Constraint,
} from './bucket-buffers';

export interface BucketDoubleDivideVerdict {
  readonly node: PyNode;
  readonly message: string;
  readonly related: readonly { readonly node: PyNode; readonly message: string }[];
}

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

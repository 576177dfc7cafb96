// Functions that average a bucket of tensors over a process group: they flatten the bucket, divide it by the
// group's size and SUM-reduce it over that group (DeepSpeed's `allreduce_bucket(bucket, divide=True,
// process_group=...)`), maybe only when a flag parameter (`divide`) is true, and the functions that pass a bucket
// and that flag on to them (`allreduce_no_retain` → `allreduce_and_copy` → `allreduce_bucket`). The double-division
// rule (bucket-double-divide.ts) uses them to know that a call averages what it is given, and under which flag.
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo, Param } from './scope';
import { guardsOf } from './conditions';

/** The division and the reduction that make a bucket helper an average. */
export interface BucketAverage {
  /** The `div_` call or `/=` statement. */
  readonly divide: PyNode;
  /** The whole divisor: `dist.get_world_size(group=process_group) / float(self.sequence_parallel_size)`. */
  readonly divisor: PyNode;
  /** The SUM `all_reduce` (or `reduce`) over the same group. */
  readonly reduce: PyNode;
}

export interface BucketAveragingHelper {
  readonly fn: FunctionInfo;
  /** The parameter that receives the bucket (a tensor or a list of tensors). */
  readonly bucketParam: string;
  /** The flag parameter the division depends on; absent when the helper always divides. */
  readonly divideParam?: string;
  /** The group parameter, when the reduction's group is one (for messages). */
  readonly groupParam?: string;
  readonly base: BucketAverage;
}

const REDUCERS = new Set(['all_reduce', 'reduce']);
/** Calls whose result holds the same values as their tensor argument or object (a flat copy, a cast, a view). */
const SAME_VALUES = new Set([
  'flatten',
  '_flatten_dense_tensors',
  'flatten_dense_tensors',
  'cat',
  'to',
  'float',
  'half',
  'bfloat16',
  'contiguous',
  'view',
]);
const MAX_ROUNDS = 5;

/** The bucket-averaging helpers of one file, with the functions that forward to them. */
export function bucketAveragingHelpers(model: FileModel): Map<FunctionInfo, BucketAveragingHelper> {
  const out = new Map<FunctionInfo, BucketAveragingHelper>();
  for (const fn of model.functions) {
    if (fn.node.type !== 'function_definition') continue;
    const helper = baseHelper(model, fn);
    if (helper) out.set(fn, helper);
  }
  if (out.size === 0) return out;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    let grew = false;
    for (const fn of model.functions) {
      if (fn.node.type !== 'function_definition' || out.has(fn)) continue;
      const helper = forwardingHelper(model, fn, out);
      if (helper) {
        out.set(fn, helper);
        grew = true;
      }
    }
    if (!grew) break;
  }
  return out;
}

/** A function that divides a tensor made from one parameter by a group's size, then SUM-reduces it over that group. */
function baseHelper(model: FileModel, fn: FunctionInfo): BucketAveragingHelper | undefined {
  const s = model.syntax;
  const paramNames = fn.params.map((p) => p.name);
  for (const call of fn.calls) {
    if (!REDUCERS.has(s.calleeName(call)) || !isDistCall(model, call)) continue;
    const args = s.args(call);
    const op = args.keywords.get('op')?.value;
    if (op && !/SUM/.test(s.text(op))) continue;
    const tensor = args.positional[0] && unparen(args.positional[0]);
    if (tensor?.type !== 'identifier') continue;
    const name = s.text(tensor);
    const bucketParam = derivedParam(model, fn, name, 0);
    if (!bucketParam) continue;
    const groupNode = args.keywords.get('group')?.value;
    const group = groupNode ? compact(s.text(groupNode)) : '';
    const reduceGuards = new Set(guardsOf(call, fn).map((g) => g.test));
    for (const division of divisionsOf(model, fn, name)) {
      if (division.node.start > call.start) continue;
      if (!dividesByGroupSize(model, division.divisor, group)) continue;
      const extra = guardsOf(division.node, fn).filter((g) => !reduceGuards.has(g.test));
      if (extra.length > 1) continue;
      let divideParam: string | undefined;
      if (extra.length === 1) {
        const test = unparen(extra[0].test);
        if (!extra[0].expect || test.type !== 'identifier' || !paramNames.includes(s.text(test))) continue;
        divideParam = s.text(test);
      }
      const groupParam = paramNames.includes(group) ? group : undefined;
      return {
        fn,
        bucketParam,
        divideParam,
        groupParam,
        base: { divide: division.node, divisor: division.divisor, reduce: call },
      };
    }
  }
  return undefined;
}

/** A function that hands one of its parameters (or a list of its items) and its own flag to a helper. */
function forwardingHelper(
  model: FileModel,
  fn: FunctionInfo,
  helpers: Map<FunctionInfo, BucketAveragingHelper>,
): BucketAveragingHelper | undefined {
  const s = model.syntax;
  const paramNames = fn.params.map((p) => p.name);
  for (const call of fn.calls) {
    const callee = model.resolveCall(call);
    const helper = callee && callee !== fn ? helpers.get(callee) : undefined;
    if (!helper) continue;
    const bucketArg = argumentFor(model, helper.fn, call, helper.bucketParam);
    const bucket = bucketArg && unparen(bucketArg);
    if (bucket?.type !== 'identifier') continue;
    const bucketParam = paramNames.includes(s.text(bucket))
      ? s.text(bucket)
      : collectedFromParam(model, fn, s.text(bucket));
    if (!bucketParam) continue;
    let divideParam: string | undefined;
    if (helper.divideParam) {
      const flag = divideArgument(model, helper, call);
      if (flag === undefined || flag === false) continue;
      if (flag !== true) {
        const v = unparen(flag);
        if (v.type !== 'identifier' || !paramNames.includes(s.text(v))) continue;
        divideParam = s.text(v);
      }
    }
    const groupArg = helper.groupParam ? argumentFor(model, helper.fn, call, helper.groupParam) : undefined;
    const groupParam =
      groupArg && unparen(groupArg).type === 'identifier' && paramNames.includes(s.text(unparen(groupArg)))
        ? s.text(unparen(groupArg))
        : undefined;
    return { fn, bucketParam, divideParam, groupParam, base: helper.base };
  }
  return undefined;
}

/**
 * What a call gives the helper's divide flag: true or false for a literal (or the default, when none is given), the
 * expression otherwise; undefined when the default is not a literal.
 */
export function divideArgument(
  model: FileModel,
  helper: BucketAveragingHelper,
  call: PyNode,
): PyNode | boolean | undefined {
  if (!helper.divideParam) return true;
  const given = argumentFor(model, helper.fn, call, helper.divideParam);
  const param = model.callableParams(helper.fn).find((p) => p.name === helper.divideParam);
  const value = given ?? param?.defaultValue;
  if (!value) return undefined;
  const v = unparen(value);
  if (v.type === 'true') return true;
  if (v.type === 'false' || v.type === 'none') return false;
  return given ? given : undefined;
}

/** The argument a call passes for a parameter of `fn`, by keyword or position. */
export function argumentFor(model: FileModel, fn: FunctionInfo, call: PyNode, name: string): PyNode | undefined {
  const args = model.syntax.args(call);
  const params: Param[] = model.callableParams(fn);
  const index = params.findIndex((p) => p.name === name);
  return args.keywords.get(name)?.value ?? (index >= 0 ? args.positional[index] : undefined);
}

function isDistCall(model: FileModel, call: PyNode): boolean {
  const object = model.syntax.calleeObject(call);
  if (!object) return false;
  const text = compact(model.syntax.text(object));
  return text === model.torchDistAlias() || text === 'dist' || text === 'torch.distributed';
}

/** The parameter a local's values all come from, through casts, flat copies and views; undefined otherwise. */
function derivedParam(model: FileModel, fn: FunctionInfo, name: string, depth: number): string | undefined {
  if (fn.params.some((p) => p.name === name)) return name;
  if (depth > 4) return undefined;
  const s = model.syntax;
  let found: string | undefined;
  for (const a of fn.assignments) {
    const left = child(a, 'left');
    const right = child(a, 'right');
    if (a.type !== 'assignment' || !left || !right || s.text(left) !== name) continue;
    const source = sameValuesSource(model, right);
    const from = source ? derivedParam(model, fn, source, depth + 1) : undefined;
    if (!from || (found && from !== found)) return undefined;
    found = from;
  }
  return found;
}

/** `x` for `x`, `self.flatten(x)`, `torch.cat(x)`, `x.to(dtype)`, `x.view(-1)`. */
function sameValuesSource(model: FileModel, expr: PyNode): string | undefined {
  const s = model.syntax;
  const n = unparen(expr);
  if (n.type === 'identifier') return s.text(n);
  if (n.type !== 'call' || !SAME_VALUES.has(s.calleeName(n))) return undefined;
  const first = s.args(n).positional[0];
  const object = s.calleeObject(n);
  const inner =
    first && unparen(first).type === 'identifier' && !['to', 'view'].includes(s.calleeName(n)) ? first : object;
  return inner && unparen(inner).type === 'identifier' ? s.text(unparen(inner)) : undefined;
}

/** A local list filled only with items taken from a loop over one of the function's parameters. */
function collectedFromParam(model: FileModel, fn: FunctionInfo, name: string): string | undefined {
  const s = model.syntax;
  for (const a of fn.assignments) {
    const left = child(a, 'left');
    const right = child(a, 'right');
    if (!left || s.text(left) !== name) continue;
    if (a.type !== 'assignment' || !right || unparen(right).type !== 'list' || named(unparen(right)).length > 0)
      return undefined;
  }
  let param: string | undefined;
  for (const call of fn.calls) {
    const object = s.calleeObject(call);
    if (s.calleeName(call) !== 'append' || !object || s.text(object) !== name) continue;
    const loop = enclosingFor(call, fn);
    const iterable = loop && child(loop, 'right');
    const over = iterable && fn.params.find((p) => new RegExp(`\\b${p.name}\\b`).test(s.text(iterable)));
    if (!over || (param && over.name !== param)) return undefined;
    param = over.name;
  }
  return param;
}

export function enclosingFor(node: PyNode, fn: FunctionInfo): PyNode | undefined {
  for (let p = node.parent; p && p !== fn.node; p = p.parent) if (p.type === 'for_statement') return p;
  return undefined;
}

/** In-place divisions of a name (or its `.data`): `x.div_(d)`, `x.data.div_(d)`, `x /= d`. */
export function divisionsOf(model: FileModel, fn: FunctionInfo, name: string): { node: PyNode; divisor: PyNode }[] {
  const s = model.syntax;
  const out: { node: PyNode; divisor: PyNode }[] = [];
  const names = new Set([name, `${name}.data`]);
  for (const call of fn.calls) {
    const object = s.calleeObject(call);
    const divisor = s.args(call).positional[0];
    if (s.calleeName(call) === 'div_' && object && divisor && names.has(compact(s.text(object))))
      out.push({ node: call, divisor });
  }
  for (const a of fn.assignments) {
    const left = child(a, 'left');
    const right = child(a, 'right');
    if (
      a.type === 'augmented_assignment' &&
      left &&
      right &&
      names.has(compact(s.text(left))) &&
      /\//.test(s.operator(a))
    )
      out.push({ node: a, divisor: right });
  }
  return out.sort((a, b) => a.node.start - b.node.start);
}

/** The divisor has the group's size as a factor: `dist.get_world_size(group=g)` (over `/ float(sp)` and the like). */
function dividesByGroupSize(model: FileModel, divisor: PyNode, group: string): boolean {
  return model.syntax.factors(divisor).some((f) => f.sign === 1 && worldSizeGroup(model, f.node) === group);
}

/** The group text of a `get_world_size(...)` call ('' for the default group); undefined for anything else. */
export function worldSizeGroup(model: FileModel, node: PyNode): string | undefined {
  const s = model.syntax;
  const n = s.stripWrappers(node);
  if (n.type !== 'call' || s.calleeName(n) !== 'get_world_size') return undefined;
  const g = s.args(n).keywords.get('group')?.value ?? s.args(n).positional[0];
  return g ? compact(s.text(g)) : '';
}

export function compact(text: string): string {
  return text.replace(/\s+/g, '');
}

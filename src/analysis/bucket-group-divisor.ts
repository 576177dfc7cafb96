// CP003 for gradients divided one by one by their group's size and then summed, in buckets, over the group each
// bucket is keyed by (DeepSpeed ZeRO 1/2 before #6546: with MoE parameters in the bucket, each gradient was divided
// by the size of its own group, the expert-data-parallel group of an expert parameter, and the bucket was summed
// with `divide=False` over that group; an expert-data-parallel sum counts the data-parallel replicas, so the expert
// gradients were ep times the mean). The rule speaks only when all of this is in view:
// - a call to a bucket helper (bucket-averaging.ts) told not to divide (`divide=False`), given `B[k]` of a dict of
//   lists filled with views of a parameter `T` of the calling method, and as its group the key `k` itself or a part
//   of it (`dst, group = k`);
// - every key the dict is filled under is, in that part, `L[i]` of one local list `L` that starts empty and is only
//   ever appended the same local `G`;
// - in a loop over an attribute list, each parameter's own gradient is divided by a size that reads
//   `get_world_size(group=G)`, and `L.append(G)` runs later in the same iteration with `G` not rebound in between:
//   the group a bucket is summed over is the one its gradients were divided by;
// - `T` is the buffer those gradients are slices of (bucket-buffers.ts), the guards of the division and the call
//   can hold together, and nothing else divides or multiplies `T` or the gradients on that path;
// - the group and the divisor are named on one path (group-sizes.ts) and leave a factor other than 1
//   (group-divisor.ts), a factor that is not a power of the replica count (a missing or doubled division, which the
//   world-size rules judge).
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
import { aliasedBuffer, consistent, constraintOf, gradientLocals, loopsOver, slicedParam } from './bucket-buffers';
import { formatDims, type GroupSizes } from './group-sizes';
import { groupDivisorMessage, groupDivisorMismatch, type ScalingTerm } from './group-divisor';
import { clip } from './messages';
import { appendsOfOneLocal, keyGroupList } from './bucket-keys';

export interface BucketGroupDivisorVerdict {
  readonly node: PyNode;
  readonly message: string;
  readonly related: readonly { readonly node: PyNode; readonly message: string }[];
}

export function bucketGroupDivisorVerdicts(model: FileModel, sizes: GroupSizes): BucketGroupDivisorVerdict[] {
  const helpers = bucketAveragingHelpers(model);
  if (helpers.size === 0) return [];
  const out: BucketGroupDivisorVerdict[] = [];
  for (const fn of model.functions) {
    if (!fn.className || fn.node.type !== 'function_definition') continue;
    for (const call of fn.calls) {
      const callee = model.resolveCall(call);
      const helper = callee && callee !== fn ? helpers.get(callee) : undefined;
      const v = helper && judgeCall(model, sizes, fn, call, helper);
      if (v && !out.some((o) => o.node === v.node)) out.push(v);
    }
  }
  return out;
}

function judgeCall(
  model: FileModel,
  sizes: GroupSizes,
  fn: FunctionInfo,
  call: PyNode,
  helper: BucketAveragingHelper,
): BucketGroupDivisorVerdict | undefined {
  if (divideArgument(model, helper, call) !== false || !helper.groupParam) return undefined;
  const bucketArg = argumentFor(model, helper.fn, call, helper.bucketParam);
  const groupArg = argumentFor(model, helper.fn, call, helper.groupParam);
  if (!bucketArg || !groupArg || unparen(bucketArg).type !== 'subscript') return undefined;
  const buffer = slicedParam(model, fn, bucketArg);
  const list = buffer && keyGroupList(model, fn, unparen(bucketArg), unparen(groupArg));
  const appends = list ? appendsOfOneLocal(model, fn, list) : undefined;
  if (!buffer || !appends) return undefined;
  const callGuards = guardsOf(call, fn).map(constraintOf(model));
  for (const division of perParameterDivisions(model, fn, appends.local)) {
    const append = appends.calls.find((a) => sameIteration(model, fn, division, a, appends.local));
    if (!append) continue;
    const path = [...callGuards, ...guardsOf(division.node, fn).map(constraintOf(model))];
    if (!consistent(path) || otherScaling(model, fn, buffer, division, path)) continue;
    const alias = aliasedBuffer(model, fn, buffer, division.list, path);
    if (!alias) continue;
    const env = { fn };
    const term: ScalingTerm = { size: { kind: 'unknown' }, sign: -1, node: division.divisor, env };
    const m = groupDivisorMismatch(sizes, division.group, env, false, [term], (n) => compact(model.syntax.text(n)));
    if (!m || m === 'agrees') continue;
    const s = model.syntax;
    const line = (n: PyNode) => s.source.lineOf(n) + 1;
    const helperName = s.calleeText(call);
    const divisor = clip(s.text(division.divisor), 80);
    const sentence = groupDivisorMessage(m, helperName, s.text(division.group), divisor, false);
    const message =
      `Each parameter's gradient \`${division.gradient}\` (of \`${division.list}\`) is divided here by its group's size, and ${sentence}` +
      ` The bucket \`${clip(s.text(bucketArg), 40)}\` holds slices of \`${buffer}\`, which is \`${alias.buffer}\` (line ${line(alias.site)}), the buffer those gradients are slices of, and it is keyed by \`${list}\`, where line ${line(append)} recorded \`${s.text(division.group)}\` for them, with \`divide=False\` (line ${line(call)}): the sum over ${formatDims(m.groupDims)} ranks is not divided again.`;
    return {
      node: division.node,
      message,
      related: [
        { node: append, message: `the group each gradient was divided by is recorded in \`${list}\` here` },
        { node: call, message: `the bucket is summed over that group, with \`divide=False\`` },
        { node: helper.base.reduce, message: `the SUM reduction (\`${clip(s.calleeText(helper.base.reduce), 30)}\`)` },
        { node: alias.assignment, message: `the gradient is made a slice of \`${alias.buffer}\` here` },
        { node: alias.site, message: `\`${alias.buffer}\` is passed as \`${buffer}\`, whose slices are bucketed` },
      ],
    };
  }
  return undefined;
}

interface GroupDivision {
  readonly node: PyNode;
  readonly divisor: PyNode;
  /** The `G` of `get_world_size(group=G)` in the divisor. */
  readonly group: PyNode;
  readonly gradient: string;
  readonly list: string;
  readonly loop: PyNode;
}

/** Divisions of each parameter's gradient, in a loop over an attribute list, by a size read from the local `G`. */
function perParameterDivisions(model: FileModel, fn: FunctionInfo, local: string): GroupDivision[] {
  const s = model.syntax;
  const out: GroupDivision[] = [];
  for (const gradient of gradientLocals(model, fn)) {
    for (const division of divisionsOf(model, fn, gradient.name)) {
      const loop = enclosingFor(division.node, fn);
      const iterable = loop && child(loop, 'right');
      if (!loop || !iterable || !loopsOver(model, loop, gradient.param)) continue;
      const list = compact(s.text(iterable));
      if (!/^self\.\w+$/.test(list)) continue;
      const sizes = s.factors(division.divisor).filter((f) => f.sign === 1 && worldSizeGroup(model, f.node) === local);
      if (sizes.length !== 1) continue;
      const sizeCall = s.stripWrappers(sizes[0].node);
      const group = s.args(sizeCall).keywords.get('group')?.value ?? s.args(sizeCall).positional[0];
      if (group)
        out.push({ node: division.node, divisor: division.divisor, group, gradient: gradient.name, list, loop });
    }
  }
  return out.sort((a, b) => a.node.start - b.node.start);
}

/**
 * `L.append(G)` runs after the division in the same iteration of the division's loop, and `G` is not rebound
 * between them: the list records the group that gradient was divided by.
 */
function sameIteration(
  model: FileModel,
  fn: FunctionInfo,
  division: GroupDivision,
  append: PyNode,
  local: string,
): boolean {
  if (append.start < division.node.end) return false;
  let inside = false;
  for (let p = append.parent; p && p !== fn.node; p = p.parent) if (p === division.loop) inside = true;
  if (!inside) return false;
  const s = model.syntax;
  return !fn.assignments.some((a) => {
    const left = child(a, 'left');
    return (
      !!left &&
      a.start > division.node.end &&
      a.start < append.start &&
      new RegExp(`(^|[^\\w.])${local}([^\\w]|$)`).test(s.text(left))
    );
  });
}

/**
 * Another division or multiplication of the buffer or of the gradients on the same path would change the factor:
 * the rule then stays silent.
 */
function otherScaling(
  model: FileModel,
  fn: FunctionInfo,
  buffer: string,
  division: GroupDivision,
  path: ReturnType<ReturnType<typeof constraintOf>>[],
): boolean {
  const s = model.syntax;
  const onPath = (n: PyNode) => consistent([...path, ...guardsOf(n, fn).map(constraintOf(model))]);
  const others = [...divisionsOf(model, fn, buffer), ...divisionsOf(model, fn, division.gradient)];
  if (others.some((d) => d.node !== division.node && onPath(d.node))) return true;
  const scaled = new Set([buffer, `${buffer}.data`, division.gradient, `${division.gradient}.data`]);
  for (const call of fn.calls) {
    const object = s.calleeObject(call);
    if (['mul_', 'mul', 'multiply'].includes(s.calleeName(call)) && object && scaled.has(compact(s.text(object))))
      return true;
  }
  return fn.assignments.some(
    (a) =>
      a.type === 'augmented_assignment' && s.operator(a) === '*=' && scaled.has(compact(s.text(child(a, 'left')!))),
  );
}

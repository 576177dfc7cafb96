// The groups a dict of buckets is keyed by, as the bucket-group divisor rule (bucket-group-divisor.ts) needs them:
// the local list of groups every key is read from (`L[i]`, or one part of a tuple key), through the key's local
// conditional of shapes and the unpacking before the reduction, and the one local name that list is filled with.
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import { compact } from './bucket-averaging';

/**
 * The local list whose items the bucket's group is: the helper gets `B[k]` and the key `k` (or `g` of `a, g = k`),
 * and every key the dict `B` is filled under is, in that place, `L[i]` (through a local holding a conditional of
 * the key's shapes, `L[i] if flag else (dst, L[i])`: a shape that does not fit the helper's reading is not this path).
 */
export function keyGroupList(
  model: FileModel,
  fn: FunctionInfo,
  bucketArg: PyNode,
  groupArg: PyNode,
): string | undefined {
  const s = model.syntax;
  const dict = child(bucketArg, 'value');
  const key = named(bucketArg).find((c) => c.field === 'subscript') ?? named(bucketArg)[1];
  if (dict?.type !== 'identifier' || !key || key.type !== 'identifier' || groupArg.type !== 'identifier')
    return undefined;
  const keyName = s.text(key);
  let part: number | undefined;
  if (s.text(groupArg) !== keyName) {
    part = unpackedPart(model, fn, s.text(groupArg), keyName);
    if (part === undefined) return undefined;
  }
  const dictName = s.text(dict);
  let list: string | undefined;
  let stores = 0;
  for (const c of fn.calls) {
    if (s.calleeName(c) !== 'append') continue;
    const object = s.calleeObject(c);
    const storedKey = object ? storeKey(model, unparen(object), dictName) : undefined;
    if (storedKey === undefined) continue;
    const shapes = storedKey ? keyShapes(model, fn, storedKey) : undefined;
    if (!shapes) return undefined;
    const picked = shapes.flatMap((shape) => {
      if (part === undefined) return shape.type === 'tuple' ? [] : [shape];
      const items = shape.type === 'tuple' ? named(shape) : [];
      return items[part] ? [unparen(items[part])] : [];
    });
    if (picked.length === 0) return undefined;
    for (const p of picked) {
      const base = p.type === 'subscript' ? child(p, 'value') : undefined;
      if (base?.type !== 'identifier' || (list && list !== s.text(base))) return undefined;
      list = s.text(base);
    }
    stores++;
  }
  return stores > 0 ? list : undefined;
}

/** The key of `B[key].append` or `B.setdefault(key, []).append`; undefined for another object. */
function storeKey(model: FileModel, object: PyNode, dict: string): PyNode | null | undefined {
  const s = model.syntax;
  if (object.type === 'subscript' && compact(s.text(child(object, 'value') ?? object)) === dict)
    return named(object).find((x) => x.field === 'subscript') ?? named(object)[1] ?? null;
  if (
    object.type === 'call' &&
    s.calleeName(object) === 'setdefault' &&
    compact(s.text(s.calleeObject(object) ?? object)) === dict
  )
    return s.args(object).positional[0] ?? null;
  return undefined;
}

/** The shapes a key may have: the expression, or through its one local assignment, each branch of a conditional. */
function keyShapes(model: FileModel, fn: FunctionInfo, key: PyNode): PyNode[] | undefined {
  const s = model.syntax;
  let k = unparen(key);
  if (k.type === 'identifier') {
    const values = fn.assignments.filter(
      (a) =>
        a.type === 'assignment' && child(a, 'left')?.type === 'identifier' && s.text(child(a, 'left')!) === s.text(k),
    );
    if (values.length !== 1 || !child(values[0], 'right')) return undefined;
    k = unparen(child(values[0], 'right')!);
  }
  if (k.type !== 'conditional_expression') return [k];
  const parts = named(k);
  return [parts[0], parts[2]].filter((p): p is PyNode => !!p).map(unparen);
}

/** The index of `name` in the one unpacking `a, name = key` of the function; undefined otherwise. */
function unpackedPart(model: FileModel, fn: FunctionInfo, name: string, key: string): number | undefined {
  const s = model.syntax;
  let found: number | undefined;
  for (const a of fn.assignments) {
    const left = child(a, 'left');
    const right = child(a, 'right');
    if (!left || !right) continue;
    const targets = left.type === 'pattern_list' || left.type === 'tuple_pattern' ? named(left) : [left];
    const i = targets.findIndex((t) => s.text(t) === name);
    if (i < 0) continue;
    if (found !== undefined || targets.length < 2 || compact(s.text(right)) !== key) return undefined;
    found = i;
  }
  return found;
}

/** A local list that starts empty and is only ever given `G` (one local name): the appends, and `G`. */
export function appendsOfOneLocal(
  model: FileModel,
  fn: FunctionInfo,
  list: string,
): { calls: PyNode[]; local: string } | undefined {
  const s = model.syntax;
  for (const a of fn.assignments) {
    const left = child(a, 'left');
    if (!left || !new RegExp(`(^|[^\\w.])${list}([^\\w]|$)`).test(s.text(left))) continue;
    const right = child(a, 'right');
    const empty = right && unparen(right).type === 'list' && named(unparen(right)).length === 0;
    if (a.type !== 'assignment' || left.type !== 'identifier' || !empty) return undefined;
  }
  const calls: PyNode[] = [];
  let local: string | undefined;
  for (const c of fn.calls) {
    const object = s.calleeObject(c);
    if (!object || compact(s.text(object)) !== list) continue;
    const item = s.args(c).positional[0];
    if (s.calleeName(c) !== 'append' || !item || unparen(item).type !== 'identifier') return undefined;
    if (local && local !== s.text(unparen(item))) return undefined;
    local = s.text(unparen(item));
    calls.push(c);
  }
  return local && calls.length > 0 ? { calls, local } : undefined;
}

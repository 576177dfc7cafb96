// A mask the collate function takes from the dataset's items, proven per sample by the class's own `__getitem__`:
// the collate method iterates its item list (`for ids, attn, mask in item_list: masks.append(mask)`), and the same
// class's `__getitem__` returns, in that position, a mask over the sample's own positions: `torch.ones_like(ids)`,
// or `torch.zeros_like(ids)` set to one on slices whose bounds come from the data (`mask[0, prompt_len - 1 : -1] =
// 1`, the response ranges), made there or in a method of the class it calls, every return of which must be such a
// mask. Zero-padded by the collate function (collate-masks.ts), the batch's count is the sum of the kept positions
// of its samples: the response lengths, data-dependent like `labels != -100`. Anything else proves nothing.
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';

const MAX_DEPTH = 4;

/**
 * `value`, appended to the list the collate pads, is field j of the collate's items, and `__getitem__` of the
 * collate's class makes that field a per-sample mask (`lengthMask` decides the ones-over-the-sample form).
 */
export function itemLengthMask(
  model: FileModel,
  collate: FunctionInfo,
  value: PyNode,
  lengthMask: (n: PyNode) => boolean,
): boolean {
  const s = model.syntax;
  const items = collate.params.find((p) => p.name !== 'self');
  if (value.type !== 'identifier' || !items || !collate.className) return false;
  for (const loop of collate.nodes) {
    if (loop.type !== 'for_statement') continue;
    const left = child(loop, 'left');
    const right = child(loop, 'right');
    if (!left || !right || s.text(unparen(right)) !== items.name) continue;
    const parts = named(unparen(left));
    const index = parts.findIndex((p) => p.type === 'identifier' && s.text(p) === s.text(value));
    if (index < 0 || !(value.start > loop.start && value.end <= loop.end)) continue;
    const getitem = method(model, collate.className, '__getitem__');
    const returns = getitem ? returnValues(getitem) : [];
    if (!getitem || returns.length !== 1 || !/^(tuple|expression_list)$/.test(returns[0].type)) return false;
    const field = named(returns[0])[index];
    return !!field && sampleMask(model, getitem, unparen(field), lengthMask, 0);
  }
  return false;
}

function sampleMask(
  model: FileModel,
  fn: FunctionInfo,
  n: PyNode,
  lengthMask: (n: PyNode) => boolean,
  depth: number,
): boolean {
  const s = model.syntax;
  if (depth > MAX_DEPTH) return false;
  if (lengthMask(n)) return true;
  if (n.type === 'call' && s.calleeObject(n) && s.text(s.calleeObject(n)!) === 'self' && fn.className) {
    const callee = method(model, fn.className, s.calleeName(n));
    const returns = callee ? returnValues(callee) : [];
    return returns.length > 0 && returns.every((r) => sampleMask(model, callee!, unparen(r), lengthMask, depth + 1));
  }
  if (n.type !== 'identifier') return false;
  // `mask = torch.zeros_like(ids)` once, then only slices set to one: `mask[0, a - 1 : -1] = 1`.
  const name = s.text(n);
  const writes = fn.assignments.filter((a) => {
    const l = child(a, 'left');
    return !!l && (s.text(unparen(l)) === name || s.text(child(unparen(l), 'value') ?? l) === name);
  });
  const made = writes.filter((a) => s.text(unparen(child(a, 'left')!)) === name);
  const set = writes.filter((a) => !made.includes(a));
  const value = made.length === 1 && made[0].type === 'assignment' ? child(made[0], 'right') : undefined;
  if (value && set.length === 0) return sampleMask(model, fn, unparen(value), lengthMask, depth + 1);
  if (!value || set.length === 0 || !zerosOver(model, value)) return false;
  return set.every((a) => a.type === 'assignment' && dataSlice(model, a));
}

/** `torch.zeros_like(ids)` (any dtype): zeros over the sample's positions. */
function zerosOver(model: FileModel, n: PyNode | undefined): boolean {
  const v = n && unparen(n);
  return (
    !!v && v.type === 'call' && model.syntax.calleeName(v) === 'zeros_like' && !!model.syntax.args(v).positional[0]
  );
}

/** `mask[..., a : b] = 1` with a slice bound that is not a number: positions chosen by the data. */
function dataSlice(model: FileModel, a: PyNode): boolean {
  const s = model.syntax;
  const left = unparen(child(a, 'left')!);
  const right = child(a, 'right');
  if (left.type !== 'subscript' || !right || s.numberValue(right) !== 1) return false;
  const slices = left.children.filter((c) => c.type === 'slice');
  return slices.length === 1 && named(slices[0]).some((b) => s.numberValue(b) === undefined);
}

function method(model: FileModel, className: string, name: string): FunctionInfo | undefined {
  const found = (model.byName.get(name) ?? []).filter((f) => f.className === className);
  return found.length === 1 ? found[0] : undefined;
}

function returnValues(fn: FunctionInfo): PyNode[] {
  return fn.nodes.filter((n) => n.type === 'return_statement').map((r) => named(r)[0] ?? r);
}

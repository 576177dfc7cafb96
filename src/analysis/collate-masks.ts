// A batch mask whose number of kept positions changes with the data, proven through the collate function that
// made it: the loop reads one field of a `DataLoader(..., collate_fn=f)` built in view, and `f` (a function of this
// file, or a method of the dataset class that the loader's dataset is built from) returns, in that field, per-sample
// masks padded with zeros to the batch's longest sample, each mask one over its own sample's positions
// (`torch.ones(len(ids))`, `torch.ones_like(ids)`). The batch's count is then the sum of the samples' lengths:
// padding says the lengths differ, and the ones say each sample counts all of its own positions.
//
// A mask the collate function receives from the dataset (`for ids, mask in samples`), one padded with ones, one
// stacked without padding, or one of a fixed width per sample (`torch.ones(1)`) proves nothing: it may keep the
// same number of positions in every batch (a classification head that reads one position per sample).
import { child, named, unparen, visit, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import { itemLengthMask } from './dataset-item-masks';

/** Keywords that set the value padded in; any other keyword on a padding call is read as a flag. */
const PAD_VALUE_KEYWORDS = /^(padding_value|value|pad_value|fill_value)$/;
/** Keywords of a padding call that do not change the padded value. */
const PAD_FLAGS = /^(batch_first|side|padding_side|left|stack)$/;

/**
 * Where `name`, read at `before` in `fn`, is a target of a `for` loop over such a loader: returns the padding call
 * in the collate function that proves its count variable.
 */
export function paddedBatchMask(model: FileModel, fn: FunctionInfo, name: string, before: number): PyNode | undefined {
  const found = batchLoop(model, fn, name, before);
  const collate = found && collateOf(model, fn, found.loader, found.loop.start);
  return collate && paddedField(model, collate, found.index);
}

/**
 * The innermost `for` loop around `before` whose target binds `name` (`for ids, mask in loader`, or through
 * `enumerate`), with the loader it iterates and the field's position in its target; undefined where none does or
 * `name` is bound again inside the loop before `before`.
 */
export function batchLoop(
  model: FileModel,
  fn: FunctionInfo,
  name: string,
  before: number,
): { loop: PyNode; loader: PyNode; index: number } | undefined {
  const s = model.syntax;
  for (let loop = enclosingFor(fn, before); loop; loop = enclosingFor(fn, loop.start)) {
    const left = child(loop, 'left');
    let right = child(loop, 'right');
    if (!left || !right) continue;
    let target = unparen(left);
    right = unparen(right);
    // `for step, (ids, mask) in enumerate(loader)`: the second target is the batch.
    if (right.type === 'call' && s.calleeText(right) === 'enumerate') {
      const parts = named(target);
      const loader = s.args(right).positional[0];
      if (!loader || parts.length !== 2) continue;
      target = unparen(parts[1]);
      right = unparen(loader);
    }
    const index = targetIndex(model, target, name);
    if (index === undefined) continue;
    if (assignedBetween(model, fn, name, loop.start, before)) return undefined;
    return { loop, loader: right, index };
  }
  return undefined;
}

export function enclosingFor(fn: FunctionInfo, before: number): PyNode | undefined {
  let best: PyNode | undefined;
  for (const n of fn.nodes) {
    if (n.type === 'for_statement' && n.start < before && n.end >= before) best = n;
  }
  return best;
}

/** The position of `name` in the loop's tuple target, or -1 when the target is `name` itself. */
export function targetIndex(model: FileModel, target: PyNode, name: string): number | undefined {
  const s = model.syntax;
  if (target.type === 'identifier') return s.text(target) === name ? -1 : undefined;
  if (target.type !== 'pattern_list' && target.type !== 'tuple_pattern') return undefined;
  const parts = named(target);
  const i = parts.findIndex((p) => p.type === 'identifier' && s.text(p) === name);
  return i >= 0 ? i : undefined;
}

export function assignedBetween(model: FileModel, fn: FunctionInfo, name: string, from: number, to: number): boolean {
  return fn.assignments.some((a) => {
    const left = child(a, 'left');
    return a.start > from && a.start < to && !!left && model.syntax.text(unparen(left)) === name;
  });
}

/**
 * The collate function of the loader the loop iterates: `DataLoader(ds, collate_fn=f)` assigned in `fn` before the
 * loop, or written in the loop header; `f` a function of this file, or the method of the dataset's class.
 */
function collateOf(model: FileModel, fn: FunctionInfo, loader: PyNode, before: number): FunctionInfo | undefined {
  const s = model.syntax;
  let call: PyNode | undefined = loader;
  if (loader.type === 'identifier') {
    call = undefined;
    for (const a of fn.assignments) {
      if (a.start >= before) break;
      const left = child(a, 'left');
      if (left && s.text(unparen(left)) === s.text(loader)) call = child(a, 'right');
    }
  }
  if (!call || unparen(call).type !== 'call' || s.calleeName(unparen(call)) !== 'DataLoader') return undefined;
  const value = s.args(unparen(call)).keywords.get('collate_fn')?.value;
  if (!value) return undefined;
  const f = unparen(value);
  if (f.type === 'identifier') {
    const top = model.byName.get(s.text(f))?.find((g) => !g.className);
    return top;
  }
  // `dataset.collate_fn` with `dataset = SomeDataset(...)` in this function: the method of that class.
  const obj = f.type === 'attribute' ? child(f, 'object') : undefined;
  const attr = f.type === 'attribute' ? child(f, 'attribute') : undefined;
  if (!obj || !attr || obj.type !== 'identifier') return undefined;
  let cls: string | undefined;
  for (const a of fn.assignments) {
    if (a.start >= before) break;
    const left = child(a, 'left');
    const right = child(a, 'right');
    if (left && right && s.text(unparen(left)) === s.text(obj) && unparen(right).type === 'call')
      cls = s.calleeText(unparen(right));
  }
  return cls ? model.byName.get(s.text(attr))?.find((g) => g.className === cls) : undefined;
}

/** The zero-padding call of per-sample-length masks the collate function returns at `index` (-1: the whole value). */
export function paddedField(model: FileModel, collate: FunctionInfo, index: number): PyNode | undefined {
  const s = model.syntax;
  const returns = collate.nodes.filter((n) => n.type === 'return_statement');
  if (returns.length !== 1) return undefined;
  let value: PyNode | undefined = named(returns[0])[0] && unparen(named(returns[0])[0]);
  if (!value) return undefined;
  if (index >= 0) {
    if (value.type !== 'tuple' && value.type !== 'expression_list') return undefined;
    value = named(value)[index] && unparen(named(value)[index]);
  }
  if (value?.type === 'identifier') value = lastValue(model, collate, s.text(value), returns[0].start);
  if (!value || value.type !== 'call' || !zeroPadding(model, value)) return undefined;
  const list = s.args(value).positional[0];
  return list && perSampleLengthMasks(model, collate, unparen(list), value.start) ? value : undefined;
}

function lastValue(model: FileModel, fn: FunctionInfo, name: string, before: number): PyNode | undefined {
  const s = model.syntax;
  let value: PyNode | undefined;
  for (const a of fn.assignments) {
    if (a.end > before) break;
    const left = child(a, 'left') && unparen(child(a, 'left')!);
    const right = child(a, 'right') && unparen(child(a, 'right')!);
    if (a.type !== 'assignment' || !left || !right) continue;
    if (s.text(left) === name) value = right;
    else if (left.type === 'pattern_list' || left.type === 'tuple_pattern') {
      // `ids, masks = [], []`: the element in the same position, when the right side is written out.
      const i = named(left).findIndex((p) => s.text(p) === name);
      const parts = right.type === 'expression_list' || right.type === 'tuple' ? named(right) : [];
      if (i >= 0) value = parts.length === named(left).length ? parts[i] : undefined;
    }
  }
  return value && unparen(value);
}

/** `pad_sequence(masks, batch_first=True)`, `zero_pad_sequences(masks, "right")`: a padding call that pads zeros. */
function zeroPadding(model: FileModel, call: PyNode): boolean {
  const s = model.syntax;
  if (!/pad/i.test(s.calleeName(call))) return false;
  const args = s.args(call);
  for (const [key, kw] of args.keywords) {
    if (PAD_VALUE_KEYWORDS.test(key)) {
      if (s.numberValue(kw.value) !== 0) return false;
    } else if (!PAD_FLAGS.test(key)) return false;
  }
  // Positional arguments after the sequences: a side ("right") or a flag (True); a value must be 0.
  return args.positional.slice(1).every((a) => {
    const v = unparen(a);
    return v.type === 'string' || v.type === 'true' || v.type === 'false' || s.numberValue(v) === 0;
  });
}

/** The list handed to the padding: each element one over its own sample's positions. */
function perSampleLengthMasks(model: FileModel, fn: FunctionInfo, list: PyNode, before: number): boolean {
  const s = model.syntax;
  if (list.type === 'list_comprehension') {
    const body = child(list, 'body');
    return !!body && lengthMask(model, unparen(body));
  }
  if (list.type !== 'identifier') return false;
  const name = s.text(list);
  const start = lastValue(model, fn, name, before);
  if (start?.type === 'list_comprehension') return perSampleLengthMasks(model, fn, start, before);
  if (!start || start.type !== 'list' || named(start).length > 0) return false;
  // `masks = []` then `masks.append(torch.ones(len(ids)))` for each sample: every appended value must be one.
  let appended = 0;
  let allLength = true;
  visit(fn.node, (n) => {
    if (n.start >= before) return false;
    if (n.type === 'call' && s.calleeName(n) === 'append') {
      const obj = s.calleeObject(n);
      if (obj && s.text(obj) === name) {
        appended++;
        const v = s.args(n).positional[0];
        allLength =
          allLength &&
          !!v &&
          (lengthMask(model, unparen(v)) || itemLengthMask(model, fn, unparen(v), (m) => lengthMask(model, m)));
      }
    }
    return n.type !== 'class_definition';
  });
  return appended > 0 && allLength;
}

/** `torch.ones(len(x))`, `torch.ones_like(x)`, `torch.ones(x.size(0))`, `torch.ones(x.shape[0])`, `[1] * len(x)`. */
function lengthMask(model: FileModel, n: PyNode): boolean {
  const s = model.syntax;
  if (n.type === 'binary_operator' && s.operator(n) === '*') {
    const left = child(n, 'left');
    const right = child(n, 'right');
    return (
      !!left && !!right && unparen(left).type === 'list' && s.text(unparen(left)) === '[1]' && isLength(model, right)
    );
  }
  if (n.type !== 'call') return false;
  const name = s.calleeName(n);
  const first = s.args(n).positional[0];
  if (name === 'ones_like') return !!first;
  if (name === 'tensor' || name === 'as_tensor') return !!first && lengthMask(model, unparen(first));
  if (name !== 'ones' || s.args(n).positional.length !== 1) return false;
  return !!first && isLength(model, first);
}

/** `len(x)`, `x.size(0)`, `x.shape[0]`, `x.numel()`: the length of one sample, not a constant. */
function isLength(model: FileModel, n: PyNode): boolean {
  const s = model.syntax;
  const v = unparen(n);
  if (v.type === 'call') {
    const name = s.calleeName(v);
    if (name === 'len' && !s.calleeObject(v)) return s.args(v).positional.length === 1;
    return (name === 'size' || name === 'numel') && !!s.calleeObject(v);
  }
  return v.type === 'subscript' && /\.shape$/.test(s.text(child(v, 'value') ?? v));
}

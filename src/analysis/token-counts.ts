// Proves that a loss is a mean over a per-shard token count: a sum divided by the number of tokens a label mask
// keeps (`(labels != -100).sum()`, `mask.sum().clamp_min(1)` with `mask = labels != ignore_index`), or a mean of
// the values a mask selects (`loss[mask].mean()`). Such a count changes from one micro-batch or device to the next,
// so averaging those means with equal weights misweights tokens. A count that is not provably data-dependent (a
// `loss_mask` parameter, `batch * seq`, a `numel()`) proves nothing: a mean over a fixed-size batch is correct by
// convention, and the rules built on this module stay silent on it.
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import { paddedBatchMask } from './collate-masks';
import { callReachesReturn } from './call-reaches-return';

export interface TokenMean {
  /** The expression that makes the per-shard mean (the division, or `x[mask].mean()`). */
  readonly mean: PyNode;
  /** Where the per-shard count is made: the mask comparison (`labels != -100`). */
  readonly mask: PyNode;
  /** The function of this file the mean is made in, when it is not the one the trace started from. */
  readonly helper?: FunctionInfo;
}

/** Value-preserving calls on a tensor: the count or mask inside them is the same count or mask. */
const KEEPS_VALUE = /^(float|long|int|bool|to|cuda|detach|type_as|type|contiguous|view|reshape|flatten|item|squeeze)$/;
/** Calls that keep a count away from zero (`clamp_min(1)`, `clamp(min=1)`): still the same count. */
const KEEPS_COUNT = /^(clamp|clamp_min|clip|maximum)$/;
/** The other side of `labels != X` that names an ignored or padding label. */
const IGNORED_LABEL = /ignore|pad|IGNORE|PAD/;
/** Each trace (the loss, its count, the mask) follows at most this many assignments, casts and calls. */
const MAX_DEPTH = 10;
/** Losses whose default reduction is a mean over the targets that are not `ignore_index`. */
const MEAN_LOSS = /^(cross_entropy|nll_loss)$/;

export class TokenCounts {
  /** `batchField`: proves a loop's batch field padded where this file does not build the loader (another file). */
  constructor(
    private readonly model: FileModel,
    private readonly batchField?: (fn: FunctionInfo, name: string, before: number) => boolean,
  ) {}

  private text(n: PyNode): string {
    return this.model.syntax.text(n);
  }

  /**
   * The per-shard token mean that `expr` (a loss, read at offset `before` in `fn`) carries, followed through the
   * assignments of `fn` and into the returns of functions of this file that it calls. `call` is the call that
   * entered `fn`, used to decide which of its guarded returns that call reaches.
   */
  meanOf(expr: PyNode, fn: FunctionInfo, before: number, depth = 0, call?: PyNode): TokenMean | undefined {
    if (depth > MAX_DEPTH) return undefined;
    const s = this.model.syntax;
    const n = unparen(expr);
    switch (n.type) {
      case 'conditional_expression':
      case 'tuple':
      case 'expression_list': {
        // `(loss, outputs) if return_outputs else loss`: the loss is the first element of either branch.
        const parts = n.type === 'conditional_expression' ? [named(n)[0], named(n)[2]] : [named(n)[0]];
        for (const p of parts) {
          const found = p && this.meanOf(p, fn, before, depth + 1, call);
          if (found) return found;
        }
        return undefined;
      }
      case 'binary_operator': {
        const op = s.operator(n);
        const left = child(n, 'left');
        const right = child(n, 'right');
        if (!left || !right) return undefined;
        if (op === '/') {
          const mask = this.countOf(right, fn, n.start);
          if (mask) return { mean: n, mask };
          return this.meanOf(left, fn, before, depth + 1, call);
        }
        if (op === '*' || op === '+' || op === '-')
          return this.meanOf(left, fn, before, depth + 1, call) ?? this.meanOf(right, fn, before, depth + 1, call);
        return undefined;
      }
      case 'identifier':
        return this.fromAssignment(s.text(n), fn, before, (value, at) => this.meanOf(value, fn, at, depth + 1, call));
      case 'call':
        return this.meanOfCall(n, fn, before, depth);
      default:
        return undefined;
    }
  }

  private meanOfCall(n: PyNode, fn: FunctionInfo, before: number, depth: number): TokenMean | undefined {
    const s = this.model.syntax;
    const name = s.calleeName(n);
    const obj = s.calleeObject(n);
    // `loss[mask].mean()`: a mean over the tokens the mask keeps.
    if (name === 'mean' && obj && s.args(n).positional.length === 0 && s.args(n).keywords.size === 0) {
      const selected = unparen(obj);
      const index = selected.type === 'subscript' ? child(selected, 'subscript') : undefined;
      const mask = index ? this.maskOf(index, fn, n.start) : undefined;
      return mask ? { mean: n, mask } : undefined;
    }
    if (obj && KEEPS_VALUE.test(name)) return this.meanOf(obj, fn, before, depth + 1);
    if (
      MEAN_LOSS.test(name) &&
      (!obj || /^(F|functional|nn\.functional|torch\.nn\.functional)$/.test(this.text(obj)))
    ) {
      const ignored = this.ignoredLabelsOf(n, fn);
      return ignored ? { mean: n, mask: ignored } : undefined;
    }
    const callee = this.model.resolveCall(n);
    if (!callee || callee === fn) return undefined;
    for (const ret of callee.nodes) {
      if (ret.type !== 'return_statement' || !callReachesReturn(this.model, ret, callee, n)) continue;
      const value = named(ret)[0];
      const found = value && this.meanOf(value, callee, ret.start, depth + 1, n);
      if (found) return { ...found, helper: found.helper ?? callee };
    }
    return undefined;
  }

  /**
   * `F.cross_entropy(logits, labels)` with the default mean is a mean over the labels that are not `ignore_index`
   * (-100 unless given). The count is proven variable only where this function writes the ignored label into those
   * labels before the call (`labels[labels == pad_id] = -100`, `labels.masked_fill_(mask, -100)`,
   * `labels = torch.where(mask, labels, -100)`): returns that write.
   */
  private ignoredLabelsOf(call: PyNode, fn: FunctionInfo): PyNode | undefined {
    const s = this.model.syntax;
    const args = s.args(call);
    const reduction = args.keywords.get('reduction')?.value;
    if (reduction && s.stringValue(reduction) !== 'mean') return undefined;
    if (args.keywords.has('weight') || args.keywords.has('reduce') || args.keywords.has('size_average'))
      return undefined;
    const target = s.arg(call, 'target', 1);
    const root = target ? this.labelRoot(target) : undefined;
    if (!root) return undefined;
    const ignoreNode = args.keywords.get('ignore_index')?.value;
    const ignore = ignoreNode ? s.text(unparen(ignoreNode)) : '-100';
    const isIgnore = (v: PyNode | undefined) =>
      !!v && s.text(unparen(v)).replace(/\s+/g, '') === ignore.replace(/\s+/g, '');
    for (const n of fn.nodes) {
      if (n.start >= call.start) break;
      if (n.type === 'assignment') {
        const left = child(n, 'left');
        const right = child(n, 'right');
        if (!left || !right) continue;
        const l = unparen(left);
        // `labels[labels == pad_id] = -100`
        if (
          l.type === 'subscript' &&
          this.labelRoot(l) === root &&
          isIgnore(right) &&
          this.dataMask(child(l, 'subscript'), fn, n.start)
        )
          return n;
        // `labels = labels.masked_fill(mask, -100)`, `labels = torch.where(keep, labels, -100)`
        if (
          l.type === 'identifier' &&
          s.text(l) === root &&
          unparen(right).type === 'call' &&
          this.writesIgnore(unparen(right), root, isIgnore, fn, n.start)
        )
          return n;
      } else if (n.type === 'call' && s.calleeName(n) === 'masked_fill_') {
        const obj = s.calleeObject(n);
        const [where, value] = s.args(n).positional;
        if (obj && this.labelRoot(obj) === root && isIgnore(value) && this.dataMask(where, fn, n.start)) return n;
      }
    }
    return undefined;
  }

  private writesIgnore(
    call: PyNode,
    root: string,
    isIgnore: (v: PyNode | undefined) => boolean,
    fn: FunctionInfo,
    before: number,
  ): boolean {
    const s = this.model.syntax;
    const name = s.calleeName(call);
    const args = s.args(call).positional;
    const obj = s.calleeObject(call);
    if (name === 'masked_fill' && obj && this.labelRoot(obj) === root)
      return isIgnore(args[1]) && this.dataMask(args[0], fn, before);
    if (name === 'where' && args.length === 3)
      return (
        ((this.labelRoot(args[1]) === root && isIgnore(args[2])) ||
          (this.labelRoot(args[2]) === root && isIgnore(args[1]))) &&
        this.dataMask(args[0], fn, before)
      );
    return false;
  }

  /**
   * Positions chosen by comparing data (`labels == pad_id`, `~keep` with `keep = ids != eos`): their number changes
   * from batch to batch. A slice (`labels[:, :prompt_len]`) or a constant mask may mark the same count every time.
   */
  private dataMask(n: PyNode | undefined, fn: FunctionInfo, before: number, depth = 0): boolean {
    if (!n || depth > MAX_DEPTH) return false;
    const s = this.model.syntax;
    const m = unparen(n);
    if (m.type === 'comparison_operator') return !/\b(is|in)\b/.test(s.operator(m));
    if (m.type === 'not_operator' || (m.type === 'unary_operator' && s.text(m).startsWith('~')))
      return this.dataMask(child(m, 'argument'), fn, before, depth + 1);
    if (m.type === 'binary_operator' && /^[&|]$/.test(s.operator(m)))
      return (
        this.dataMask(child(m, 'left'), fn, before, depth + 1) ||
        this.dataMask(child(m, 'right'), fn, before, depth + 1)
      );
    if (m.type === 'call' && s.calleeObject(m) && KEEPS_VALUE.test(s.calleeName(m)))
      return this.dataMask(s.calleeObject(m), fn, before, depth + 1);
    if (m.type === 'identifier')
      return (
        this.fromAssignment(
          s.text(m),
          fn,
          before,
          (value, at) => this.dataMask(value, fn, at, depth + 1) || undefined,
        ) ?? false
      );
    return false;
  }

  /** `labels` for `labels`, `labels.view(-1)`, `labels[:, 1:].contiguous()`, `shift_labels.flatten()`. */
  private labelRoot(n: PyNode): string | undefined {
    const s = this.model.syntax;
    let cur = unparen(n);
    for (let i = 0; i < 6; i++) {
      if (cur.type === 'identifier') return s.text(cur);
      // `batch["labels"]` names one field: the field, not the whole batch, is the labels.
      if (cur.type === 'subscript' && child(cur, 'subscript')?.type === 'string')
        return s.text(cur).replace(/\s+/g, '');
      if (cur.type === 'subscript' && child(cur, 'value')) cur = unparen(child(cur, 'value')!);
      else if (cur.type === 'call' && s.calleeObject(cur) && KEEPS_VALUE.test(s.calleeName(cur)))
        cur = unparen(s.calleeObject(cur)!);
      else return undefined;
    }
    return undefined;
  }

  /**
   * The mask comparison behind a per-shard count: `mask.sum()`, `torch.sum(mask)`, with `+ eps`, `clamp_min(1)`,
   * `max(n, 1)` or a dtype cast around it. A sum along a dimension (per-sequence counts) is not a shard's count.
   */
  countOf(expr: PyNode, fn: FunctionInfo, before: number, depth = 0): PyNode | undefined {
    if (depth > MAX_DEPTH) return undefined;
    const s = this.model.syntax;
    const n = unparen(expr);
    if (n.type === 'identifier')
      return this.fromAssignment(s.text(n), fn, before, (value, at) => this.countOf(value, fn, at, depth + 1));
    if (n.type === 'conditional_expression') {
      // `mask.sum() if labels is not None else len(x)`: the count where labels are given.
      const first = named(n)[0];
      return first ? this.countOf(first, fn, before, depth + 1) : undefined;
    }
    if (n.type === 'binary_operator' && s.operator(n) === '+') {
      const left = child(n, 'left');
      const right = child(n, 'right');
      if (left && right && s.numberValue(right) !== undefined) return this.countOf(left, fn, before, depth + 1);
      return undefined;
    }
    if (n.type !== 'call') return undefined;
    const name = s.calleeName(n);
    const obj = s.calleeObject(n);
    const args = s.args(n);
    if (obj && (KEEPS_VALUE.test(name) || KEEPS_COUNT.test(name))) return this.countOf(obj, fn, before, depth + 1);
    if (!obj && name === 'max' && args.positional.length === 2) {
      const [a, b] = args.positional;
      if (s.numberValue(b) !== undefined) return this.countOf(a, fn, before, depth + 1);
      if (s.numberValue(a) !== undefined) return this.countOf(b, fn, before, depth + 1);
      return undefined;
    }
    if (name !== 'sum' && name !== 'count_nonzero') return undefined;
    if (args.keywords.has('dim') || args.keywords.has('axis')) return undefined;
    const module = obj ? this.text(obj) : '';
    if (obj && /^(torch|jnp|np|numpy|jax\.numpy)$/.test(module))
      return args.positional.length === 1 ? this.maskOf(args.positional[0], fn, before) : undefined;
    if (!obj || args.positional.length > 0) return undefined;
    return this.maskOf(obj, fn, before);
  }

  /** A mask that depends on the data: `labels != -100`, `labels.ne(pad_id)`, combined with `&` or `*`. */
  maskOf(expr: PyNode, fn: FunctionInfo, before: number, depth = 0): PyNode | undefined {
    if (depth > MAX_DEPTH) return undefined;
    const s = this.model.syntax;
    const n = unparen(expr);
    if (n.type === 'identifier')
      return (
        this.fromAssignment(s.text(n), fn, before, (value, at) => this.maskOf(value, fn, at, depth + 1)) ??
        // A loop's batch field padded by the loader's collate function: the evidence is the read in the loop.
        (paddedBatchMask(this.model, fn, s.text(n), before) || this.batchField?.(fn, s.text(n), before) ? n : undefined)
      );
    if (n.type === 'comparison_operator') {
      const [left, right] = named(n);
      if (!left || !right || !/^!=$/.test(s.operator(n))) return undefined;
      return this.ignoredLabel(right) || this.ignoredLabel(left) ? n : undefined;
    }
    if (n.type === 'subscript') {
      const value = child(n, 'value');
      return value ? this.maskOf(value, fn, before, depth + 1) : undefined;
    }
    if (n.type === 'binary_operator' && /^[&*]$/.test(s.operator(n))) {
      const left = child(n, 'left');
      const right = child(n, 'right');
      return (left && this.maskOf(left, fn, before, depth + 1)) ?? (right && this.maskOf(right, fn, before, depth + 1));
    }
    if (n.type !== 'call') return undefined;
    const name = s.calleeName(n);
    const obj = s.calleeObject(n);
    if (obj && KEEPS_VALUE.test(name)) return this.maskOf(obj, fn, before, depth + 1);
    if (obj && name === 'ne' && s.args(n).positional.length === 1)
      return this.ignoredLabel(s.args(n).positional[0]) ? n : undefined;
    return undefined;
  }

  /** `-100`, `0`, `IGNORE_INDEX`, `self.ignore_index`, `tokenizer.pad_token_id`: a label the loss skips. */
  private ignoredLabel(n: PyNode): boolean {
    const v = unparen(n);
    if (this.model.syntax.numberValue(v) !== undefined) return true;
    return (v.type === 'identifier' || v.type === 'attribute') && IGNORED_LABEL.test(this.text(v));
  }

  /** Applies `read` to the last value assigned to `name` (alone on the left) in `fn` before `before`. */
  private fromAssignment<T>(
    name: string,
    fn: FunctionInfo,
    before: number,
    read: (value: PyNode, at: number) => T | undefined,
  ): T | undefined {
    let last: PyNode | undefined;
    for (const a of fn.assignments) {
      if (a.start >= before) break;
      const left = child(a, 'left');
      if (left && unparen(left).type === 'identifier' && this.text(left) === name) last = a;
    }
    if (!last || last.type !== 'assignment') return undefined;
    const right = child(last, 'right');
    return right ? read(right, last.start) : undefined;
  }
}

// A per-micro-batch token mean made across files: the loss is a sum divided by a count that a helper of another
// file makes (`batch_num_tokens = loss_mask.sum()`), sums over the ranks (`dist.all_reduce(batch_num_tokens)`) and
// returns in a dictionary, which the caller splats into a loss object's call (`self.loss_fn(logps, mask,
// **get_loss_batch_info(strategy, mask))`), whose `forward` hands it to a function that divides by it
// (OpenRLHF's `SFTLoss` and `aggregate_loss`). The trace follows values through bound-values.ts: arguments by
// position, keyword and splatted dictionary, `self.loss_fn` to the object its class's `__init__` builds, the class
// (in any file, through the imports) to `__call__` or nn.Module's `forward`, and each callee to the one return its
// arguments decide. The count's mask is followed back to where the caller gives it; whether it is data-dependent
// is asked of that file (token-counts.ts), so this module proves only the count's route.
import { child, named, unparen, type PyNode } from '../tree';
import { TokenCounts } from '../token-counts';
import type { FunctionInfo } from '../scope';
import { LoaderFields } from './loader-fields';
import { boundArgument, lastAssigned, reached, reachedReturn, resolved, type Frame, type Value } from './bound-values';
import type { ProgramClass, ProgramFunction, ProgramModels } from './program-models';

export interface SplatTokenMean {
  /** The division by the count. */
  readonly mean: Value;
  /** The `mask.sum()` that makes the count. */
  readonly count: Value;
  /** The data-dependent mask, where the frame nearest the loss makes it (token-counts.ts's evidence). */
  readonly mask: Value;
  /** The all-reduce that sums the count over the ranks. */
  readonly rankSum: Value;
  /** The frames the trace entered, the loss's own first. */
  readonly files: ReadonlySet<string>;
}

/** Value-preserving calls on a tensor, as in token-counts.ts. */
const KEEPS_VALUE = /^(float|long|int|bool|to|cuda|detach|type_as|type|contiguous|view|reshape|flatten|squeeze)$/;
const KEEPS_COUNT = /^(clamp|clamp_min|clip)$/;
/** Reductions that do not sum. */
const NOT_A_SUM = /\b(MAX|MIN|PRODUCT|AVG|BAND|BOR|BXOR|PREMUL_SUM|max|min|mean|avg)\b/;
const MAX_DEPTH = 16;

interface Count {
  readonly count: Value;
  readonly mask: Value;
  /** The names the count was assigned to on the way, each where it was assigned. */
  readonly names: readonly {
    readonly name: string;
    readonly frame: Frame;
    readonly after: number;
    readonly before: number;
  }[];
}

export class SplatTokenCounts {
  private entered = 0;
  private readonly loaders: LoaderFields;

  constructor(private readonly models: ProgramModels) {
    this.loaders = new LoaderFields(models, this);
  }

  /** The token mean `value` (a loss) carries, with a rank-summed count made in a frame the trace entered. */
  meanOf(value: Value, depth = 0): SplatTokenMean | undefined {
    if (depth > MAX_DEPTH) return undefined;
    const s = value.frame.at.model.syntax;
    const n = unparen(value.node);
    const at = (node: PyNode | undefined) => (node ? { node, frame: value.frame } : undefined);
    if (n.type === 'binary_operator') {
      const [left, right] = [at(child(n, 'left')), at(child(n, 'right'))];
      if (!left || !right) return undefined;
      const op = s.operator(n);
      if (op === '/') {
        const count = this.countOf(right);
        if (count) return this.proof({ node: n, frame: value.frame }, count);
        return this.meanOf(left, depth + 1);
      }
      if (op === '*' || op === '+' || op === '-') return this.meanOf(left, depth + 1) ?? this.meanOf(right, depth + 1);
      return undefined;
    }
    if (n.type === 'unary_operator') {
      const operand = at(child(n, 'argument'));
      return operand && this.meanOf(operand, depth + 1);
    }
    if (n.type === 'identifier' || n.type === 'attribute') {
      const r = resolved({ node: n, frame: value.frame });
      return r && r.node !== n ? this.meanOf(r, depth + 1) : undefined;
    }
    if (n.type !== 'call') return undefined;
    const obj = s.calleeObject(n);
    if (obj && KEEPS_VALUE.test(s.calleeName(n))) return this.meanOf({ node: obj, frame: value.frame }, depth + 1);
    const frame = this.enter({ node: n, frame: value.frame });
    const ret = frame && reachedReturn(frame);
    return ret && this.meanOf(ret, depth + 1);
  }

  private proof(mean: Value, count: Count): SplatTokenMean | undefined {
    const rankSum = count.names.map((h) => rankSumOf(h.frame, h.name, h.after, h.before)).find((c) => c !== undefined);
    if (!rankSum) return undefined;
    const files = new Set<string>();
    for (const v of [mean, count.count, count.mask, rankSum])
      for (let f: Frame | undefined = v.frame; f; f = f.caller) files.add(f.at.path);
    const where = count.mask.frame;
    // A loop's batch field is also proven through a loader built in another file (loader-fields.ts).
    const batchField = (fn: FunctionInfo, name: string, before: number) =>
      this.loaders.padded(fn === where.at.fn ? where : { at: { ...where.at, fn } }, name, before);
    const mask = new TokenCounts(where.at.model, batchField).maskOf(
      count.mask.node,
      where.at.fn,
      count.mask.node.start,
    );
    return mask
      ? { mean, count: count.count, mask: { node: mask, frame: count.mask.frame }, rankSum, files }
      : undefined;
  }

  /** The mask whose `sum()` the value counts, with the names the count was held in. */
  private countOf(value: Value, depth = 0): Count | undefined {
    if (depth > MAX_DEPTH) return undefined;
    const { frame } = value;
    const s = frame.at.model.syntax;
    const n = unparen(value.node);
    if (n.type === 'identifier') {
      const assigned = lastAssigned(frame, s.text(n), n.start);
      if (assigned) {
        const found = this.countOf(assigned, depth + 1);
        const hop = { name: s.text(n), frame, after: assigned.node.start, before: n.start };
        return found && { ...found, names: [hop, ...found.names] };
      }
      const bound = assigned === null ? boundArgument(frame, s.text(n)) : undefined;
      return bound ? this.countOf(bound, depth + 1) : undefined;
    }
    if (n.type === 'attribute') {
      const r = resolved(value);
      return r && r.node !== n ? this.countOf(r, depth + 1) : undefined;
    }
    if (n.type !== 'call') return undefined;
    const name = s.calleeName(n);
    const obj = s.calleeObject(n);
    const args = s.args(n);
    if (obj && (KEEPS_VALUE.test(name) || KEEPS_COUNT.test(name))) return this.countOf({ node: obj, frame }, depth + 1);
    if (name !== 'sum' || args.keywords.size > 0 || !obj) return undefined;
    const module = /^(torch|np|numpy|jnp)$/.test(s.text(obj));
    const mask = module ? args.positional[0] : args.positional.length === 0 ? obj : undefined;
    if (!mask || (module && args.positional.length !== 1)) return undefined;
    return { count: { node: n, frame }, mask: origin({ node: mask, frame }), names: [] };
  }

  /**
   * The frame a call enters: a top-level function of the program, or the `__call__`/`forward` of the object the
   * callee names when it resolves to a construction (`self.loss_fn = SFTLoss()`), with its `__init__` frame.
   */
  enter(call: Value): Frame | undefined {
    // Entering a call may resolve its callee through other calls: the nesting is bounded.
    if (this.entered > MAX_DEPTH) return undefined;
    this.entered++;
    try {
      return this.enterCall(call);
    } finally {
      this.entered--;
    }
  }

  private enterCall(call: Value): Frame | undefined {
    const { frame } = call;
    const s = frame.at.model.syntax;
    const callee = child(call.node, 'function');
    if (!callee) return undefined;
    const splat = this.splatOf(call);
    if (splat === undefined) return undefined;
    if (callee.type === 'identifier') {
      const fn = this.models.functionNamed(frame.at.path, s.text(callee));
      return fn && { at: fn, call: call.node, caller: frame, ...(splat ? { splat } : {}) };
    }
    const built = resolved({ node: callee, frame });
    let made = built && this.constructed(built);
    let method: ProgramFunction | undefined;
    if (made) method = this.models.method(made.cls, '__call__') ?? this.models.method(made.cls, 'forward');
    else if (callee.type === 'attribute') {
      // `strategy.setup_dataloader(...)`: a method of the object the receiver is built as (here or by a factory).
      const receiver = child(callee, 'object');
      const object = receiver && resolved({ node: receiver, frame });
      made = object ? this.constructed(object) : undefined;
      const name = child(callee, 'attribute');
      method = made && name ? this.models.method(made.cls, s.text(name)) : undefined;
    }
    if (!made || !method) return undefined;
    const init = this.models.method(made.cls, '__init__');
    const initFrame = init && { at: init, call: made.ctor.node, caller: made.ctor.frame };
    return {
      at: method,
      call: call.node,
      caller: frame,
      ...(splat ? { splat } : {}),
      ...(initFrame ? { init: initFrame } : {}),
    };
  }

  /**
   * The workspace class a value is an object of: a construction (`SFTLoss()`), or the construction a called
   * function returns (`get_strategy(args)` returning `DeepspeedStrategy(...)`).
   */
  constructed(value: Value, depth = 0): { cls: ProgramClass; ctor: Value } | undefined {
    const n = unparen(value.node);
    if (n.type !== 'call' || depth > 3) return undefined;
    const callee = child(n, 'function');
    const s = value.frame.at.model.syntax;
    const cls = callee?.type === 'identifier' ? this.models.classNamed(value.frame.at.path, s.text(callee)) : undefined;
    if (cls) return { cls, ctor: { node: n, frame: value.frame } };
    const entered = this.enter({ node: n, frame: value.frame });
    const ret = entered && reachedReturn(entered);
    const r = ret && resolved(ret);
    return r ? this.constructed(r, depth + 1) : undefined;
  }

  /**
   * The keywords a call's one `**` argument gives, when it is a call whose decided return is a dictionary of string
   * keys; null without such an argument; undefined where it cannot be read.
   */
  private splatOf(call: Value): Map<string, Value> | null | undefined {
    const s = call.frame.at.model.syntax;
    const list = s.args(call.node).list;
    const splats = list ? named(list).filter((a) => a.type === 'dictionary_splat') : [];
    if (splats.length === 0) return null;
    const inner = splats.length === 1 ? named(splats[0])[0] : undefined;
    if (!inner) return undefined;
    let dict: Value | null | undefined = resolved({ node: inner, frame: call.frame });
    if (dict && unparen(dict.node).type === 'call') {
      const helper = this.enter(dict);
      const ret = helper && reachedReturn(helper);
      dict = ret && resolved(ret);
    }
    if (!dict || unparen(dict.node).type !== 'dictionary') return undefined;
    const out = new Map<string, Value>();
    const ds = dict.frame.at.model.syntax;
    for (const pair of named(unparen(dict.node))) {
      const key = pair.type === 'pair' ? ds.stringValue(child(pair, 'key')) : undefined;
      const v = child(pair, 'value');
      if (key === undefined || !v) return undefined;
      out.set(key, { node: v, frame: dict.frame });
    }
    return out;
  }
}

/** A mask given as a parameter, followed back to the argument the caller passes (where it is made or read). */
function origin(mask: Value): Value {
  let v = mask;
  for (let i = 0; i < MAX_DEPTH; i++) {
    const n = unparen(v.node);
    const s = v.frame.at.model.syntax;
    if (n.type !== 'identifier' || lastAssigned(v.frame, s.text(n), n.start) !== null) return v;
    const bound = boundArgument(v.frame, s.text(n));
    if (!bound) return v;
    v = bound;
  }
  return v;
}

/**
 * `dist.all_reduce(name)` (a sum: the default op or SUM) between the count's assignment (`after`) and its read
 * (`before`), made whenever the assignment is (a block holding both is taken as run).
 */
function rankSumOf(frame: Frame, name: string, after: number, before: number): Value | undefined {
  const s = frame.at.model.syntax;
  for (const call of frame.at.fn.calls) {
    if (call.start <= after || call.start >= before || !/^all_?reduce$/i.test(s.calleeName(call))) continue;
    const first = s.args(call).positional[0];
    if (!first || s.text(unparen(first)) !== name || NOT_A_SUM.test(s.text(call))) continue;
    if (reached(frame, call, after) === true) return { node: call, frame };
  }
  return undefined;
}

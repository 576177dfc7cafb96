// Finds where gradients are produced (loss.backward(), autograd.grad, tape.gradient, jax.grad(loss_fn)) and how
// the loss was scaled before: divided by the world size (pre-divide), by a count summed over all ranks (a
// global normalisation), or multiplied by the world size on purpose.
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { SizeClassifier, SizeClass } from './sizes';

export interface BackwardSite {
  readonly call: PyNode;
  readonly fn: FunctionInfo;
  readonly kind: 'backward' | 'autograd' | 'tape' | 'jax';
  readonly loss?: PyNode;
}

export interface LossTerm {
  readonly node: PyNode;
  readonly sign: 1 | -1;
  readonly size: SizeClass;
  /** The term happens inside a generic helper (`reduce_mean(loss, n)`); `node` is the call that uses it. */
  readonly viaCall?: boolean;
}

/** Helpers that reduce or average whatever they are given: a loss scaled inside them is scaled at the call. */
const GENERIC_HELPER = /reduce|average|mean|all_?reduce|sync|gather/i;

export interface LossInfo {
  /** Powers of N the loss carries relative to a per-rank mean: -1 for a pre-divide or a global normalisation. */
  readonly exponent: number;
  readonly terms: LossTerm[];
  /** The loss is multiplied by the world size on purpose (undoing an average): do not judge. */
  readonly deliberate: boolean;
  /** A `reduce_mean`/`mean()` made the loss a per-replica mean (TF custom loops). */
  readonly meanNode?: PyNode;
}

const SCALE_WRAPPERS = new Set(['scale', 'scale_loss']);

export class LossTracer {
  constructor(
    private readonly model: FileModel,
    private readonly sizes: SizeClassifier,
  ) {}

  backwardSites(fn: FunctionInfo): BackwardSite[] {
    const s = this.model.syntax;
    const out: BackwardSite[] = [];
    for (const call of fn.calls) {
      const name = s.calleeName(call);
      const args = s.args(call).positional;
      const obj = s.calleeObject(call);
      if (name === 'backward') {
        // `booster.backward(loss=loss, optimizer=opt)` names the loss; `loss.backward()` is called on it.
        let loss = args[0] ?? s.args(call).keywords.get('loss')?.value ?? obj;
        if (loss && !args[0] && unparen(loss).type === 'call' && SCALE_WRAPPERS.has(s.calleeName(unparen(loss))))
          loss = s.args(unparen(loss)).positional[0];
        out.push({ call, fn, kind: 'backward', loss });
      } else if (name === 'grad' && /autograd/.test(s.calleeText(call))) {
        out.push({ call, fn, kind: 'autograd', loss: args[0] });
      } else if (name === 'gradient' && obj && /tape/i.test(s.text(obj))) {
        out.push({ call, fn, kind: 'tape', loss: args[0] });
      } else if (name === 'grad' || name === 'value_and_grad') {
        const target = args[0];
        const lossFn = target?.type === 'identifier' ? this.model.byName.get(s.text(target)) : undefined;
        if (lossFn?.length === 1) out.push({ call, fn: lossFn[0], kind: 'jax', loss: undefined });
        else if (target) out.push({ call, fn, kind: 'jax', loss: undefined });
      }
    }
    return out;
  }

  /**
   * The backward sites behind gradients reduced through these frames (innermost first): those of the outermost
   * frame that has one, else every one in the file; only the kinds the reduction's framework produces.
   */
  sitesBehind(frames: readonly { fn: FunctionInfo }[], framework: string): BackwardSite[] {
    const wanted = (s: BackwardSite) =>
      framework === 'jax'
        ? s.kind === 'jax'
        : framework === 'tf'
          ? s.kind === 'tape'
          : s.kind === 'backward' || s.kind === 'autograd' || (framework === 'horovod' && s.kind === 'tape');
    for (const frame of frames.slice().reverse()) {
      const sites = this.backwardSites(frame.fn).filter(wanted);
      if (sites.length > 0) return sites;
    }
    return this.model.functions.flatMap((fn) => this.backwardSites(fn)).filter(wanted);
  }

  lossInfo(site: BackwardSite): LossInfo {
    const acc: Mutable = { exponent: 0, terms: [], deliberate: false };
    if (site.kind === 'jax') {
      if (site.fn.calls.includes(site.call)) return acc;
      this.fromReturns(site.fn, acc, 0);
    } else if (site.loss) {
      this.fromExpr(site.loss, site.fn, site.call.start, acc, 0);
    }
    return acc;
  }

  private fromReturns(fn: FunctionInfo, acc: Mutable, depth: number): void {
    for (const n of fn.nodes) {
      if (n.type !== 'return_statement') continue;
      let value = named(n)[0];
      if (value && (value.type === 'tuple' || value.type === 'expression_list')) value = named(value)[0];
      if (value) this.fromExpr(value, fn, n.start, acc, depth + 1);
      return;
    }
  }

  private fromExpr(expr: PyNode, fn: FunctionInfo, before: number, acc: Mutable, depth: number): void {
    if (depth > 4) return;
    const s = this.model.syntax;
    const factors = s.factors(expr);
    const tensorIndex = factors.findIndex(
      (f) => f.sign === 1 && s.numberValue(f.node) === undefined && !this.isSize(f.node, fn),
    );
    // The tensor's own history first (replaying its assignments may start the account afresh), then the factors
    // written here.
    if (tensorIndex >= 0) this.fromTensor(unparen(factors[tensorIndex].node), fn, before, acc, depth);
    factors.forEach((f, i) => {
      if (i !== tensorIndex) this.addTerm(f.node, f.sign, fn, acc);
    });
  }

  private fromTensor(start: PyNode, fn: FunctionInfo, before: number, acc: Mutable, depth: number): void {
    const s = this.model.syntax;
    let tensor = start;
    while (tensor.type === 'call' && SCALE_WRAPPERS.has(s.calleeName(tensor)) && s.args(tensor).positional[0])
      tensor = unparen(s.args(tensor).positional[0]);
    if (tensor.type === 'call') {
      const name = s.calleeName(tensor);
      if (/^(reduce_mean|mean)$/.test(name)) acc.meanNode = acc.meanNode ?? tensor;
      if (this.isDifferentiableAverage(tensor)) {
        // horovod.torch's allreduce has a gradient: averaging the loss also averages its gradient once more.
        const inner = s.args(tensor).positional[0];
        if (inner) this.fromExpr(inner, fn, before, acc, depth + 1);
        acc.terms.push({ node: tensor, sign: -1, size: { kind: 'world' } });
        acc.exponent -= 1;
        return;
      }
      if (name === 'compute_average_loss') {
        acc.terms.push({ node: tensor, sign: -1, size: { kind: 'global-count' } });
        acc.exponent -= 1;
      }
      const local =
        this.model.resolveCall(tensor) ??
        (child(tensor, 'function')?.type === 'identifier' ? this.model.byName.get(name)?.[0] : undefined);
      if (local && local !== fn) {
        const count = acc.terms.length;
        this.fromReturns(local, acc, depth);
        if (GENERIC_HELPER.test(local.name))
          acc.terms = [
            ...acc.terms.slice(0, count),
            ...acc.terms.slice(count).map((t) => ({ ...t, node: tensor, viaCall: true })),
          ];
      }
      return;
    }
    const root = this.rootName(tensor);
    if (root) this.fromAssignments(root, fn, before, acc, depth);
  }

  private isDifferentiableAverage(call: PyNode): boolean {
    const s = this.model.syntax;
    if (!/^(allreduce|allreduce_)$/.test(s.calleeName(call))) return false;
    const obj = s.calleeObject(call);
    const module = obj ? (this.model.moduleOf(s.text(obj)) ?? s.text(obj)) : '';
    if (!/horovod\.torch|^hvd$/.test(module)) return false;
    const kw = s.args(call).keywords;
    const op = kw.get('op')?.value;
    const average = kw.get('average')?.value;
    return (!op || /Average/.test(s.text(op))) && (!average || s.text(average) === 'True');
  }

  private rootName(n: PyNode): string | undefined {
    const s = this.model.syntax;
    let cur = unparen(n);
    for (let i = 0; i < 6; i++) {
      if (cur.type === 'identifier') return s.text(cur);
      if (
        cur.type === 'call' &&
        s.calleeObject(cur) &&
        /^(unsqueeze|squeeze|float|mean|sum|view|reshape|to|cuda|contiguous)$/.test(s.calleeName(cur))
      ) {
        if (/^(mean)$/.test(s.calleeName(cur))) return undefined;
        cur = unparen(s.calleeObject(cur)!);
      } else if (cur.type === 'subscript' && child(cur, 'value')) cur = unparen(child(cur, 'value')!);
      else return undefined;
    }
    return undefined;
  }

  /** Replays the assignments to the loss variable before the backward call, in source order. */
  private fromAssignments(name: string, fn: FunctionInfo, before: number, acc: Mutable, depth: number): void {
    const s = this.model.syntax;
    for (const a of fn.assignments) {
      if (a.start >= before) break;
      const left = child(a, 'left');
      const right = child(a, 'right');
      if (!left || !right) continue;
      const targets =
        unparen(left).type === 'pattern_list' || unparen(left).type === 'tuple'
          ? named(unparen(left))
          : [unparen(left)];
      if (!targets.some((t) => t.type === 'identifier' && s.text(t) === name)) continue;
      if (a.type === 'augmented_assignment') {
        const op = s.operator(a);
        if (op === '/=' || op === '*=')
          for (const f of s.factors(right, op === '/=' ? -1 : 1)) this.addTerm(f.node, f.sign, fn, acc);
        continue;
      }
      const value = targets.length > 1 && unparen(right).type !== 'call' ? undefined : right;
      if (!value) continue;
      const factors = s.factors(value);
      const selfRef = factors.some((f) => f.sign === 1 && this.rootName(f.node) === name);
      if (!selfRef) {
        acc.exponent = 0;
        acc.terms = [];
        acc.deliberate = false;
        acc.meanNode = undefined;
        this.fromExpr(value, fn, a.start, acc, depth + 1);
      } else {
        for (const f of factors)
          if (!(f.sign === 1 && this.rootName(f.node) === name)) this.addTerm(f.node, f.sign, fn, acc);
      }
    }
  }

  private isSize(node: PyNode, fn: FunctionInfo): boolean {
    const kind = this.sizes.classify(node, { fn }).kind;
    return kind === 'world' || kind === 'local';
  }

  private addTerm(node: PyNode, sign: 1 | -1, fn: FunctionInfo, acc: Mutable): void {
    const size = this.sizes.classify(node, { fn });
    if (size.kind === 'batch' && sign === -1 && !acc.meanNode) {
      // A sum divided by the per-replica batch size is a per-replica mean, like reduce_mean.
      let host: PyNode = node;
      while (host.parent && (host.parent.type === 'binary_operator' || host.parent.type === 'parenthesized_expression'))
        host = host.parent;
      acc.meanNode = host;
    }
    // An integer multiplier can be a hard-coded rank count (`grad * 2 / global_batch` in a 2-GPU test): the scale
    // then is not provable.
    if (size.kind === 'const' && sign === 1 && Number.isInteger(size.value) && (size.value ?? 0) >= 2)
      acc.deliberate = true;
    if (size.kind === 'world') {
      acc.terms.push({ node, sign, size });
      acc.exponent += sign;
      if (sign === 1) acc.deliberate = true;
    } else if (size.kind === 'global-count') {
      if (sign === 1) acc.deliberate = true;
      else {
        acc.terms.push({ node, sign, size });
        acc.exponent -= 1;
      }
    }
  }
}

interface Mutable {
  exponent: number;
  terms: LossTerm[];
  deliberate: boolean;
  meanNode?: PyNode;
}

// A loss that is a sum over its examples rather than a mean. torch's loss functions and loss modules sum their
// elements' losses when given `reduction="sum"` (or the pre-1.0 `size_average=False`), and a `reduction="none"`
// loss followed by `.sum()` is the same sum (torch.nn.functional and torch.nn loss docs). The gradient of such a loss
// on one rank is the sum of that rank's examples' gradients, so a SUM all-reduce of it over the data-parallel ranks
// gives the sum over the global batch: the gradient one process computes from the same loss on the whole batch,
// whatever the number of ranks (modded-nanogpt's track-3 trainers, `F.cross_entropy(..., reduction="sum")` in the
// model's forward and `dist.all_reduce(p.grad, op=SUM)`). An undivided sum of such gradients is not N times the
// intended update, so the judge (judge.ts) asks this module and says nothing when every loss behind the gradients is
// proven to be a sum.
//
// The proof follows the loss backwards through one reaching assignment per name, dtype and device conversions, a
// function or method of the file whose every return is such a loss, a loss module built with the keyword (a local
// name or a `self.` attribute), and a module object of a class of the file (`model = GPT(...).cuda()`, possibly
// passed through `torch.compile`) whose `forward` returns such a loss. Any arithmetic on the loss (a division by a
// count, a product), a reduction keyword held in a variable, or a name bound more than once ends the proof.
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { BackwardSite } from './losses';
import { bindingPosition } from './value-origins';

/** What a loss expression is over its examples: summed, or not reduced at all (per-example losses). */
type Reduced = 'sum' | 'none';

/** Calls that change a tensor's dtype, device or view, not its values' scale. */
const CONVERSIONS = /^(float|double|half|bfloat16|cuda|cpu|to|contiguous|squeeze)$/;
/** Calls that return the module they are given, computing the same function (`torch.compile(model)`). */
const SAME_MODULE = /^(torch\.)?compile$/;
const MAX_DEPTH = 6;

export class SummedLosses {
  constructor(private readonly model: FileModel) {}

  /** True when there are backward sites and every one's loss is proven to be a sum over its examples. */
  allSummed(sites: readonly BackwardSite[]): boolean {
    return sites.length > 0 && sites.every((s) => s.loss && this.summingCall(s.loss, s.fn, s.call.start));
  }

  /** The call that makes the loss a sum over its examples, when the file proves it; undefined otherwise. */
  summingCall(loss: PyNode, fn: FunctionInfo, at: number): PyNode | undefined {
    const found = this.trace(loss, fn, at, 0);
    return found?.kind === 'sum' ? found.call : undefined;
  }

  private trace(
    expr: PyNode,
    fn: FunctionInfo,
    at: number,
    depth: number,
  ): { kind: Reduced; call: PyNode } | undefined {
    if (depth > MAX_DEPTH) return undefined;
    const s = this.model.syntax;
    const node = unparen(expr);
    if (node.type === 'identifier') {
      const made = dominatingAssignment(this.model, s.text(node), at, fn);
      const right = made && child(made, 'right');
      return right ? this.trace(right, fn, made.start, depth + 1) : undefined;
    }
    if (node.type !== 'call') return undefined;
    const own = keywordReduction(this.model, node);
    if (own) return { kind: own, call: node };
    const obj = s.calleeObject(node);
    const name = s.calleeName(node);
    if (obj && CONVERSIONS.test(name)) return this.trace(obj, fn, at, depth + 1);
    const args = s.args(node);
    if (obj && name === 'sum' && args.positional.length === 0 && args.keywords.size === 0) {
      const inner = this.trace(obj, fn, at, depth + 1);
      return inner?.kind === 'none' ? { kind: 'sum', call: node } : undefined;
    }
    const local = this.model.resolveCall(node);
    if (local) return local === fn ? undefined : this.returned(local, depth + 1);
    const callee = child(node, 'function');
    return callee ? this.calledObject(callee, fn, at, depth + 1) : undefined;
  }

  /** What every return of a function of this file gives, when they all agree. */
  private returned(fn: FunctionInfo, depth: number): { kind: Reduced; call: PyNode } | undefined {
    const returns = fn.nodes.filter((n) => n.type === 'return_statement' && this.model.enclosingFunction(n) === fn);
    let found: { kind: Reduced; call: PyNode } | undefined;
    for (const r of returns) {
      const value = named(r)[0];
      const traced = value ? this.trace(value, fn, r.start, depth) : undefined;
      if (!traced || (found && found.kind !== traced.kind)) return undefined;
      found = found ?? traced;
    }
    return found;
  }

  /**
   * A called object: a loss module built with the reduction keyword, or a module of a class of this file whose
   * `forward` returns such a loss. The object is a local name with one reaching assignment, or a `self.` attribute
   * assigned once in its class.
   */
  private calledObject(callee: PyNode, fn: FunctionInfo, at: number, depth: number) {
    const s = this.model.syntax;
    let built: PyNode | undefined;
    let where = fn;
    if (callee.type === 'identifier') {
      const made = dominatingAssignment(this.model, s.text(callee), at, fn);
      if (made) built = child(made, 'right');
    } else if (callee.type === 'attribute' && s.text(child(callee, 'object') ?? callee) === 'self') {
      const cls = this.model.classOf(callee);
      const values = (this.model.assignedValues.get(s.text(callee).replace(/\s+/g, '')) ?? []).filter(
        (v) => v.fn.className === cls,
      );
      if (cls && values.length === 1) {
        built = values[0].value;
        where = values[0].fn;
      }
    }
    const ctor = built && this.constructorOf(built, where, depth);
    if (!ctor) return undefined;
    const own = keywordReduction(this.model, ctor);
    if (own) return { kind: own, call: ctor };
    const forward = this.model.byName.get('forward')?.find((f) => f.className === s.calleeName(ctor));
    return forward ? this.returned(forward, depth + 1) : undefined;
  }

  /** The constructor call behind a module value, through conversions (`.cuda()`) and `torch.compile`. */
  private constructorOf(value: PyNode, fn: FunctionInfo, depth: number): PyNode | undefined {
    const s = this.model.syntax;
    let node = unparen(value);
    for (let i = depth; i <= MAX_DEPTH && node.type === 'call'; i++) {
      const obj = s.calleeObject(node);
      const first = s.args(node).positional[0];
      if (obj && CONVERSIONS.test(s.calleeName(node))) node = unparen(obj);
      else if (SAME_MODULE.test(s.calleeText(node)) && first) {
        const inner = unparen(first);
        if (inner.type !== 'identifier') node = inner;
        else {
          const made = dominatingAssignment(this.model, s.text(inner), node.start, fn);
          const right = made && child(made, 'right');
          if (!right) return undefined;
          node = unparen(right);
        }
      } else return node;
    }
    return undefined;
  }
}

/** The reduction a loss call's keywords ask for: `reduction="sum"`/`"none"`, or `size_average=False`. */
function keywordReduction(model: FileModel, call: PyNode): Reduced | undefined {
  const keywords = model.syntax.args(call).keywords;
  const reduction = keywords.get('reduction')?.value;
  if (reduction) {
    const text = model.syntax.text(reduction);
    return /^["']sum["']$/.test(text) ? 'sum' : /^["']none["']$/.test(text) ? 'none' : undefined;
  }
  const sizeAverage = keywords.get('size_average')?.value;
  const reduce = keywords.get('reduce')?.value;
  if (sizeAverage && model.syntax.text(sizeAverage) === 'False' && (!reduce || model.syntax.text(reduce) === 'True'))
    return 'sum';
  return undefined;
}

/**
 * The plain assignment of `name` (the whole target) that every path to `at` runs last: the last one before `at`
 * whose enclosing blocks all hold `at` (`loss = model(x)` then `loss.backward()` in one loop body), with no later
 * assignment coming back to `at` round a loop that does not run it again first. Undefined when it is not proven.
 */
function dominatingAssignment(model: FileModel, name: string, at: number, fn: FunctionInfo): PyNode | undefined {
  let found: PyNode | undefined;
  const later: PyNode[] = [];
  for (const a of fn.assignments) {
    const left = child(a, 'left');
    if (!left || !bindingPosition(model, left, name)) continue;
    if (a.end > at) later.push(a);
    else found = a;
  }
  if (!found || found.type !== 'assignment' || bindingPosition(model, child(found, 'left')!, name)!.length > 0)
    return undefined;
  const statement = found.parent?.type === 'expression_statement' ? found.parent : found;
  for (let p = statement.parent; p && p !== fn.node; p = p.parent)
    if (!(p.start <= at && at <= p.end)) return undefined;
  for (const a of later) {
    let loop: PyNode | undefined;
    for (let p = a.parent; p && p !== fn.node; p = p.parent)
      if ((p.type === 'for_statement' || p.type === 'while_statement') && p.start <= at && at < p.end) loop = p;
    if (loop && found.start < loop.start) return undefined;
  }
  return found;
}

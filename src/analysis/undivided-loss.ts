// Whether a loss given to backward is an undivided per-micro-batch mean: nothing in its history (its assignments,
// the call that made it, that call's arguments or a loss function of this file) divides, multiplies or sums, and no
// callback the program passes in divides by the micro-step count. It is apart from accumulation.ts because it judges
// the loss alone; the rule there finds the accumulation window (backward K times, then one step) and asks it.
import { child, unparen, visit, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import { hasScalingArithmetic } from './accumulation-syntax';
import type { CallbackLoss } from './contracts/callback-arguments';

export class UndividedLoss {
  constructor(
    private readonly model: FileModel,
    /** The program's answer for a callable parameter's returned loss; a file analysed alone has none. */
    private readonly callbackLoss?: (fn: string, param: string, counts: ReadonlySet<string>) => CallbackLoss,
  ) {}

  private text(n: PyNode): string {
    return this.model.syntax.text(n);
  }

  /**
   * True when the loss is provably an undivided per-micro-batch mean: neither it nor any value it was assigned from
   * before backward is divided, multiplied or reduced with `sum`, so no normalisation can hide anywhere.
   */
  undividedMean(loss: PyNode, fn: FunctionInfo, before: number, count: PyNode): boolean {
    const countText = this.text(count);
    const suspicious = (n: PyNode) => this.scaled(n, countText);
    if (suspicious(loss)) return false;
    const root = rootName(loss, this.model);
    if (!root)
      return this.undividedCallResult(loss, fn, before, countText) && this.callbacksUndivided(fn, [loss], count);
    const sources: PyNode[] = [];
    for (const a of fn.assignments) {
      if (a.start >= before) break;
      const left = child(a, 'left');
      if (!left || !new RegExp(`(^|[\\s,(])${root}([\\s,)]|$)`).test(this.text(left))) continue;
      if (a.type === 'augmented_assignment' || suspicious(child(a, 'right') ?? a)) return false;
      sources.push(child(a, 'right') ?? a);
    }
    return sources.length > 0 && this.callbacksUndivided(fn, sources, count);
  }

  /**
   * A loss returned by a call of the function's own parameter (`loss = forward_fn(batch, model)`) is the loss of
   * whatever the program passes there: where a function is passed, the loss is an undivided mean only when every
   * function that reaches the parameter returns one and none divides by the count (contracts/callback-arguments.ts).
   * A parameter no call passes a function to (a `model`) keeps the reading of its call's result.
   */
  private callbacksUndivided(fn: FunctionInfo, values: readonly PyNode[], count: PyNode): boolean {
    const ask = this.callbackLoss;
    const top = fn.node.type === 'function_definition' && !fn.className && fn.enclosing?.node.type === 'module';
    if (!ask || !top) return true;
    const countText = this.text(count).replace(/\s+/g, '');
    const counts = new Set([countText, countText.split('.').pop()!]);
    const params = new Set(fn.params.map((p) => p.name));
    return values.every((v) => {
      const call = unwrapScale(unparen(v), this.model);
      const callee = call?.type === 'call' ? child(call, 'function') : undefined;
      const name = callee?.type === 'identifier' ? this.text(callee) : undefined;
      return !name || !params.has(name) || ask(fn.name, name, counts) !== 'divided';
    });
  }

  /**
   * A value that may normalise a loss: arithmetic that multiplies or divides (read from the syntax tree, so the
   * splat in `model(**batch)` is not a product), a call or name that divides, multiplies, sums, reduces,
   * normalises or scales (other than AMP's `scaler.scale(loss)`), or the micro-step count itself.
   */
  private scaled(n: PyNode, countText: string): boolean {
    const t = this.text(n);
    return (
      hasScalingArithmetic(n, this.model.syntax) ||
      /\bdiv|\bmul|sum|reduction|normaliz|scale\(/.test(t.replace(/\bscaler\.scale\(/g, '')) ||
      t.includes(countText)
    );
  }

  /**
   * Backward on the unnamed result of a call (`model(x, y).backward()`, `loss_fn(model(x), y).backward()`): the
   * result is the callee's own mean loss when nothing in the call, its arguments' history or (for a function of
   * this file) its body divides, multiplies or sums. A method of a value computed in the function
   * (`per_token.mean()`) is refused: the value's history is not a call's result.
   */
  private undividedCallResult(loss: PyNode, fn: FunctionInfo, before: number, countText: string): boolean {
    const s = this.model.syntax;
    const call = unwrapScale(unparen(loss), this.model);
    if (!call || call.type !== 'call') return false;
    const callee = child(call, 'function');
    if (!callee || (callee.type !== 'identifier' && callee.type !== 'attribute')) return false;
    const obj = s.calleeObject(call);
    const assignedHere = (name: string) =>
      fn.assignments.some(
        (a) =>
          a.start < before &&
          this.text(child(a, 'left') ?? a)
            .split(/[\s,()]+/)
            .includes(name),
      );
    if (obj && (obj.type !== 'identifier' || (this.text(obj) !== 'self' && assignedHere(this.text(obj))))) return false;
    // Names passed to the call must not carry a normaliser computed earlier (`w = 1 / K; model(x, w)`).
    const names = new Set<string>();
    visit(child(call, 'arguments') ?? call, (n) => void (n.type === 'identifier' && names.add(this.text(n))));
    for (const a of fn.assignments) {
      if (a.start >= before) break;
      const left = this.text(child(a, 'left') ?? a).split(/[\s,()]+/);
      if (!left.some((name) => names.has(name))) continue;
      if (a.type === 'augmented_assignment' || this.scaled(child(a, 'right') ?? a, countText)) return false;
    }
    // A loss function of this file is read: any arithmetic or summing in its body may be the normalisation.
    const defs = this.model.byName.get(s.calleeName(call)) ?? [];
    return defs.every((d) => !this.scaled(d.node, countText));
  }
}

/** `loss` for `loss` and `scaler.scale(loss)`; a call's result (`loss.mean()`, `model(x)`) has no name. */
function rootName(n: PyNode, model: FileModel): string | undefined {
  const cur = unwrapScale(unparen(n), model);
  return cur?.type === 'identifier' ? model.syntax.text(cur) : undefined;
}

/** The value inside AMP's loss-scaling wrappers: `loss` for `scaler.scale(loss)` and `amp.scale_loss(loss, opt)`. */
function unwrapScale(n: PyNode, model: FileModel): PyNode | undefined {
  let cur = n;
  for (let i = 0; i < 4; i++) {
    if (cur.type !== 'call' || !/^(scale|scale_loss)$/.test(model.syntax.calleeName(cur))) return cur;
    const inner = model.syntax.args(cur).positional[0];
    if (!inner) return undefined;
    cur = unparen(inner);
  }
  return undefined;
}

// CP008, the same bug in time: gradient accumulation. Calling backward on K micro-batches before one optimizer step
// sums their gradients, so each micro-batch's mean loss must be divided by K; otherwise the update uses K times
// the gradient of the mean over the K micro-batches. The rule speaks only when the code shows all of it:
// backward once per micro-batch (in a loop, or in a per-batch method), the step taken once per K micro-steps (after
// a `range(K)` loop or a loop over a micro-batch collection, or under `% K`), K named as an accumulation count, no
// division, multiplication or sum-reduction anywhere in the loss's history, and no rescaling of the gradients
// before the step. Where backward and the step live in different functions of the file, accumulation-split.ts
// proves the same from the methods of one object or from a loop that divides a returned loss.
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { BackwardSite, LossTracer } from './losses';
import { SplitAccumulation } from './accumulation-split';
import type { AccumulationEvidence, AccumulationVerdict } from './accumulation-types';
import { ACCUMULATION_NAME, enclosingLoop, findModulo } from './accumulation-syntax';
import { UndividedLoss } from './undivided-loss';
import type { CallbackLoss } from './contracts/callback-arguments';

/** An optimizer step: `optimizer.step()`, `scaler.step(opt)`, `opt.apply_gradients(...)`. */
const STEP_CALL = /(^|\.)(step|apply_gradients)\(/;
const STEP_OBJECT = /opt|optim|scaler|trainer|engine/i;
/** A collection of micro-batches: `micro_batches`, `self.micro_batch_list`, `accum_batches`. */
const MICRO_BATCHES = /micro_?batch|accum\w*batch/i;
/** Values that always have a length. */
const SIZED = /^(list|tuple|list_comprehension)$/;
/** Calls that rescale gradients in place: `multiply_grads`, `p.grad.mul_(c)`, `grad.div_(n)`, `scale_grads`. */
const GRADIENT_RESCALE = /^(multiply_grads|scale_grads|scale_gradients|mul_|div_)$/;

// The verdict's shape lives below both halves of the rule, so the split half never imports this file.
export type { AccumulationVerdict } from './accumulation-types';

export class AccumulationRule implements AccumulationEvidence {
  private readonly split: SplitAccumulation;
  private readonly undivided: UndividedLoss;

  constructor(
    private readonly model: FileModel,
    private readonly losses: LossTracer,
    /** The program's answer for a callable parameter's returned loss; a file analysed alone has none. */
    callbackLoss?: (fn: string, param: string, counts: ReadonlySet<string>) => CallbackLoss,
  ) {
    this.split = new SplitAccumulation(model, losses, this);
    this.undivided = new UndividedLoss(model, callbackLoss);
  }

  private text(n: PyNode): string {
    return this.model.syntax.text(n);
  }

  verdicts(): AccumulationVerdict[] {
    const out: AccumulationVerdict[] = [];
    for (const fn of this.model.functions) {
      for (const site of this.losses.backwardSites(fn)) {
        if (site.kind !== 'backward' || !site.loss) continue;
        const v = this.judge(site, fn);
        // Backward on two branches of one method (fp16 or not) is one missing division, reported once.
        if (v && !(v.fixable === false && out.some((o) => o.site.fn === fn && o.fixable === false))) out.push(v);
      }
    }
    for (const v of this.split.returnedLossVerdicts()) if (!out.some((o) => o.site.call === v.site.call)) out.push(v);
    return out;
  }

  private judge(site: BackwardSite, fn: FunctionInfo): AccumulationVerdict | undefined {
    if (this.backwardScales(site.call)) return undefined;
    // Inside a loop, the loop counts the micro-steps; without one, the function runs once per micro-batch (a
    // trainer's per-batch method) and its own `% K` guard around the step says so.
    const found = this.window(site, fn);
    if (!found) return enclosingLoop(site.call, fn.node) ? undefined : this.split.siblingStep(site, fn);
    const loss = unparen(site.loss!);
    if (!this.undividedMean(loss, fn, site.call.start, found.count)) return undefined;
    // A micro-batch loop's item normalised by a count over all of them reaches the loss through the item only.
    if (found.countText && this.mentionsCollection(fn, site.call.start, found.count)) return undefined;
    if (this.rescalesGradients(fn, site.call.end, found.step)) return undefined;
    return { site, loss, ...found };
  }

  /** The loop or `% K` guard that takes one step per K backward calls around `site`, whatever its loss. */
  window(site: BackwardSite, fn: FunctionInfo): Omit<AccumulationVerdict, 'site' | 'loss'> | undefined {
    const loop = enclosingLoop(site.call, fn.node);
    const body = fn.node.type === 'module' ? fn.node : child(fn.node, 'body');
    return loop
      ? (this.rangeLoop(loop) ?? this.collectionLoop(loop, fn) ?? this.moduloGuard(child(loop, 'body'), site.call.end))
      : this.moduloGuard(body, site.call.end);
  }

  /**
   * The gradients are multiplied or divided between the backward (at `from`) and the step: fairseq-style trainers
   * backpropagate a summed loss and normalise the accumulated gradients once, before the step
   * (`optim.multiply_grads(world_size / sample_size)`, `p.grad.div_(n)`, `scaler.step(opt, scale=...)`), so the loss
   * the rule read is not the whole story.
   */
  rescalesGradients(fn: FunctionInfo, from: number, step: PyNode): boolean {
    const s = this.model.syntax;
    if (s.args(step).keywords.has('scale')) return true;
    const rescales = (n: PyNode) => {
      if (n.type === 'call') return GRADIENT_RESCALE.test(s.calleeName(n)) && !/unscale/.test(s.calleeName(n));
      if (n.type !== 'augmented_assignment' || !/^[*/]/.test(s.operator(n))) return false;
      return /grad/.test(this.text(child(n, 'left') ?? n));
    };
    // A helper that steps (`step_optimizers(...)`) may rescale the gradients before its own step.
    const helper = this.steppingHelper(step);
    if (helper?.nodes.some(rescales)) return true;
    return fn.nodes.some((n) => n.start >= from && n.start <= step.start && rescales(n));
  }

  /**
   * Backward calls that divide by the accumulation count themselves: Accelerate's `accelerator.backward(loss)` when
   * the Accelerator was built with `gradient_accumulation_steps=` (or inside `with accelerator.accumulate(...)`),
   * and a DeepSpeed engine's `backward`, which scales by its own `gradient_accumulation_steps`.
   */
  backwardScales(call: PyNode): boolean {
    const s = this.model.syntax;
    const obj = s.calleeObject(call);
    if (!obj || s.calleeName(call) !== 'backward') return false;
    const objText = this.text(obj).replace(/\s+/g, '');
    if (/engine|deepspeed/i.test(objText)) return true;
    const built = (this.model.assignedValues.get(objText) ?? []).map((v) => unparen(v.value));
    if (
      built.some(
        (v) =>
          v.type === 'call' &&
          (s.args(v).keywords.has('gradient_accumulation_steps') || /deepspeed\.initialize/.test(s.calleeText(v))),
      )
    )
      return true;
    for (let n = call.parent; n; n = n.parent) {
      if (n.type === 'with_statement' && /\.accumulate\(/.test(this.text(n).slice(0, 200).split('\n')[0])) return true;
    }
    return false;
  }

  /** `for micro_step in range(K): ... backward()` with no step inside and a step after the loop. */
  private rangeLoop(loop: PyNode): Omit<AccumulationVerdict, 'site' | 'loss'> | undefined {
    if (loop.type !== 'for_statement') return undefined;
    const right = child(loop, 'right');
    const iter = right ? unparen(right) : undefined;
    if (!iter || iter.type !== 'call' || this.model.syntax.calleeName(iter) !== 'range') return undefined;
    const args = this.model.syntax.args(iter).positional;
    const count = args.length === 1 ? args[0] : undefined;
    if (!count || !ACCUMULATION_NAME.test(this.text(count))) return undefined;
    if (this.stepsIn(child(loop, 'body'))) return undefined;
    const step = this.stepAfter(loop);
    return step ? { count, evidence: loop, step } : undefined;
  }

  /**
   * `for micro_batch in micro_batches: ... backward()` (or over `enumerate(micro_batches)`), a collection named as
   * micro-batches, with no step inside and a step after the loop: K is `len(micro_batches)`. The fix divides by
   * that length only where the collection is built in the function as something with a length (a list, a tuple,
   * `tensor.split(...)`); an iterator has none.
   */
  private collectionLoop(loop: PyNode, fn: FunctionInfo): Omit<AccumulationVerdict, 'site' | 'loss'> | undefined {
    if (loop.type !== 'for_statement') return undefined;
    const right = child(loop, 'right');
    let iter = right ? unparen(right) : undefined;
    if (
      iter?.type === 'call' &&
      this.model.syntax.calleeName(iter) === 'enumerate' &&
      this.model.syntax.args(iter).positional.length === 1
    )
      iter = unparen(this.model.syntax.args(iter).positional[0]);
    if (!iter || (iter.type !== 'identifier' && iter.type !== 'attribute') || !MICRO_BATCHES.test(this.text(iter)))
      return undefined;
    if (this.stepsIn(child(loop, 'body'))) return undefined;
    const step = this.stepAfter(loop);
    if (!step) return undefined;
    const name = this.text(iter).replace(/\s+/g, '');
    const built = fn.assignments.filter(
      (a) =>
        a.type === 'assignment' &&
        a.start < loop.start &&
        this.text(child(a, 'left') ?? a).replace(/\s+/g, '') === name,
    );
    const sized =
      built.length > 0 &&
      built.every(
        (a) =>
          SIZED.test(child(a, 'right')?.type ?? '') ||
          /\.(split|chunk|tensor_split)\(/.test(this.text(child(a, 'right') ?? a)),
      );
    return { count: iter, countText: `len(${name})`, evidence: loop, step, fixable: sized };
  }

  /** `backward()` on every iteration (or call) and `if (i + 1) % K == 0: optimizer.step()` after it (after `from`) in the same block. */
  moduloGuard(body: PyNode | undefined, from: number): Omit<AccumulationVerdict, 'site' | 'loss'> | undefined {
    if (!body) return undefined;
    for (const stmt of named(body)) {
      if (stmt.type !== 'if_statement' || stmt.start < from) continue;
      const condition = child(stmt, 'condition');
      if (!condition) continue;
      const modulo = findModulo(condition);
      const count = modulo ? child(modulo, 'right') : undefined;
      if (!count || !ACCUMULATION_NAME.test(this.text(count))) continue;
      // `== 0` steps inside the branch; `!= 0` skips the step with `continue` and steps after the branch.
      const text = this.text(condition);
      const step =
        /==\s*0|not\b/.test(text) && !/!=/.test(text)
          ? this.stepsIn(child(stmt, 'consequence'))
          : /!=/.test(text)
            ? this.stepAfter(stmt)
            : undefined;
      if (step) return { count, evidence: condition, step };
    }
    return undefined;
  }

  isStep(call: PyNode): boolean {
    const s = this.model.syntax;
    const obj = s.calleeObject(call);
    return (
      STEP_CALL.test(`${s.calleeName(call)}(`) &&
      !!obj &&
      STEP_OBJECT.test(this.text(obj)) &&
      !/sched/i.test(this.text(obj))
    );
  }

  stepsIn(block: PyNode | undefined): PyNode | undefined {
    let found: PyNode | undefined;
    const walk = (n: PyNode): void => {
      if (found || n.type === 'function_definition' || n.type === 'class_definition') return;
      if (n.type === 'call' && (this.isStep(n) || this.steppingHelper(n))) found = n;
      else n.children.forEach(walk);
    };
    if (block) walk(block);
    return found;
  }

  /** A step in the statements that follow `stmt` in its block (the loop or branch that accumulated). */
  stepAfter(stmt: PyNode): PyNode | undefined {
    const block = stmt.parent;
    if (!block) return undefined;
    for (const sibling of named(block)) {
      if (sibling.start <= stmt.start) continue;
      const step = this.stepsIn(sibling);
      if (step) return step;
    }
    return undefined;
  }

  /**
   * Something computed from the whole collection before the backward (`total = sum(mb.ntokens for mb in
   * micro_batches)`), other than building it: a count over all micro-batches that may normalise each loss.
   */
  private mentionsCollection(fn: FunctionInfo, before: number, collection: PyNode): boolean {
    const name = this.text(collection).replace(/\s+/g, '');
    return fn.assignments.some((a) => {
      if (a.start >= before) return false;
      const left = this.text(child(a, 'left') ?? a).replace(/\s+/g, '');
      return (
        left !== name &&
        this.text(child(a, 'right') ?? a)
          .replace(/\s+/g, '')
          .includes(name)
      );
    });
  }

  /** Whether `loss` is a mean that nothing divides by `count` before the backward at `before` (undivided-loss.ts). */
  undividedMean(loss: PyNode, fn: FunctionInfo, before: number, count: PyNode): boolean {
    return this.undivided.undividedMean(loss, fn, before, count);
  }

  /** A function of this file called by name whose body steps an optimizer (`step_optimizers(step, opts)`). */
  steppingHelper(call: PyNode): FunctionInfo | undefined {
    const callee = child(call, 'function');
    if (callee?.type !== 'identifier') return undefined;
    const defs = this.model.byName.get(this.text(callee)) ?? [];
    if (defs.length !== 1 || defs[0].className) return undefined;
    return defs[0].calls.some((c) => this.isStep(c)) ? defs[0] : undefined;
  }
}

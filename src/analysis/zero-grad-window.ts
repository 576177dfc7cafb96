// CP003, an accumulation window cut short by `zero_grad`. A loop that divides each micro-batch's loss by K and steps
// once per K micro-batches means to apply the mean gradient of those K micro-batches. When the gradients are zeroed
// on the stepping micro-batch before its backward (or on every micro-batch), the step sees one micro-batch's
// gradient, still divided by K: the update is 1/K of the intended one and the other K-1 micro-batches are thrown
// away. The rule speaks only where both periods are proven from the code:
// - In one loop: the backward runs on every iteration, the step sits under a `% K` guard (or after a `range(K)`
//   loop), and `zero_grad` of the stepped parameters runs on every iteration (not between the backward and the
//   step), or under a guard that fires on the same iteration as the step's and before the backward. Guards are
//   compared as residues of one counter modulo K: `(i + d) % K == c`, and `c == v` for a counter that cycles through
//   `range(a, a + K)`. The loss is divided by K on every iteration.
// - With Accelerate: `X.zero_grad()`, `accelerator.backward(loss)` and `X.step()`, in that order and unconditional,
//   where the Accelerator was built with `gradient_accumulation_steps=K`. Accelerate's backward divides every loss by
//   K, and its prepared optimizer skips (or runs) `zero_grad` and `step` together, so the step again applies one
//   micro-batch's gradient divided by K.
import { child, named, unparen, visit, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { BackwardSite, LossTracer } from './losses';
import type { AccumulationRule } from './accumulation';
import { enclosingLoop } from './accumulation-syntax';
import { CounterPhases, samePhase } from './zero-grad-phases';

export interface ZeroGradWindowVerdict {
  /** The `zero_grad` call that empties the window before the step. */
  readonly node: PyNode;
  readonly message: string;
  readonly related: readonly { readonly node: PyNode; readonly message: string }[];
}

/** A loop whose `zero_grad` leaves one micro-batch's gradient for each step. */
interface LoopCut {
  readonly loop: PyNode;
  readonly zero: PyNode;
  readonly count: string;
  readonly evidence: PyNode;
  readonly step: PyNode;
  /** When the zeroing runs, as the message says it. */
  readonly why: string;
}

/** Statements and expressions a call may sit in and still run whenever its enclosing block runs. */
const STRAIGHT = new Set([
  'block',
  'expression_statement',
  'with_statement',
  'with_clause',
  'with_item',
  'call',
  'attribute',
  'argument_list',
  'parenthesized_expression',
  'assignment',
  'augmented_assignment',
]);

/**
 * The windows of one file that `zero_grad` cuts short. `verdicts()` reports those whose loss is divided by K;
 * `cuts(site)` also tells the accumulation rule (CP008) that a backward's gradients are not summed over K micro-batches
 * at all, whatever its loss.
 */
export class ZeroGradWindows {
  private readonly cutByCall = new Map<PyNode, LoopCut | undefined>();

  private readonly phases: CounterPhases;

  constructor(
    private readonly model: FileModel,
    private readonly losses: LossTracer,
    private readonly accumulation: AccumulationRule,
  ) {
    this.phases = new CounterPhases(model);
  }

  verdicts(): ZeroGradWindowVerdict[] {
    const out: ZeroGradWindowVerdict[] = [];
    for (const fn of this.model.functions) {
      for (const site of this.losses.backwardSites(fn)) {
        if (site.kind !== 'backward' || !site.loss) continue;
        const v = this.loopVerdict(site, fn) ?? this.acceleratorVerdict(site, fn);
        // Backward on the two branches of `if amp:` is one window, reported once at its `zero_grad`.
        if (v && !out.some((o) => o.node === v.node)) out.push(v);
      }
    }
    return out;
  }

  /** Whether `zero_grad` empties the gradients between this backward's micro-batches and the step. */
  cuts(site: BackwardSite): boolean {
    return this.loopCut(site, site.fn) !== undefined;
  }

  private text(n: PyNode): string {
    return this.model.syntax.text(n).replace(/\s+/g, '');
  }

  private loopVerdict(site: BackwardSite, fn: FunctionInfo): ZeroGradWindowVerdict | undefined {
    const cut = this.loopCut(site, fn);
    const body = cut && child(cut.loop, 'body');
    if (!cut || !body || !this.lossDivided(site, fn, cut.count, body)) return undefined;
    return this.verdict(cut.zero, site, cut.count, cut.evidence, cut.step, cut.why);
  }

  private loopCut(site: BackwardSite, fn: FunctionInfo): LoopCut | undefined {
    if (!this.cutByCall.has(site.call)) this.cutByCall.set(site.call, this.findLoopCut(site, fn));
    return this.cutByCall.get(site.call);
  }

  private findLoopCut(site: BackwardSite, fn: FunctionInfo): LoopCut | undefined {
    const loop = enclosingLoop(site.call, fn.node);
    const body = loop && child(loop, 'body');
    if (!loop || !body || !this.backwardEveryIteration(site.call, body)) return undefined;
    const window = this.accumulation.window(site, fn);
    if (!window || window.countText) return undefined;
    const count = this.text(window.count);
    const stepInside = window.step.start > loop.start && window.step.end <= loop.end;
    if (this.movesGradients(body)) return undefined;
    const stepPhase = stepInside ? this.phases.phase(window.evidence, loop) : undefined;
    if (stepInside && (!stepPhase || stepPhase.count !== count)) return undefined;
    for (const zero of fn.calls) {
      if (this.model.syntax.calleeName(zero) !== 'zero_grad' || enclosingLoop(zero, fn.node) !== loop) continue;
      if (!this.zeroesStepped(zero, window.step)) continue;
      let why: string | undefined;
      if (this.runsWith(zero, body)) {
        // Zeroing between the backward and the step empties the step's gradient altogether: another bug.
        if (zero.start > site.call.end && zero.start < window.step.start) continue;
        if (!stepInside && zero.start > site.call.start) continue;
        why = 'on every micro-batch';
      } else if (stepPhase && zero.start < site.call.start) {
        const guard = this.guardOf(zero, body);
        const phase = guard && this.phases.phase(guard, loop);
        if (!phase || !samePhase(phase, stepPhase)) continue;
        if (this.reassigned(phase.counter, fn, zero.start, window.step.start)) continue;
        why = `on the micro-batch that steps (\`${this.model.syntax.text(guard)}\`), before its backward`;
      }
      if (why) return { loop, zero, count, evidence: window.evidence, step: window.step, why };
    }
    return undefined;
  }

  acceleratorVerdict(site: BackwardSite, fn: FunctionInfo): ZeroGradWindowVerdict | undefined {
    const s = this.model.syntax;
    const accelerator = s.calleeObject(site.call);
    if (!accelerator || s.calleeName(site.call) !== 'backward' || s.args(site.call).positional.length === 0)
      return undefined;
    const count = this.acceleratorCount(this.text(accelerator));
    if (!count) return undefined;
    const loop = enclosingLoop(site.call, fn.node);
    const block = (loop && child(loop, 'body')) ?? (fn.node.type === 'module' ? fn.node : child(fn.node, 'body'));
    if (!block || !this.runsWith(site.call, block) || this.movesGradients(block)) return undefined;
    if (this.mentions(site.loss!, fn, site.call.start, count)) return undefined;
    const inBlock = (c: PyNode) => enclosingLoop(c, fn.node) === loop && this.runsWith(c, block);
    const step = fn.calls.find((c) => c.start > site.call.end && this.accumulation.isStep(c) && inBlock(c));
    if (!step) return undefined;
    const optimizer = this.steppedOptimizer(step);
    if (!optimizer || s.calleeObject(step) === undefined || this.text(s.calleeObject(step)!) !== optimizer)
      return undefined;
    const zero = fn.calls.find(
      (c) =>
        c.start < site.call.start &&
        s.calleeName(c) === 'zero_grad' &&
        s.calleeObject(c) !== undefined &&
        this.text(s.calleeObject(c)!) === optimizer &&
        inBlock(c),
    );
    if (!zero) return undefined;
    // Another backward between the zeroing and the step would put two losses in the window.
    if (
      fn.calls.some(
        (c) => c !== site.call && c.start > zero.end && c.start < step.start && /backward/.test(s.calleeName(c)),
      )
    )
      return undefined;
    const k = s.text(count);
    const message = `\`${s.text(zero)}\` runs before \`${s.text(site.call)}\` on every micro-batch, and \`${s.text(step)}\` follows the backward: Accelerate runs (or skips) the prepared optimizer's \`zero_grad\` and \`step\` together, so (with DDP, FSDP or one GPU, Accelerate's default; DeepSpeed would take over both) each step applies the gradient of one micro-batch, which \`accelerator.backward\` has divided by \`${k}\`. The update is 1/\`${k}\` of the window's mean gradient (the effective learning rate is 1/\`${k}\` of the configured one) and the other micro-batches' gradients are discarded. Zero the gradients after the step instead.`;
    return {
      node: zero,
      message,
      related: [
        { node: site.call, message: `\`accelerator.backward\` divides the loss by \`${k}\`` },
        { node: count, message: `the Accelerator accumulates \`${k}\` micro-batches per step` },
        { node: step, message: 'the step applies one micro-batch’s gradient' },
      ],
    };
  }

  private verdict(
    zero: PyNode,
    site: BackwardSite,
    count: string,
    evidence: PyNode,
    step: PyNode,
    why: string,
  ): ZeroGradWindowVerdict {
    const s = this.model.syntax;
    const message = `\`${s.text(zero)}\` runs ${why}, so each optimizer step applies the gradient of one micro-batch, whose loss was divided by \`${count}\`: the update is 1/\`${count}\` of the mean gradient over the \`${count}\` micro-batches the step is taken for (the effective learning rate is 1/\`${count}\` of the configured one), and the other micro-batches' gradients are discarded. Zero the gradients after the step, or on the first micro-batch of each window.`;
    return {
      node: zero,
      message,
      related: [
        { node: site.call, message: `backward on a loss divided by \`${count}\`` },
        { node: evidence, message: `one optimizer step per \`${count}\` micro-batches` },
        { node: step, message: 'the step applies one micro-batch’s gradient' },
      ],
    };
  }

  /**
   * The backward runs on every iteration of the loop: nothing but blocks and `with` lie between it and the loop's
   * body, or an `if`/`else` whose every branch runs a backward (`scaler.scale(loss).backward()` or `loss.backward()`).
   */
  private backwardEveryIteration(call: PyNode, body: PyNode): boolean {
    for (let n: PyNode | null = call.parent; n && n !== body; n = n.parent) {
      if (STRAIGHT.has(n.type)) continue;
      if (n.type === 'if_statement' && this.everyBranchBackward(n)) continue;
      if (n.type === 'else_clause' || n.type === 'elif_clause') continue;
      return false;
    }
    return true;
  }

  private everyBranchBackward(stmt: PyNode): boolean {
    const branches = [child(stmt, 'consequence')];
    let hasElse = false;
    for (const c of named(stmt)) {
      if (c.type === 'elif_clause') branches.push(child(c, 'consequence'));
      if (c.type === 'else_clause') {
        branches.push(child(c, 'body'));
        hasElse = true;
      }
    }
    const s = this.model.syntax;
    return hasElse && branches.every((b) => !!b && callsIn(b).some((c) => s.calleeName(c) === 'backward'));
  }

  /**
   * Code that reads or keeps gradients itself (`p.grad`, `p.main_grad`, `accum_grads += ...`): a loop that copies
   * each micro-batch's gradient into its own buffer zeroes `.grad` on purpose, so the window is not proven cut.
   */
  private movesGradients(block: PyNode): boolean {
    const s = this.model.syntax;
    let found = false;
    visit(block, (n) => {
      if (found) return false;
      if (n.type === 'attribute' && /^(grad|main_grad)$/.test(s.text(child(n, 'attribute') ?? n))) found = true;
      else if (
        (n.type === 'assignment' || n.type === 'augmented_assignment') &&
        /grad/i.test(s.text(child(n, 'left') ?? n))
      )
        found = true;
      return !found;
    });
    return found;
  }

  /** The call runs whenever `block` runs: only straight-line statements lie between them. */
  private runsWith(call: PyNode, block: PyNode): boolean {
    let n: PyNode | null = call.parent;
    for (; n && n !== block; n = n.parent) if (!STRAIGHT.has(n.type)) return false;
    return n === block;
  }

  /** The condition of the one `if` around `call` (in its consequence), with straight-line code around both. */
  private guardOf(call: PyNode, body: PyNode): PyNode | undefined {
    let guard: PyNode | undefined;
    let from: PyNode = call;
    let n: PyNode | null = call.parent;
    for (; n && n !== body; from = n, n = n.parent) {
      if (STRAIGHT.has(n.type)) continue;
      if (n.type !== 'if_statement' || guard || child(n, 'consequence') !== from) return undefined;
      guard = child(n, 'condition');
    }
    return n === body ? guard : undefined;
  }

  /** Whether the counter is assigned between two offsets of the function (the guards then see different values). */
  private reassigned(counter: string, fn: FunctionInfo, from: number, to: number): boolean {
    return fn.assignments.some(
      (a) =>
        a.start > from &&
        a.start < to &&
        this.text(child(a, 'left') ?? a)
          .split(/[,()]/)
          .includes(counter),
    );
  }

  /**
   * The zeroed parameters are the stepped ones: the same optimizer, or a module the stepped optimizer was built
   * from (`model.zero_grad()` with `optimizer = Adam(model.parameters())` as every assignment of `optimizer`).
   */
  private zeroesStepped(zero: PyNode, step: PyNode): boolean {
    const s = this.model.syntax;
    const object = s.calleeObject(zero);
    const optimizer = this.steppedOptimizer(step);
    if (!object || !optimizer) return false;
    const zeroed = this.text(object);
    if (zeroed === optimizer) return true;
    const built = this.model.assignedValues.get(optimizer) ?? [];
    return (
      built.length > 0 &&
      built.every(({ value }) => {
        const v = unparen(value);
        const first = v.type === 'call' ? s.args(v).positional[0] : undefined;
        return !!first && this.text(first) === `${zeroed}.parameters()`;
      })
    );
  }

  /** `opt` for `opt.step()` and for `scaler.step(opt)`. */
  private steppedOptimizer(step: PyNode): string | undefined {
    const s = this.model.syntax;
    const object = s.calleeObject(step);
    if (!object) return undefined;
    if (/scaler/i.test(s.text(object))) {
      const first = s.args(step).positional[0];
      return first ? this.text(first) : undefined;
    }
    return this.text(object);
  }

  /**
   * The loss given to backward is divided by K on every iteration: in the backward's own argument, or by the last
   * assignment of its name before the backward, which runs whenever the loop's body does.
   */
  private lossDivided(site: BackwardSite, fn: FunctionInfo, count: string, body: PyNode): boolean {
    const s = this.model.syntax;
    const loss = unparen(site.loss!);
    if (dividesBy(loss, count, this.model)) return true;
    if (loss.type !== 'identifier') return false;
    const name = s.text(loss);
    const last = fn.assignments
      .filter((a) => a.start > body.start && a.start < site.call.start && this.text(child(a, 'left') ?? a) === name)
      .pop();
    if (!last || !this.runsWith(last, body)) return false;
    const right = child(last, 'right');
    if (!right) return false;
    if (last.type === 'augmented_assignment') return s.operator(last) === '/=' && this.text(right) === count;
    return dividesBy(unparen(right), count, this.model);
  }

  /** `gradient_accumulation_steps=K` of the Accelerator the backward is called on, where K is not a literal 0 or 1. */
  private acceleratorCount(accelerator: string): PyNode | undefined {
    const s = this.model.syntax;
    const built = (this.model.assignedValues.get(accelerator) ?? []).map((v) => unparen(v.value));
    if (built.length !== 1 || built[0].type !== 'call' || !/Accelerator$/.test(s.calleeText(built[0])))
      return undefined;
    const args = s.args(built[0]);
    // Under DeepSpeed the engine takes over `zero_grad` and the step, so the claim holds only without it: an
    // Accelerator given a DeepSpeed plugin in the code says so. One launched with a DeepSpeed config (`accelerate
    // launch --config_file`, not visible here) is named in the message as the case the finding does not cover.
    if (args.keywords.has('deepspeed_plugin')) return undefined;
    const count = args.keywords.get('gradient_accumulation_steps')?.value;
    const literal = s.numberValue(count);
    if (!count || (literal !== undefined && literal <= 1)) return undefined;
    return count;
  }

  /** Whether the loss, or an assignment of its name before `before`, mentions the count (it may undo the division). */
  private mentions(loss: PyNode, fn: FunctionInfo, before: number, count: PyNode): boolean {
    const name = /(\w+)\W*$/.exec(this.model.syntax.text(count))?.[1];
    if (!name) return true;
    const word = new RegExp(`\\b${name}\\b`);
    if (word.test(this.model.syntax.text(loss))) return true;
    const root = this.model.syntax.text(unparen(loss));
    return fn.assignments.some(
      (a) =>
        a.start < before &&
        this.text(child(a, 'left') ?? a) === root &&
        word.test(this.model.syntax.text(child(a, 'right') ?? a)),
    );
  }
}

/** `x / K` or `(x) / K` at the top of the expression. */
function dividesBy(n: PyNode, count: string, model: FileModel): boolean {
  if (n.type !== 'binary_operator' || model.syntax.operator(n) !== '/') return false;
  const right = child(n, 'right');
  return !!right && model.syntax.text(unparen(right)).replace(/\s+/g, '') === count;
}

function callsIn(block: PyNode): PyNode[] {
  const out: PyNode[] = [];
  const walk = (n: PyNode): void => {
    if (n.type === 'function_definition' || n.type === 'class_definition') return;
    if (n.type === 'call') out.push(n);
    n.children.forEach(walk);
  };
  walk(block);
  return out;
}

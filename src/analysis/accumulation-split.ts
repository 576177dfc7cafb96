// CP008 where the accumulation is split across functions of one file. Trainers rarely keep backward and the step in
// one loop body: a class has a `backward(loss)` method and an `update_params()` method that steps only on every K-th
// call, or a loop calls a helper that runs backward and returns the loss, and divides the value it gets back by K.
// Both are proven here from the code alone, without guessing at what a method does:
// - Methods of one object: a method runs backward on its loss, and a method of the same class steps only once per
//   K calls (a counter taken `% K` that returns early, or a `% K == 0` guard). Nothing in the file divides a value
//   by K, and no call of the backward method passes a scaled loss.
// - A returned loss divided after its backward: `loss = self.step_micro(mb) / n` in a loop of `n` iterations, the
//   step after the loop. The caller's division says the step's loss is the mean of the `n` returned values, but the
//   helper already ran backward on each undivided one, so the gradients are their sum, n times that mean.
import { child, named, unparen, visit, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { BackwardSite, LossTracer } from './losses';
import type { AccumulationEvidence, AccumulationVerdict } from './accumulation-types';
import { ACCUMULATION_NAME, enclosingLoop, findModulo, hasScalingArithmetic } from './accumulation-syntax';

/** A literal argument: `True`, `None`, `3`, `'x'`; it cannot carry a count from the caller. */
const LITERAL = new Set(['true', 'false', 'none', 'integer', 'float', 'string']);
/** Names that may rescale a loss on its way to backward; arithmetic is read from the tree (`scaled`). */
const SCALED = /\bdiv|\bmul|sum|scale|normaliz/;

export class SplitAccumulation {
  constructor(
    private readonly model: FileModel,
    private readonly losses: LossTracer,
    private readonly rule: AccumulationEvidence,
  ) {}

  private text(n: PyNode): string {
    return this.model.syntax.text(n);
  }

  /** A product, quotient or a rescaling call in the expression; the splat in `f(**kwargs)` is not a product. */
  private scaled(n: PyNode): boolean {
    return hasScalingArithmetic(n, this.model.syntax) || SCALED.test(this.text(n));
  }

  /**
   * A backward in a method whose sibling method steps once per K calls. `site` is not inside a loop and its own
   * function has no step guard (the single-function rule looked first).
   */
  siblingStep(site: BackwardSite, fn: FunctionInfo): AccumulationVerdict | undefined {
    const cls = classNode(fn);
    if (!cls || !site.loss) return undefined;
    const classes = this.classAndBases(cls);
    // `self.backward(loss)` calls this file's own wrapper, whose backward is judged inside it.
    if (this.model.resolveCall(site.call)) return undefined;
    if (this.rule.stepsIn(child(fn.node, 'body'))) return undefined;
    for (const sibling of this.model.functions) {
      const owner = classNode(sibling);
      if (sibling === fn || !owner || !classes.has(owner)) continue;
      const gate =
        this.earlyReturnGate(sibling) ?? this.rule.moduloGuard(child(sibling.node, 'body'), sibling.node.start);
      if (!gate || this.rule.rescalesGradients(sibling, sibling.node.start, gate.step)) continue;
      const loss = unparen(site.loss);
      if (this.dividesByCount(gate.count)) return undefined;
      if (
        !this.rule.undividedMean(loss, fn, site.call.start, gate.count) &&
        !this.undividedParameter(loss, fn, site.call.start)
      )
        return undefined;
      return {
        site,
        loss,
        ...gate,
        fixable: false,
        related: [
          {
            node: child(sibling.node, 'name') ?? sibling.node,
            message: `\`${sibling.name}\` takes one optimizer step per \`${this.text(gate.count)}\` calls`,
          },
        ],
      };
    }
    return undefined;
  }

  /** The class and the base classes this file defines (`class Agent(TorchAgent)`), whose methods it inherits. */
  private classAndBases(cls: PyNode): Set<PyNode> {
    const out = new Set<PyNode>();
    const pending = [cls];
    while (pending.length > 0) {
      const c = pending.pop()!;
      if (out.has(c)) continue;
      out.add(c);
      const supers = child(c, 'superclasses');
      for (const base of supers ? named(supers) : []) {
        if (base.type !== 'identifier') continue;
        const name = this.text(base);
        for (const fn of this.model.functions) {
          const owner = classNode(fn);
          if (owner && fn.className === name) pending.push(owner);
        }
      }
    }
    return out;
  }

  /**
   * `n = (n + 1) % K; if n != 0: return` (or `if i % K != 0: return`) followed by an optimizer step: the function
   * steps on one call in K.
   */
  private earlyReturnGate(fn: FunctionInfo): Omit<AccumulationVerdict, 'site' | 'loss'> | undefined {
    for (const stmt of fn.nodes) {
      if (stmt.type !== 'if_statement') continue;
      const body = child(stmt, 'consequence');
      const only = body ? named(body) : [];
      if (only.length !== 1 || only[0].type !== 'return_statement' || child(stmt, 'alternative')) continue;
      const condition = child(stmt, 'condition');
      if (!condition || !/!=\s*0\s*$/.test(this.text(condition))) continue;
      const count = this.countOf(condition, fn);
      if (!count || !ACCUMULATION_NAME.test(this.text(count))) continue;
      const step = fn.calls.find((c) => c.start > stmt.end && this.rule.isStep(c));
      if (step) return { count, evidence: stmt, step };
    }
    return undefined;
  }

  /** K in `x % K != 0`, or in `x != 0` where this function assigned `x = (...) % K`. */
  private countOf(condition: PyNode, fn: FunctionInfo): PyNode | undefined {
    const direct = findModulo(condition);
    if (direct) return child(direct, 'right');
    const left = child(unparen(condition), 'left') ?? named(unparen(condition))[0];
    if (!left) return undefined;
    const counter = this.text(left).replace(/\s+/g, '');
    for (const a of fn.assignments) {
      const target = child(a, 'left');
      const value = child(a, 'right');
      if (a.type !== 'assignment' || !target || !value || a.start > condition.start) continue;
      if (this.text(target).replace(/\s+/g, '') !== counter) continue;
      const modulo = findModulo(value);
      if (modulo) return child(modulo, 'right');
    }
    return undefined;
  }

  /** Anything in the file divided by the count (by its last name, so `self.update_freq` and `update_freq` meet). */
  private dividesByCount(count: PyNode): boolean {
    const name = /(\w+)\W*$/.exec(this.text(count))?.[1];
    if (!name) return true;
    const mentions = new RegExp(`\\b${name}\\b`);
    let found = false;
    visit(this.model.module, (n) => {
      if (found) return false;
      const op = n.type === 'binary_operator' || n.type === 'augmented_assignment' ? this.model.syntax.operator(n) : '';
      if (
        (op === '/' || op === '/=' || op === '//' || op === '//=') &&
        mentions.test(this.text(child(n, 'right') ?? n))
      )
        found = true;
      if (n.type === 'call' && /div|scale/i.test(this.model.syntax.calleeName(n)) && mentions.test(this.text(n)))
        found = true;
      return !found;
    });
    return found;
  }

  /**
   * The loss is the method's own parameter, not rescaled before backward, and every call of the method in this file
   * passes a loss that is not divided, multiplied or summed on the way.
   */
  private undividedParameter(loss: PyNode, fn: FunctionInfo, before: number): boolean {
    if (loss.type !== 'identifier') return false;
    const name = this.text(loss);
    // A caller binds positions after `self`, so the position is counted among the callable parameters.
    const position = this.model.callableParams(fn).findIndex((p) => p.name === name);
    if (position < 0) return false;
    const reassigned = fn.assignments.some(
      (a) => a.start < before && new RegExp(`^\\s*${name}\\s*$`).test(this.text(child(a, 'left') ?? a)),
    );
    if (reassigned) return false;
    const calls = this.model.callSites.get(fn.name) ?? [];
    return calls.every(({ call, caller }) => {
      if (this.model.resolveCall(call) !== fn) return true;
      const arg = this.model.syntax.arg(call, name, position);
      if (!arg || this.scaled(arg)) return false;
      // `loss = loss / k; self.backward(loss)`: the name the caller passes must not have been rescaled either.
      const passed = unparen(arg);
      if (passed.type !== 'identifier') return true;
      const argName = this.text(passed);
      return !caller.assignments.some((a) => {
        if (
          a.start > call.start ||
          !new RegExp(`(^|[\\s,(])${argName}([\\s,)]|$)`).test(this.text(child(a, 'left') ?? a))
        )
          return false;
        return a.type === 'augmented_assignment' || this.scaled(child(a, 'right') ?? a);
      });
    });
  }

  /** Loops that divide, after its backward, the loss a helper of this file returns. */
  returnedLossVerdicts(): AccumulationVerdict[] {
    const out: AccumulationVerdict[] = [];
    for (const caller of this.model.functions) {
      for (const call of caller.calls) {
        const v = this.dividedAfterBackward(call, caller);
        if (v && !out.some((o) => o.site.call === v.site.call)) out.push(v);
      }
    }
    return out;
  }

  private dividedAfterBackward(call: PyNode, caller: FunctionInfo): AccumulationVerdict | undefined {
    const divisor = this.divisorOfResult(call);
    if (!divisor) return undefined;
    const loop = enclosingLoop(call, caller.node);
    if (!loop || !this.iterationsAre(loop, divisor, caller)) return undefined;
    if (this.rule.stepsIn(child(loop, 'body'))) return undefined;
    const step = this.rule.stepAfter(loop);
    if (!step || this.rule.rescalesGradients(caller, loop.end, step)) return undefined;
    const helper = this.model.resolveCall(call);
    if (!helper || helper === caller || this.rule.stepsIn(child(helper.node, 'body'))) return undefined;
    if (!this.argumentsCarryNoCount(call, loop)) return undefined;
    // Something the caller stored on the object before the call could be a count the helper divides by.
    if (caller.assignments.some((a) => a.start < call.start && /^\s*self\./.test(this.text(child(a, 'left') ?? a))))
      return undefined;
    const site = this.returnedBackward(helper, call);
    if (!site) return undefined;
    return {
      site,
      loss: unparen(site.loss!),
      count: divisor,
      evidence: loop,
      step,
      fixable: false,
      related: [
        {
          node: call.parent!,
          message: `the loss \`${helper.name}\` returns is divided by \`${this.text(divisor)}\` only after its backward ran`,
        },
      ],
    };
  }

  /** K in `helper(...) / K`, or in `x = helper(...)` followed in the same block by `x = x / K` or `x /= K`. */
  private divisorOfResult(call: PyNode): PyNode | undefined {
    const parent = call.parent;
    if (
      parent?.type === 'binary_operator' &&
      child(parent, 'left') === call &&
      this.model.syntax.operator(parent) === '/'
    )
      return child(parent, 'right');
    if (parent?.type !== 'assignment' || child(parent, 'right') !== call) return undefined;
    const target = child(parent, 'left');
    const statement = parent.parent;
    const block = statement?.parent;
    if (!target || target.type !== 'identifier' || !block) return undefined;
    const name = this.text(target);
    for (const stmt of named(block)) {
      if (stmt.start <= parent.end) continue;
      const a = named(stmt)[0];
      if (!a || child(a, 'left') === undefined || this.text(child(a, 'left')!) !== name) continue;
      const right = child(a, 'right');
      if (a.type === 'augmented_assignment' && this.model.syntax.operator(a) === '/=') return right;
      if (
        a.type === 'assignment' &&
        right?.type === 'binary_operator' &&
        this.model.syntax.operator(right) === '/' &&
        this.text(child(right, 'left')!) === name
      )
        return child(right, 'right');
      return undefined;
    }
    return undefined;
  }

  /** The loop runs K times: `for _ in range(K)`, or `for mb in batches` where K is `len(batches)`. */
  private iterationsAre(loop: PyNode, count: PyNode, fn: FunctionInfo): boolean {
    if (loop.type !== 'for_statement') return false;
    const right = child(loop, 'right');
    const iter = right ? unparen(right) : undefined;
    if (!iter) return false;
    const s = this.model.syntax;
    const flat = (n: PyNode) => this.text(n).replace(/\s+/g, '');
    if (iter.type === 'call' && s.calleeName(iter) === 'range') {
      const args = s.args(iter).positional;
      return args.length === 1 && flat(args[0]) === flat(count);
    }
    const lengths =
      count.type === 'identifier'
        ? fn.assignments
            .filter((a) => a.type === 'assignment' && flat(child(a, 'left')!) === flat(count))
            .map((a) => child(a, 'right')!)
        : [count];
    if (lengths.length !== 1) return false;
    const length = unparen(lengths[0]);
    return (
      length.type === 'call' &&
      s.calleeName(length) === 'len' &&
      s.args(length).positional.length === 1 &&
      flat(s.args(length).positional[0]) === flat(iter)
    );
  }

  /** Every argument is the loop's own item or a literal: no count or global normaliser reaches the helper. */
  private argumentsCarryNoCount(call: PyNode, loop: PyNode): boolean {
    const left = child(loop, 'left');
    const items = new Set<string>();
    if (left) visit(left, (n) => void (n.type === 'identifier' && items.add(this.text(n))));
    const list = child(call, 'arguments');
    return (list ? named(list) : []).every((a) => {
      const value = a.type === 'keyword_argument' ? child(a, 'value') : a;
      if (!value) return false;
      const v = unparen(value);
      return LITERAL.has(v.type) || (v.type === 'identifier' && items.has(this.text(v)));
    });
  }

  /**
   * The helper's backward on the value it returns, when nothing in the loss's history names a micro-step count, the
   * object's state or the helper's parameters as a divisor, and the call does not turn the backward off.
   */
  private returnedBackward(helper: FunctionInfo, call: PyNode): BackwardSite | undefined {
    const sites = this.losses.backwardSites(helper).filter((s) => s.kind === 'backward' && s.loss);
    if (sites.length !== 1 || this.rule.backwardScales(sites[0].call)) return undefined;
    const site = sites[0];
    const loss = unparen(site.loss!);
    if (loss.type !== 'identifier') return undefined;
    const name = this.text(loss);
    const returned = helper.nodes.filter((n) => n.type === 'return_statement');
    if (returned.length === 0 || !returned.every((r) => named(r).length === 1 && this.text(named(r)[0]) === name))
      return undefined;
    if (ACCUMULATION_NAME.test(this.text(helper.node))) return undefined;
    const params = this.model.callableParams(helper).map((p) => p.name);
    for (const a of helper.assignments) {
      if (a.start > site.call.start || this.text(child(a, 'left') ?? a).trim() !== name) continue;
      if (a.type === 'augmented_assignment') return undefined;
      for (const divisor of this.divisors(child(a, 'right'))) {
        const text = this.text(divisor);
        if (/\bself\b/.test(text) || params.some((p) => new RegExp(`\\b${p}\\b`).test(text))) return undefined;
      }
    }
    // `if do_backward: loss.backward()`: a caller that passes the switch may turn it off.
    const args = this.model.syntax.args(call);
    for (let n = site.call.parent; n && n !== helper.node; n = n.parent) {
      const condition = n.type === 'if_statement' ? child(n, 'condition') : undefined;
      if (
        condition &&
        this.model
          .callableParams(helper)
          .some(
            (p, i) =>
              new RegExp(`\\b${p.name}\\b`).test(this.text(condition)) &&
              (args.keywords.has(p.name) || args.positional.length > i),
          )
      )
        return undefined;
    }
    return site;
  }

  private divisors(n: PyNode | undefined): PyNode[] {
    const out: PyNode[] = [];
    if (n)
      visit(
        n,
        (m) =>
          void (
            m.type === 'binary_operator' &&
            /\/|%/.test(this.model.syntax.operator(m)) &&
            out.push(child(m, 'right')!)
          ),
      );
    return out;
  }
}

/** The class_definition a method belongs to (through a decorator), or undefined for a plain function. */
function classNode(fn: FunctionInfo): PyNode | undefined {
  if (!fn.className || fn.node.type !== 'function_definition') return undefined;
  let n = fn.node.parent;
  if (n?.type === 'decorated_definition') n = n.parent;
  return n?.type === 'block' && n.parent?.type === 'class_definition' ? n.parent : undefined;
}

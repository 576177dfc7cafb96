// The losses a class computes from the output of a weight it marks `sequence_parallel`, and attaches to the graph
// through an autograd Function (`Scaler.apply(activation, loss)`): the gradient of such a loss reaches the marked
// weight. Values derived from `self.<weight>` are followed through the methods of the class and its bases in the
// same file: assignments, returns (`logits = self.gating(x)`) and arguments of `self.<method>(…)` calls, to a fixed
// point. A path through a collective that sums or scatters (anything but the all-gather of the SP slices, whose
// backward reduce-scatter keeps the factor) leaves the class out: the loss may then be a contribution after all.
import { child, named, visit, type PyNode, type Source } from '../tree';
import type { Located } from './expert-facts';

export interface SliceMarker extends Located {
  readonly cls: string;
  /** The marked attribute of `self` (`weight` for `setattr(self.weight, 'sequence_parallel', …)`). */
  readonly attribute: string;
}

/** `L = helper(x, …)` (or `torch.mean(x)`) with `x` derived from the marked weight, then `Scaler.apply(a, L)`. */
export interface AttachedLoss {
  readonly cls: string;
  readonly method: string;
  /** The mean: the helper call (or `torch.mean`/`.mean` itself), where the finding is shown. */
  readonly mean: Located;
  /** The helper's name; undefined when the mean is written in the method. */
  readonly helper?: string;
  readonly loss: string;
  readonly scaler: string;
  /** The position of the loss among `apply`'s arguments, which is the backward's output for it. */
  readonly position: number;
  readonly attach: Located;
  /** The marked attributes of the class and its bases the loss may derive from. */
  readonly weights: readonly string[];
}

interface ClassMethods {
  readonly name: string;
  readonly methods: Map<string, PyNode>;
}

/** Collectives or sizes in the attaching method: the loss is already scaled for the ranks in some way. */
const RANK_AWARE =
  /world_size|parallel_size|tp_size|_group\b|get_\w*group|all_reduce|reduce_scatter|all_gather\b|all_to_all|reduce_from_\w+|scatter_to_\w+/;
/** Collectives on the path from the weight to the loss that would change what the loss is a mean of. */
const PATH_COLLECTIVE = /all_reduce|reduce_scatter|reduce_from_\w+|scatter_to_\w+|all_to_all|(?:^|\.)_?reduce$/;

export class AttachReader {
  private readonly methods = new Map<string, PyNode>();
  private readonly taintedParams = new Map<string, Set<string>>();
  private readonly taintedReturns = new Set<string>();
  private readonly weights: ReadonlySet<string>;

  constructor(
    private readonly source: Source,
    private readonly cls: string,
    hierarchy: readonly ClassMethods[],
    markers: readonly SliceMarker[],
  ) {
    for (const c of hierarchy)
      for (const [name, fn] of c.methods) if (!this.methods.has(name)) this.methods.set(name, fn);
    const names = new Set(hierarchy.map((c) => c.name));
    this.weights = new Set(markers.filter((m) => names.has(m.cls)).map((m) => m.attribute));
  }

  read(): AttachedLoss[] {
    if (this.weights.size === 0) return [];
    this.propagate();
    const out: AttachedLoss[] = [];
    for (const [name, fn] of this.methods) {
      const locals = this.localTaint(name, fn);
      if (locals.crossesCollective) return [];
      for (const a of this.attachesIn(name, fn, locals.names)) out.push(a);
    }
    return out;
  }

  /**
   * Each method of the class and its bases with the names in it derived from the marked weight, after the same
   * propagation `read` runs; empty when no weight is marked or a derived value crosses a collective.
   */
  derivedByMethod(): Map<string, { fn: PyNode; names: ReadonlySet<string> }> {
    const out = new Map<string, { fn: PyNode; names: ReadonlySet<string> }>();
    if (this.weights.size === 0) return out;
    this.propagate();
    for (const [name, fn] of this.methods) {
      const locals = this.localTaint(name, fn);
      if (locals.crossesCollective) return new Map();
      out.set(name, { fn, names: locals.names });
    }
    return out;
  }

  /** The marked attributes of the class and its bases, and whether a name is one of their methods. */
  markedWeights(): string[] {
    return [...this.weights];
  }

  hasMethod(name: string): boolean {
    return this.methods.has(name);
  }

  /** Whether an expression reads the marked weight or a name derived from it (see `derivedByMethod`). */
  isDerived(expr: PyNode, names: ReadonlySet<string>): boolean {
    return this.derived(expr, names);
  }

  private text(n: PyNode): string {
    return this.source.textOf(n).replace(/\s+/g, '');
  }

  private located(n: PyNode): Located {
    return { range: this.source.range(n), line: this.source.lineOf(n), text: this.source.textOf(n) };
  }

  /** Follows the weight's values through returns and `self.<method>(…)` arguments until nothing changes. */
  private propagate(): void {
    for (let round = 0; round < 20; round++) {
      let changed = false;
      for (const [name, fn] of this.methods) {
        const { names } = this.localTaint(name, fn);
        visit(child(fn, 'body')!, (n) => {
          if (n.type === 'function_definition' || n.type === 'lambda') return false;
          if (n.type === 'return_statement') {
            const value = named(n)[0];
            if (value && this.derived(value, names) && !this.taintedReturns.has(name)) {
              this.taintedReturns.add(name);
              changed = true;
            }
          }
          if (n.type === 'call') changed = this.passArguments(n, names) || changed;
        });
      }
      if (!changed) return;
    }
  }

  /** `self.m(a, b=c)`: the parameters of `m` that receive a derived value become derived. */
  private passArguments(call: PyNode, names: ReadonlySet<string>): boolean {
    const callee = /^self\.(\w+)$/.exec(this.text(child(call, 'function')!));
    const target = callee ? this.methods.get(callee[1]) : undefined;
    if (!callee || !target) return false;
    const params = named(child(target, 'parameters')!)
      .map((p) => (p.type === 'identifier' ? p : (child(p, 'name') ?? named(p)[0])))
      .map((p) => (p ? this.text(p) : ''))
      .slice(1);
    const set = this.taintedParams.get(callee[1]) ?? new Set<string>();
    const before = set.size;
    named(child(call, 'arguments')!).forEach((a, i) => {
      if (a.type === 'keyword_argument') {
        const value = child(a, 'value');
        if (value && this.derived(value, names)) set.add(this.text(child(a, 'name')!));
      } else if (this.derived(a, names) && params[i]) set.add(params[i]);
    });
    this.taintedParams.set(callee[1], set);
    return set.size > before;
  }

  /** The method's names derived from the weight, in source order (twice, for loops). */
  private localTaint(name: string, fn: PyNode): { names: Set<string>; crossesCollective: boolean } {
    const names = new Set(this.taintedParams.get(name) ?? []);
    let crossesCollective = false;
    for (let pass = 0; pass < 2; pass++) {
      visit(child(fn, 'body')!, (n) => {
        if (n.type === 'function_definition' || n.type === 'lambda') return false;
        if (n.type === 'call' && PATH_COLLECTIVE.test(this.text(child(n, 'function')!))) {
          const args = child(n, 'arguments');
          if (args && this.derived(args, names)) crossesCollective = true;
        }
        if (n.type !== 'assignment' && n.type !== 'augmented_assignment') return;
        const left = child(n, 'left');
        const right = child(n, 'right');
        if (!left || !right || !this.derived(right, names)) return;
        visit(left, (m) => {
          if (m.type === 'identifier' && m.field !== 'attribute') names.add(this.text(m));
        });
      });
    }
    return { names, crossesCollective };
  }

  /** The expression reads the marked weight, a derived name, or a method whose return is derived. */
  private derived(expr: PyNode, names: ReadonlySet<string>): boolean {
    let found = false;
    visit(expr, (n) => {
      if (found) return false;
      if (n.type === 'attribute') {
        const written = this.text(n);
        const self = /^self\.(\w+)$/.exec(written);
        if (self && this.weights.has(self[1])) found = true;
      }
      if (n.type === 'call') {
        const callee = /^self\.(\w+)$/.exec(this.text(child(n, 'function')!));
        if (callee && this.taintedReturns.has(callee[1])) found = true;
      }
      if (n.type === 'identifier' && isRead(n) && names.has(this.text(n))) found = true;
      return !found;
    });
    return found;
  }

  /** `Scaler.apply(…, loss, …)` with `loss` assigned once in the method from a mean of a derived value. */
  private attachesIn(method: string, fn: PyNode, names: ReadonlySet<string>): AttachedLoss[] {
    if (RANK_AWARE.test(this.source.textOf(fn))) return [];
    const out: AttachedLoss[] = [];
    forEachApplyArgument(
      fn,
      (n) => this.text(n),
      (n, arg, position, scaler) => {
        if (arg.type !== 'identifier') return;
        const mean = this.meanAssigned(fn, this.text(arg), names);
        if (!mean) return;
        out.push({
          cls: this.cls,
          method,
          mean: this.located(mean.call),
          helper: mean.helper,
          loss: this.text(arg),
          scaler,
          position,
          attach: this.located(n),
          weights: [...this.weights],
        });
      },
    );
    return out;
  }

  /**
   * The one assignment of `loss` in the method, `loss = helper(x, …)` (a top-level function, the program must show
   * it to be a token mean) or `loss = torch.mean(x)`, with `x` derived and every other argument a parameter, a
   * literal or an attribute: a local name could hold a coefficient already divided by the ranks.
   */
  private meanAssigned(
    fn: PyNode,
    loss: string,
    names: ReadonlySet<string>,
  ): { call: PyNode; helper?: string } | undefined {
    const assignments: PyNode[] = [];
    const assigned = new Set<string>();
    visit(child(fn, 'body')!, (n) => {
      if (n.type !== 'assignment' && n.type !== 'augmented_assignment') return;
      const left = child(n, 'left');
      if (!left) return;
      visit(left, (m) => {
        if (m.type === 'identifier' && m.field !== 'attribute') assigned.add(this.text(m));
      });
      if (this.text(left) === loss) assignments.push(n);
    });
    if (assignments.length !== 1 || assignments[0].type !== 'assignment') return undefined;
    const call = child(assignments[0], 'right');
    if (!call || call.type !== 'call') return undefined;
    const callee = this.text(child(call, 'function')!);
    const args = named(child(call, 'arguments')!);
    if (!args[0] || args[0].type === 'keyword_argument' || !this.derived(args[0], names)) return undefined;
    const plain = args
      .slice(1)
      .every((a) => !this.mentionsAny(a.type === 'keyword_argument' ? child(a, 'value')! : a, assigned));
    if (!plain) return undefined;
    if (callee === 'torch.mean' && args.length === 1) return { call };
    if (/^\w+$/.test(callee) && !this.methods.has(callee)) return { call, helper: callee };
    return undefined;
  }

  private mentionsAny(expr: PyNode, names: ReadonlySet<string>): boolean {
    let found = false;
    visit(expr, (n) => {
      if (n.type === 'identifier' && n.field !== 'attribute' && names.has(this.text(n))) found = true;
      return !found;
    });
    return found;
  }
}

/** An identifier that reads a name: not the attribute of `a.b`, nor the keyword of `f(k=v)`. */
function isRead(n: PyNode): boolean {
  return n.field !== 'attribute' && !(n.field === 'name' && n.parent?.type === 'keyword_argument');
}

/**
 * Each argument of a `Scaler.apply(…)` call in the body of `fn`, outside nested functions, with its position and the
 * scaler's class name; `self.apply` is a module's method, not an autograd function's, and is skipped.
 */
export function forEachApplyArgument(
  fn: PyNode,
  text: (n: PyNode) => string,
  each: (call: PyNode, arg: PyNode, position: number, scaler: string) => void,
): void {
  visit(child(fn, 'body')!, (n) => {
    if (n.type === 'function_definition' || n.type === 'lambda') return false;
    if (n.type !== 'call') return;
    const apply = /^(\w+(?:\.\w+)*)\.apply$/.exec(text(child(n, 'function')!));
    if (!apply || apply[1] === 'self') return;
    named(child(n, 'arguments')!).forEach((arg, position) => each(n, arg, position, apply[1].split('.').pop()!));
  });
}

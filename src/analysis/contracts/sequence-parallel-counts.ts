// Losses a class attaches to the graph multiplied by a count of this rank's tokens (`Scaler.apply(a, L * n)`), the
// per-token-loss form of the attached losses sequence-parallel-attach.ts reads. Under per-token loss the gradient
// finalisation divides every gradient by the token count summed over the ranks (token-count-finaliser.ts), so an
// attached value `L * n` enters the gradient with the weight n / N: a token-weighted mean of L over every rank whose
// count N sums. What is read here is the attachment's three parts, each from the code in view:
// - the count n: the rows of a value derived from the marked weight (`x.shape[0]`, `x.size(0)`, `len(x)`), which
//   under sequence parallelism are this rank's slice of the tokens (the marker's statement, as in
//   sequence-parallel-slice.ts), directly or through one local assignment; a conditional `p if p is not None else
//   x.shape[0]` (or `(~p).sum()` of a mask parameter `p`) counts the same tokens, since the program offers the two
//   as one count, with and without the padding;
// - the loss L: one assignment `L = helper(x, c, …)` of a top-level function of a derived value, with the coefficient
//   `c` (or L itself) divided by the size of a named process group (`self.tp_cp_group.size()`,
//   `get_tensor_model_parallel_world_size()`): the program's statement that L is one rank's share of a sum over
//   that group;
// - the flag: the attachment is in the body of `if self.F:` (or `self.config.F`), the flag that chooses the count
//   path, which the combination matches with the flag that hands the finaliser its count.
// Any other factor in the product (the fix's `* self.tp_cp_group.size()`), a count of anything else, or a second
// assignment leaves the attachment out: the weight is then not known.
import { child, named, unparen, visit, type PyNode, type Source } from '../tree';
import type { Located } from './expert-facts';
import { forEachApplyArgument, type AttachReader } from './sequence-parallel-attach';

/** The ranks a group's name says it spans: tensor (tp), context (cp), data (dp), pipeline (pp), expert (ep). */
export type RankAxis = 'tp' | 'cp' | 'dp' | 'pp' | 'ep';

export interface CountWeightedLoss {
  readonly cls: string;
  readonly method: string;
  /** The product `L * n`, where the finding is shown. */
  readonly product: Located;
  readonly attach: Located;
  readonly scaler: string;
  readonly position: number;
  readonly loss: string;
  readonly helper: string;
  /** The helper call, for the helper's own related location. */
  readonly mean: Located;
  readonly count: Located;
  /** The group whose size divides the loss, as written, and the ranks its name says it spans. */
  readonly divisor: { readonly written: string; readonly axes: readonly RankAxis[]; readonly at: Located };
  /** The flag of the `if` whose body attaches the product (`calculate_per_token_loss`). */
  readonly flag: string;
  readonly weights: readonly string[];
}

/** The axes a group expression names; undefined when it names none or something else. */
export function groupAxes(written: string): RankAxis[] | undefined {
  const name = written.replace(/\s+/g, '').toLowerCase();
  const axes = new Set<RankAxis>();
  if (/tensor_model_parallel|tensor_parallel|(?:^|[._])tp(?:_|$|\b)|get_tp_/.test(name)) axes.add('tp');
  if (/context_parallel|(?:^|[._])cp(?:_|$|\b)|with_context_parallel=true/.test(name)) axes.add('cp');
  if (/data_parallel|(?:^|[._])dp(?:_|$|\b)/.test(name)) axes.add('dp');
  if (/pipeline_model_parallel|(?:^|[._])pp(?:_|$|\b)/.test(name)) axes.add('pp');
  if (/expert|(?:^|[._])ep(?:_|$|\b)/.test(name)) axes.add('ep');
  if (/with_context_parallel=false/.test(name)) axes.delete('cp');
  return axes.size > 0 ? [...axes] : undefined;
}

/** A group's size: `<group>.size()` on a name or attribute naming a group, or `get_<axes>_world_size(…)`. */
function sizeOfGroup(text: string): { written: string; axes: RankAxis[] } | undefined {
  const size = /^([\w.]*group\w*)\.size\(\)$/.exec(text);
  if (size) {
    const axes = groupAxes(size[1]);
    return axes ? { written: size[1], axes } : undefined;
  }
  const world = /^(?:[\w.]+\.)?get_(\w+)_world_size\(([^()]*)\)$/.exec(text);
  if (!world) return undefined;
  const axes = groupAxes(`${world[1]}(${world[2]})`);
  return axes ? { written: text, axes } : undefined;
}

export class CountAttachReader {
  constructor(
    private readonly source: Source,
    private readonly cls: string,
    private readonly reader: AttachReader,
  ) {}

  read(): CountWeightedLoss[] {
    const out: CountWeightedLoss[] = [];
    for (const [method, { fn, names }] of this.reader.derivedByMethod()) {
      forEachApplyArgument(
        fn,
        (n) => this.text(n),
        (n, arg, position, scaler) => {
          const found = this.weighted(method, fn, n, unparen(arg), names);
          if (found) out.push({ ...found, position, scaler, attach: this.located(n) });
        },
      );
    }
    return out;
  }

  private text(n: PyNode): string {
    return this.source.textOf(n).replace(/\s+/g, '');
  }

  private located(n: PyNode): Located {
    return { range: this.source.range(n), line: this.source.lineOf(n), text: this.source.textOf(n) };
  }

  private weighted(
    method: string,
    fn: PyNode,
    call: PyNode,
    product: PyNode,
    names: ReadonlySet<string>,
  ): Omit<CountWeightedLoss, 'position' | 'scaler' | 'attach'> | undefined {
    if (product.type !== 'binary_operator' || this.text(child(product, 'operator')!) !== '*') return undefined;
    const sides = [unparen(child(product, 'left')!), unparen(child(product, 'right')!)];
    const lossAt = sides.findIndex((s) => s.type === 'identifier' && this.lossOf(fn, s, names));
    if (lossAt < 0) return undefined;
    const loss = this.lossOf(fn, sides[lossAt], names)!;
    const count = sides[1 - lossAt];
    if (!this.sliceCount(fn, count, names)) return undefined;
    const flag = this.guardingFlag(call, fn);
    if (!flag) return undefined;
    return {
      cls: this.cls,
      method,
      product: this.located(product),
      loss: this.text(sides[lossAt]),
      helper: loss.helper,
      mean: this.located(loss.call),
      count: this.located(count.type === 'identifier' ? (this.reaching(fn, this.text(count), count) ?? count) : count),
      divisor: loss.divisor,
      flag,
      weights: this.reader.markedWeights(),
    };
  }

  /**
   * The value the name holds at `use`: the last assignment before it in the method, which must be a plain assignment
   * in a block enclosing the use (so it runs on every path to it); undefined otherwise (unknown).
   */
  private reaching(fn: PyNode, name: string, use: PyNode): PyNode | undefined {
    let last: PyNode | undefined;
    visit(child(fn, 'body')!, (n) => {
      if (n.type === 'function_definition' || n.type === 'lambda') return false;
      if (n.start >= use.start) return false;
      if (n.type !== 'assignment' && n.type !== 'augmented_assignment') return;
      const left = child(n, 'left');
      if (left && this.text(left) === name) last = n;
    });
    if (!last || last.type !== 'assignment') return undefined;
    const block = last.parent?.parent;
    for (let n: PyNode | null = use; n; n = n.parent) if (n === block) return child(last, 'right');
    return undefined;
  }

  /** `L = helper(x, …)` with a derived `x`, and the helper's coefficient or L divided by a group's size. */
  private lossOf(
    fn: PyNode,
    use: PyNode,
    names: ReadonlySet<string>,
  ): { helper: string; call: PyNode; divisor: CountWeightedLoss['divisor'] } | undefined {
    let value = this.reaching(fn, this.text(use), use);
    let divisor: CountWeightedLoss['divisor'] | undefined;
    if (value?.type === 'binary_operator' && this.text(child(value, 'operator')!) === '/') {
      divisor = this.groupSize(child(value, 'right')!);
      value = unparen(child(value, 'left')!);
    }
    if (!value || value.type !== 'call') return undefined;
    const helper = this.text(child(value, 'function')!);
    const args = named(child(value, 'arguments')!);
    if (!/^\w+$/.test(helper) || this.reader.hasMethod(helper)) return undefined;
    if (!args[0] || args[0].type === 'keyword_argument' || !this.reader.isDerived(args[0], names)) return undefined;
    for (const a of args.slice(1)) {
      const v = a.type === 'keyword_argument' ? child(a, 'value')! : a;
      if (v.type !== 'identifier') continue;
      const assigned = this.reaching(fn, this.text(v), value);
      if (assigned?.type === 'binary_operator' && this.text(child(assigned, 'operator')!) === '/') {
        const d = this.groupSize(child(assigned, 'right')!);
        if (d && divisor) return undefined;
        divisor = d ?? divisor;
      }
    }
    return divisor ? { helper, call: value, divisor } : undefined;
  }

  private groupSize(expr: PyNode): CountWeightedLoss['divisor'] | undefined {
    const size = sizeOfGroup(this.text(unparen(expr)));
    return size ? { ...size, at: this.located(expr) } : undefined;
  }

  /** The rows of a derived value, directly, through one assignment, or offered with a parameter as one count. */
  private sliceCount(fn: PyNode, expr: PyNode, names: ReadonlySet<string>, depth = 0): boolean {
    const e = unparen(expr);
    if (e.type === 'identifier' && depth === 0) {
      const value = this.reaching(fn, this.text(e), e);
      return value !== undefined && this.sliceCount(fn, value, names, depth + 1);
    }
    if (e.type === 'conditional_expression') {
      const [whenTrue, condition, whenFalse] = named(e);
      const param = /^(\w+)isnotNone$/.exec(this.text(condition));
      if (!param || !this.isParameter(fn, param[1])) return false;
      return this.rowsOfDerived(whenFalse, names) && this.countOfParameter(whenTrue, param[1]);
    }
    return this.rowsOfDerived(e, names);
  }

  /** `x.shape[0]`, `x.size(0)` or `len(x)` with `x` derived from the marked weight. */
  private rowsOfDerived(expr: PyNode, names: ReadonlySet<string>): boolean {
    const written = this.text(unparen(expr));
    const rows = /^(\w+)\.shape\[0\]$|^(\w+)\.size\(0\)$|^len\((\w+)\)$/.exec(written);
    const subject = rows ? (rows[1] ?? rows[2] ?? rows[3]) : undefined;
    return subject !== undefined && names.has(subject);
  }

  /** The parameter itself, or the count of a mask parameter's kept (`(~p).sum()`) or set (`p.sum()`) entries. */
  private countOfParameter(expr: PyNode, param: string): boolean {
    const written = this.text(unparen(expr));
    return written === param || written === `(~${param}).sum()` || written === `${param}.sum()`;
  }

  private isParameter(fn: PyNode, name: string): boolean {
    return named(child(fn, 'parameters')!).some((p) => {
      const id = p.type === 'identifier' ? p : (child(p, 'name') ?? named(p)[0]);
      return id !== undefined && this.text(id) === name;
    });
  }

  /** The flag `F` of the nearest enclosing `if self.F:` / `if self.config.F:` whose body holds the call. */
  private guardingFlag(call: PyNode, fn: PyNode): string | undefined {
    for (let n: PyNode | null = call.parent; n && n !== fn; n = n.parent) {
      if (n.type !== 'block' || n.parent?.type !== 'if_statement') continue;
      if (child(n.parent, 'consequence') !== n) return undefined;
      const flag = /^self\.(?:config\.)?(\w+)$/.exec(this.text(child(n.parent, 'condition')!));
      return flag ? flag[1] : undefined;
    }
    return undefined;
  }
}

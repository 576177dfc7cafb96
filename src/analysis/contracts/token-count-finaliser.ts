// The gradient finalisation of per-token loss: a function that sums a token count over a group of ranks and
// divides every gradient by it, and the call that hands it the count under a flag. Megatron's
// `finalize_model_grads(model, num_tokens, …)` all-reduces `num_tokens` over the data-parallel (with context-parallel)
// group and runs `model_chunk.scale_gradients(1.0 / num_tokens)`; the schedule calls it through
// `config.finalize_model_grads_func([model], total_num_tokens if config.calculate_per_token_loss else None, …)`, and
// the training script sets `config.finalize_model_grads_func = finalize_model_grads`. Read from the syntax tree:
// - a finaliser: a top-level function with a parameter `n` that it all-reduces (default or SUM op) over a group whose
//   every assignment in the function names the same ranks (token-count axes, sequence-parallel-counts.ts), never
//   reassigns, and whose reciprocal (`1.0 / n`, through one `clamp` of it) scales the gradients
//   (`.scale_gradients(s)`, or `.mul_(s)` on a `.grad`/`.main_grad`);
// - a hand-off: a call with a positional argument `c if x.F else None`, the count chosen by the flag F;
// - which attribute a function is stored in (`cfg.A = f`), so the hand-off's callee `cfg.A` can be matched with `f`.
import type { Parser } from 'web-tree-sitter';
import { parseModule } from '../parse';
import { child, named, unparen, visit, type PyNode, type Source } from '../tree';
import type { Located } from './expert-facts';
import { groupAxes, type RankAxis } from './sequence-parallel-counts';

export interface CountFinaliser {
  readonly name: string;
  /** The count parameter and its position among the parameters. */
  readonly param: string;
  readonly position: number;
  /** The ranks the count is summed over, as the group's name says. */
  readonly axes: readonly RankAxis[];
  readonly reduce: Located;
  readonly scale: Located;
}

export interface CountHandoff {
  /** The callee's last name (`finalize_model_grads_func` of `config.finalize_model_grads_func(…)`). */
  readonly callee: string;
  readonly position: number;
  readonly flag: string;
  readonly at: Located;
}

export interface CountFacts {
  readonly finalisers: readonly CountFinaliser[];
  readonly handoffs: readonly CountHandoff[];
}

const PARSE_BUDGET_MS = 5_000;

/** The text may define a finaliser or hand a flag-chosen count to one. */
export function mayConcernCounts(text: string): boolean {
  return (/all_reduce/.test(text) && /scale_gradients|\.mul_\(/.test(text)) || /\belse\s+None\b/.test(text);
}

/** `x.A = f` assignments of a bare name to an attribute, by attribute: where a program stores a function. */
export function storedFunctions(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^[ \t]*[\w.]+\.(\w+)[ \t]*=[ \t]*([A-Za-z_]\w*)[ \t]*$/gm)) out.set(m[1], m[2]);
  return out;
}

export function readCountFacts(parser: Parser, text: string): CountFacts | undefined {
  const parsed = parseModule(parser, text, PARSE_BUDGET_MS, Number.POSITIVE_INFINITY);
  if (!('module' in parsed)) return undefined;
  const reader = new CountReader(parsed.source);
  const finalisers: CountFinaliser[] = [];
  for (const stmt of named(parsed.module)) {
    const def = stmt.type === 'decorated_definition' ? child(stmt, 'definition') : stmt;
    if (def?.type !== 'function_definition') continue;
    const found = reader.finaliser(def);
    if (found) finalisers.push(found);
  }
  return { finalisers, handoffs: reader.handoffs(parsed.module) };
}

class CountReader {
  constructor(private readonly source: Source) {}

  private text(n: PyNode): string {
    return this.source.textOf(n).replace(/\s+/g, '');
  }

  private located(n: PyNode): Located {
    return { range: this.source.range(n), line: this.source.lineOf(n), text: this.source.textOf(n) };
  }

  finaliser(def: PyNode): CountFinaliser | undefined {
    const params = named(child(def, 'parameters')!).map((p) => {
      const id = p.type === 'identifier' ? p : (child(p, 'name') ?? named(p)[0]);
      return id ? this.text(id) : '';
    });
    for (const [position, param] of params.entries()) {
      if (!param || this.assignments(def, param).length > 0) continue;
      const reduce = this.reduction(def, param);
      const scale = reduce && this.scaling(def, param);
      if (reduce && scale)
        return { name: this.text(child(def, 'name')!), param, position, axes: reduce.axes, reduce: reduce.at, scale };
    }
    return undefined;
  }

  /** Every assignment in the function whose left side is the name. */
  private assignments(def: PyNode, name: string): PyNode[] {
    const out: PyNode[] = [];
    visit(child(def, 'body')!, (n) => {
      if (n.type === 'function_definition' || n.type === 'lambda') return false;
      if (n.type !== 'assignment' && n.type !== 'augmented_assignment') return;
      const left = child(n, 'left');
      if (left && this.text(left) === name) out.push(n);
    });
    return out;
  }

  /** The one `all_reduce(n, group=G)` with the default or SUM op, and the ranks G names in every assignment. */
  private reduction(def: PyNode, param: string): { axes: RankAxis[]; at: Located } | undefined {
    const calls: PyNode[] = [];
    visit(child(def, 'body')!, (n) => {
      if (n.type !== 'call' || !/(?:^|\.)all_reduce$/.test(this.text(child(n, 'function')!))) return;
      const first = named(child(n, 'arguments')!)[0];
      if (first && this.text(first) === param) calls.push(n);
    });
    if (calls.length !== 1) return undefined;
    const args = named(child(calls[0], 'arguments')!);
    const keyword = (k: string) =>
      args.find((a) => a.type === 'keyword_argument' && this.text(child(a, 'name')!) === k);
    const op = keyword('op');
    if (op && !/(?:^|\.)SUM$/.test(this.text(child(op, 'value')!))) return undefined;
    const group = keyword('group');
    if (!group) return undefined;
    const value = unparen(child(group, 'value')!);
    const written =
      value.type === 'identifier'
        ? this.assignments(def, this.text(value)).map((a) => (a.type === 'assignment' ? child(a, 'right') : undefined))
        : [value];
    const axes = written.map((w) => (w ? groupAxes(this.text(w)) : undefined));
    if (axes.length === 0 || axes.some((a) => !a)) return undefined;
    const key = (a: readonly RankAxis[]) => [...a].sort().join();
    if (new Set(axes.map((a) => key(a!))).size !== 1 || !axes[0]!.includes('dp')) return undefined;
    const order: RankAxis[] = ['tp', 'cp', 'dp', 'pp', 'ep'];
    return { axes: order.filter((a) => axes[0]!.includes(a)), at: this.located(calls[0]) };
  }

  /** The gradients scaled by the count's reciprocal: `s = 1.0 / n` (or of one `clamp` of n), then `.scale_gradients(s)`. */
  private scaling(def: PyNode, param: string): Located | undefined {
    const counts = new Set([param]);
    for (const name of this.assignedNames(def)) {
      const right = this.onlyRight(def, name);
      if (right && new RegExp(`^(?:torch\\.clamp\\(${param}[,)]|${param}\\.clamp\\()`).test(this.text(right)))
        counts.add(name);
    }
    const reciprocal = (e: PyNode): boolean => {
      const u = unparen(e);
      if (u.type !== 'binary_operator' || this.text(child(u, 'operator')!) !== '/') return false;
      return /^1(?:\.0?)?$/.test(this.text(child(u, 'left')!)) && counts.has(this.text(unparen(child(u, 'right')!)));
    };
    const scales = new Set<string>();
    for (const name of this.assignedNames(def)) {
      const right = this.onlyRight(def, name);
      if (right && reciprocal(right)) scales.add(name);
    }
    let found: Located | undefined;
    visit(child(def, 'body')!, (n) => {
      if (found || n.type !== 'call') return;
      const callee = this.text(child(n, 'function')!);
      const args = named(child(n, 'arguments')!);
      if (args.length !== 1) return;
      const scaled = scales.has(this.text(args[0])) || reciprocal(args[0]);
      if (scaled && (/\.scale_gradients$/.test(callee) || /\.(?:main_)?grad(?:\.data)?\.mul_$/.test(callee)))
        found = this.located(n);
    });
    return found;
  }

  private assignedNames(def: PyNode): Set<string> {
    const out = new Set<string>();
    visit(child(def, 'body')!, (n) => {
      if (n.type !== 'assignment') return;
      const left = child(n, 'left');
      if (left?.type === 'identifier') out.add(this.text(left));
    });
    return out;
  }

  private onlyRight(def: PyNode, name: string): PyNode | undefined {
    const all = this.assignments(def, name);
    return all.length === 1 && all[0].type === 'assignment' ? child(all[0], 'right') : undefined;
  }

  /** Calls passing `c if x.F else None` positionally: the count chosen by the flag F. */
  handoffs(module: PyNode): CountHandoff[] {
    const out: CountHandoff[] = [];
    visit(module, (n) => {
      if (n.type !== 'call') return;
      const callee = /(\w+)$/.exec(this.text(child(n, 'function')!));
      named(child(n, 'arguments')!).forEach((a, position) => {
        const e = unparen(a);
        if (!callee || e.type !== 'conditional_expression') return;
        const [, condition, otherwise] = named(e);
        const flag = /^[\w.]*\.(\w+)$/.exec(this.text(condition));
        if (flag && this.text(otherwise) === 'None')
          out.push({ callee: callee[1], position, flag: flag[1], at: this.located(n) });
      });
    });
    return out;
  }
}

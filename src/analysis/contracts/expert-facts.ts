// What one file says about Megatron's expert-parallel gradients, read from the syntax tree alone (cached per text,
// combined across files by expert-gradients.ts). Megatron marks the weights of expert-parallel layers with
// `setattr(weight, 'allreduce', not (is_expert and expert_parallel))`; its data-parallel wrapper keeps those
// parameters out of the averaged gradient buffers and selects them again by `not getattr(param, 'allreduce', True)`.
// The facts are: where the marker is set, which collectives move tokens over a group named expert-parallel (the
// MoE dispatch), where a class collects the selected parameters' gradients into a list of its own and every other
// use of that list, which functions select expert parameters and scale something, and whether `main_grad`
// accumulates the backward's `.grad` (so that it is the gradient the optimizer reads).
import type { Parser } from 'web-tree-sitter';
import { parseModule } from '../parse';
import { child, named, statementOf, unparen, visit, type PyNode, type Source } from '../tree';
import type { SourceRange } from '../types';

export interface Located {
  readonly range: SourceRange;
  /** 0-based. */
  readonly line: number;
  readonly text: string;
}

/** `self.<list>.append(p.main_grad)` for the parameters `p` a loop selects by `not getattr(p, 'allreduce', True)`. */
export interface ExpertGradList {
  readonly cls: string;
  readonly list: string;
  readonly field: 'main_grad' | 'grad';
  readonly site: Located;
  /** Uses of `self.<list>` other than the append and loops that only zero its elements. */
  readonly otherUses: readonly Located[];
  /** A scaling inside the block that selects the expert parameters. */
  readonly scaledInBlock: boolean;
  /** How many `self.<list>` the class holds (all of them); more `.<list>` in the program are uses elsewhere. */
  readonly mentions: number;
  /**
   * The one other use, when it is `for g in self.<list>: g /= self.<size>` with the size written once in the class
   * as the data-parallel group's (`get_world_size(group=data_parallel_group)`): the wrapper's division to the mean.
   */
  readonly dividedByDataParallel?: Located;
}

export interface ExpertFacts {
  readonly markers: readonly Located[];
  readonly dispatches: readonly Located[];
  readonly lists: readonly ExpertGradList[];
  /** Functions that select parameters by their `allreduce` attribute and scale, divide or average something. */
  readonly scalings: readonly Located[];
  readonly accumulatesMainGrad: boolean;
}

const PARSE_BUDGET_MS = 5_000;
const FILTER = /^getattr\((\w+),(['"])allreduce\2,True\)$/;
const DISPATCH = /(?:^|\.)(all_to_all|all_to_all_single|_all_gather_base|all_gather_into_tensor|all_gather)$/;
/** The data-parallel group's size, through torch or Megatron's getter. */
const DATA_PARALLEL_SIZE =
  /^(?:torch\.distributed\.|dist\.)?get_world_size\(group=\w*data_parallel\w*\)$|get_data_parallel_world_size\([\w=]*\)$/;
const SCALING_CALL =
  /(?:^|\.)(div_|mul_|div|mul|true_divide_|_foreach_div_|_foreach_mul_|_foreach_div|_foreach_mul|scale_)$/;

/** Files worth parsing: they name the `allreduce` attribute, or an expert group next to a token collective. */
export function mayConcernExperts(text: string): boolean {
  return /['"]allreduce['"]/.test(text) || (/expert/.test(text) && /all_to_all|all_gather/.test(text));
}

export function readExpertFacts(parser: Parser, text: string): ExpertFacts | undefined {
  if (!mayConcernExperts(text)) return undefined;
  const parsed = parseModule(parser, text, PARSE_BUDGET_MS, Number.POSITIVE_INFINITY);
  if (!('module' in parsed)) return undefined;
  return new ExpertReader(parsed.module, parsed.source).read();
}

class ExpertReader {
  private readonly markers: Located[] = [];
  private readonly dispatches: Located[] = [];
  private readonly lists: ExpertGradList[] = [];
  private readonly scalings: Located[] = [];
  private accumulatesMainGrad = false;

  constructor(
    private readonly module: PyNode,
    private readonly source: Source,
  ) {}

  read(): ExpertFacts {
    visit(this.module, (n) => {
      if (n.type === 'call') this.readCall(n);
      if (n.type === 'function_definition') this.readFunction(n);
      if (n.type === 'class_definition') this.readClass(n);
    });
    return {
      markers: this.markers,
      dispatches: this.dispatches,
      lists: this.lists,
      scalings: this.scalings,
      accumulatesMainGrad: this.accumulatesMainGrad,
    };
  }

  private text(n: PyNode): string {
    return this.source.textOf(n).replace(/\s+/g, '');
  }

  private located(n: PyNode): Located {
    return { range: this.source.range(n), line: this.source.lineOf(n), text: this.source.textOf(n) };
  }

  private args(call: PyNode): PyNode[] {
    const list = child(call, 'arguments');
    return list ? named(list) : [];
  }

  private readCall(call: PyNode): void {
    const callee = this.text(child(call, 'function') ?? call);
    const args = this.args(call);
    // Megatron's marker: the value names the layer's expert flag, so the attribute is false for expert weights.
    if (callee === 'setattr' && args.length === 3 && /^['"]allreduce['"]$/.test(this.text(args[1]))) {
      if (/expert/i.test(this.text(args[2]))) this.markers.push(this.located(call));
    }
    if (DISPATCH.test(callee) && this.groupNamesExperts(call, args)) this.dispatches.push(this.located(call));
    // `p.main_grad.add_(p.grad…)`: the hook that accumulates the backward's gradient into main_grad.
    if (/\.main_grad\.add_$/.test(callee) && args.length > 0 && /\.grad\b/.test(this.text(args[0]))) {
      this.accumulatesMainGrad = true;
    }
  }

  /** The `group=` argument names an expert group, directly or through a name assigned once in the function. */
  private groupNamesExperts(call: PyNode, args: readonly PyNode[]): boolean {
    const keyword = args.find((a) => a.type === 'keyword_argument' && this.text(child(a, 'name')!) === 'group');
    const value = keyword ? child(keyword, 'value') : undefined;
    if (!value) return false;
    const written = this.text(value);
    if (/expert/i.test(written)) return true;
    if (value.type !== 'identifier') return false;
    const fn = enclosing(call, 'function_definition');
    if (!fn) return false;
    const assigned: string[] = [];
    visit(fn, (n) => {
      if (n.type === 'assignment' && this.text(child(n, 'left') ?? n) === written) {
        assigned.push(this.text(child(n, 'right') ?? n));
      }
    });
    return assigned.length === 1 && /expert/i.test(assigned[0]);
  }

  /** A function that selects parameters by the attribute and scales anything: the expert gradients may be divided. */
  private readFunction(fn: PyNode): void {
    let selects = false;
    visit(fn, (n) => {
      if (n !== fn && (n.type === 'function_definition' || n.type === 'class_definition')) return false;
      if (n.type === 'call' && FILTER.test(this.text(n))) selects = true;
    });
    if (!selects) return;
    const scaling = this.firstScaling(fn);
    if (scaling) this.scalings.push(this.located(scaling));
  }

  /**
   * An in-place division or multiplication, a scaling call, an average, or a `/` or `*` on a gradient: any of these
   * may divide the expert gradients, so the rule stays silent.
   */
  private firstScaling(root: PyNode): PyNode | undefined {
    let found: PyNode | undefined;
    visit(root, (n) => {
      if (found) return false;
      if (n !== root && (n.type === 'function_definition' || n.type === 'class_definition')) return false;
      const op = n.children.find((c) => c.field === 'operator');
      const operator = op ? this.source.textOf(op) : '';
      if (n.type === 'augmented_assignment' && /^[*/]/.test(operator)) found = n;
      else if (n.type === 'binary_operator' && /^[*/]$/.test(operator) && /grad/i.test(this.text(n))) found = n;
      else if (n.type === 'call' && SCALING_CALL.test(this.text(child(n, 'function') ?? n))) found = n;
      else if ((n.type === 'attribute' || n.type === 'identifier') && /\bAVG\b|\bAverage\b/.test(this.text(n)))
        found = n;
      return undefined;
    });
    return found;
  }

  private readClass(cls: PyNode): void {
    const name = this.text(child(cls, 'name') ?? cls);
    const body = child(cls, 'body');
    if (!body) return;
    const found: { list: string; field: 'main_grad' | 'grad'; site: PyNode; block: PyNode }[] = [];
    visit(body, (n) => {
      if (n.type === 'class_definition') return false;
      if (n.type !== 'for_statement') return undefined;
      const variable = this.loopParameter(n);
      const loopBody = child(n, 'body');
      if (!variable || !loopBody) return undefined;
      for (const statement of named(loopBody)) {
        if (statement.type !== 'if_statement' || !this.selectsExperts(child(statement, 'condition'), variable))
          continue;
        const block = child(statement, 'consequence');
        if (!block) continue;
        visit(block, (m) => {
          const match =
            m.type === 'call' ? /^self\.(\w+)\.append\((\w+)\.(main_grad|grad)\)$/.exec(this.text(m)) : null;
          if (match && match[2] === variable) {
            found.push({ list: match[1], field: match[3] as 'main_grad' | 'grad', site: m, block });
          }
        });
      }
      return undefined;
    });
    for (const f of found) {
      const otherUses = this.otherUses(body, f.list, f.site);
      const division = otherUses.length === 1 ? this.dataParallelDivision(body, f.list) : undefined;
      this.lists.push({
        ...(division ? { dividedByDataParallel: this.located(division) } : {}),
        cls: name,
        list: f.list,
        field: f.field,
        site: this.located(f.site),
        otherUses,
        mentions: this.mentions(body, f.list),
        scaledInBlock: this.firstScaling(f.block) !== undefined,
      });
    }
  }

  /** The loop that divides every element of `self.<list>` by the data-parallel size, if that is all it does. */
  private dataParallelDivision(body: PyNode, list: string): PyNode | undefined {
    const sizes = new Map<string, string[]>();
    visit(body, (n) => {
      if (n.type === 'class_definition') return false;
      const left = n.type === 'assignment' || n.type === 'augmented_assignment' ? child(n, 'left') : undefined;
      const m = left ? /^self\.(\w+)$/.exec(this.text(left)) : null;
      if (m)
        sizes.set(m[1], [...(sizes.get(m[1]) ?? []), n.type === 'assignment' ? this.text(child(n, 'right')!) : '']);
      return undefined;
    });
    let found: PyNode | undefined;
    visit(body, (n) => {
      if (n.type === 'class_definition') return false;
      if (n.type !== 'for_statement' || this.text(child(n, 'right') ?? n) !== `self.${list}`) return undefined;
      const v = this.text(child(n, 'left') ?? n);
      const statements = named(child(n, 'body') ?? n);
      const m = statements.length === 1 ? new RegExp(`^${v}/=self\\.(\\w+)$`).exec(this.text(statements[0])) : null;
      const written = m ? (sizes.get(m[1]) ?? []) : [];
      if (written.length === 1 && DATA_PARALLEL_SIZE.test(written[0]) && !/expert|modulo/i.test(written[0])) found = n;
      return undefined;
    });
    return found;
  }

  /** `for p in m.parameters()` or `for name, p in m.named_parameters()`: the parameter's name. */
  private loopParameter(loop: PyNode): string | undefined {
    const right = this.text(child(loop, 'right') ?? loop);
    const left = child(loop, 'left');
    if (!left) return undefined;
    if (/\.parameters\(\)$/.test(right) && left.type === 'identifier') return this.text(left);
    if (/\.named_parameters\(\)$/.test(right)) {
      const parts = named(unparen(left));
      if (left.type.endsWith('pattern_list') || left.type === 'tuple_pattern') {
        const last = parts[parts.length - 1];
        return parts.length === 2 && last.type === 'identifier' ? this.text(last) : undefined;
      }
    }
    return undefined;
  }

  /** The condition is `not getattr(p, 'allreduce', True)`, alone or in a chain of `and`. */
  private selectsExperts(condition: PyNode | undefined, variable: string): boolean {
    if (!condition) return false;
    const c = unparen(condition);
    if (c.type === 'not_operator') {
      const match = FILTER.exec(this.text(unparen(child(c, 'argument') ?? c)));
      return match !== null && match[1] === variable;
    }
    if (c.type === 'boolean_operator') {
      const op = c.children.find((x) => x.field === 'operator');
      if (!op || this.source.textOf(op) !== 'and') return false;
      return [child(c, 'left'), child(c, 'right')].some((side) => this.selectsExperts(side, variable));
    }
    return false;
  }

  /**
   * Every `self.<list>` of the class other than the append: a loop over it whose body only zeroes the element is
   * harmless (the reset before a step); anything else may scale or hand the gradients on.
   */
  private otherUses(body: PyNode, list: string, site: PyNode): Located[] {
    const out: Located[] = [];
    visit(body, (n) => {
      if (n.type === 'class_definition') return false;
      if (n.type !== 'attribute' || this.text(n) !== `self.${list}`) return undefined;
      if (isWithin(n, site)) return undefined;
      const parent = n.parent;
      if (
        parent?.type === 'assignment' &&
        n.field === 'left' &&
        /^\[\]$|^list\(\)$/.test(this.text(child(parent, 'right') ?? parent))
      ) {
        return undefined;
      }
      if (parent?.type === 'for_statement' && n.field === 'right' && this.onlyZeroes(parent)) return undefined;
      out.push(this.located(statementOf(n)));
      return undefined;
    });
    return out;
  }

  private mentions(body: PyNode, list: string): number {
    let count = 0;
    visit(body, (n) => {
      if (n.type === 'class_definition') return false;
      if (n.type === 'attribute' && this.text(n) === `self.${list}`) count++;
      return undefined;
    });
    return count;
  }

  private onlyZeroes(loop: PyNode): boolean {
    const left = child(loop, 'left');
    const body = child(loop, 'body');
    if (!left || left.type !== 'identifier' || !body) return false;
    const v = this.text(left);
    return named(body).every(
      (s) =>
        s.type === 'expression_statement' &&
        new RegExp(`^${v}\\.(zero_\\(\\)|fill_\\(0(\\.0)?\\))$`).test(this.text(s)),
    );
  }
}

function enclosing(node: PyNode, type: string): PyNode | undefined {
  for (let p = node.parent; p; p = p.parent) if (p.type === type) return p;
  return undefined;
}

function isWithin(node: PyNode, container: PyNode): boolean {
  for (let p: PyNode | null = node; p; p = p.parent) if (p === container) return true;
  return false;
}

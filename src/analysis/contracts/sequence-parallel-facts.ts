// What one file says about Megatron-style sequence parallelism (SP), read from the syntax tree alone and combined
// across files by sequence-parallel-slice.ts. Under SP each tensor-parallel (TP) rank holds a slice of the tokens;
// a weight applied to those slices is marked `setattr(w, 'sequence_parallel', …)` and the gradient finalisation
// SUMs the marked weights' gradients over the TP group, because each rank's gradient is only its slice's
// contribution. The facts are: where a class marks a weight, which functions select the marked parameters and
// all-reduce their gradients over the TP group, which losses a class computes from the marked weight's output and
// attaches to the graph through an autograd Function, which functions return a mean over the tokens of their first
// argument, and which autograd Functions give their attached loss a gradient of one.
import type { Parser } from 'web-tree-sitter';
import { parseModule } from '../parse';
import { child, named, unparen, visit, type PyNode, type Source } from '../tree';
import type { Located } from './expert-facts';
import { AttachReader, type AttachedLoss, type SliceMarker } from './sequence-parallel-attach';
import { CountAttachReader, type CountWeightedLoss } from './sequence-parallel-counts';
import { sumsMarkedThroughZip } from './sequence-parallel-sums';

export type { AttachedLoss, SliceMarker } from './sequence-parallel-attach';

export interface SliceFacts {
  readonly markers: readonly SliceMarker[];
  /** Functions that all-reduce the marked parameters' gradients over the TP group and scale nothing. */
  readonly sums: readonly Located[];
  readonly attaches: readonly AttachedLoss[];
  /** Losses attached multiplied by a count of this rank's slice of the tokens (sequence-parallel-counts.ts). */
  readonly countAttaches: readonly CountWeightedLoss[];
  /** Top-level functions of this file that return a mean over the tokens of their first argument. */
  readonly tokenMeans: ReadonlySet<string>;
  /** Every top-level function name this file defines (a name defined twice must be a token mean everywhere). */
  readonly functions: ReadonlySet<string>;
  /** autograd Functions whose backward returns `ones_like(loss)` (times a scale) for the argument at a position. */
  readonly unitScalers: ReadonlyMap<string, readonly number[]>;
}

const PARSE_BUDGET_MS = 5_000;
const MARK_ATTRIBUTE = /^['"]sequence_parallel['"]$/;
/** Collectives or sizes whose presence means the code already accounts for the ranks in some way. */
const RANK_AWARE =
  /world_size|parallel_size|tp_size|_group\b|get_\w*group|all_reduce|reduce_scatter|all_gather\b|all_to_all|reduce_from_\w+|scatter_to_\w+/;
/** A TP group written the way Megatron and its forks name it. */
const TP_GROUP = /tensor_model_parallel_group|tensor_parallel_group|\btp_group\b|get_tp_group/;
const MEAN_CALL = /(?:^|\.)mean$/;

/** Files worth parsing: they name the attribute, define an autograd Function, or define a function with a mean. */
export function mayConcernSlices(text: string): boolean {
  return /sequence_parallel/.test(text) || /autograd\.Function|\bmean\(/.test(text);
}

export function readSliceFacts(parser: Parser, text: string): SliceFacts | undefined {
  const parsed = parseModule(parser, text, PARSE_BUDGET_MS, Number.POSITIVE_INFINITY);
  if (!('module' in parsed)) return undefined;
  return new SliceReader(parsed.module, parsed.source).read();
}

interface ClassInfo {
  readonly name: string;
  readonly bases: readonly string[];
  readonly methods: Map<string, PyNode>;
}

class SliceReader {
  private readonly markers: SliceMarker[] = [];
  private readonly sums: Located[] = [];
  private readonly attaches: AttachedLoss[] = [];
  private readonly countAttaches: CountWeightedLoss[] = [];
  private readonly tokenMeans = new Set<string>();
  private readonly functions = new Set<string>();
  private readonly unitScalers = new Map<string, number[]>();
  private readonly classes = new Map<string, ClassInfo>();

  constructor(
    private readonly module: PyNode,
    private readonly source: Source,
  ) {}

  read(): SliceFacts {
    for (const stmt of named(this.module)) {
      const def = stmt.type === 'decorated_definition' ? child(stmt, 'definition') : stmt;
      if (def?.type === 'function_definition') this.readFunction(def);
      if (def?.type === 'class_definition') this.readClass(def);
    }
    for (const cls of this.classes.values()) this.readAttaches(cls);
    return {
      markers: this.markers,
      sums: this.sums,
      attaches: this.attaches,
      countAttaches: this.countAttaches,
      tokenMeans: this.tokenMeans,
      functions: this.functions,
      unitScalers: this.unitScalers,
    };
  }

  private text(n: PyNode): string {
    return this.source.textOf(n).replace(/\s+/g, '');
  }

  private located(n: PyNode): Located {
    return { range: this.source.range(n), line: this.source.lineOf(n), text: this.source.textOf(n) };
  }

  private readFunction(def: PyNode): void {
    const name = this.text(child(def, 'name')!);
    this.functions.add(name);
    if (this.returnsTokenMean(def)) this.tokenMeans.add(name);
    if (this.sumsMarkedGradients(def) || sumsMarkedThroughZip(this.source, def))
      this.sums.push(this.located(child(def, 'name')!));
  }

  private readClass(def: PyNode): void {
    const name = this.text(child(def, 'name')!);
    const list = child(def, 'superclasses');
    const bases = (list ? named(list) : []).map((b) => this.text(b));
    const methods = new Map<string, PyNode>();
    const body = child(def, 'body');
    for (const stmt of body ? named(body) : []) {
      const fn = stmt.type === 'decorated_definition' ? child(stmt, 'definition') : stmt;
      if (fn?.type === 'function_definition') methods.set(this.text(child(fn, 'name')!), fn);
    }
    this.classes.set(name, { name, bases, methods });
    for (const fn of methods.values()) {
      visit(fn, (n) => {
        if (n.type === 'call') this.readMarker(name, n);
      });
      if (this.sumsMarkedGradients(fn)) this.sums.push(this.located(child(fn, 'name')!));
    }
    if (bases.some((b) => /(?:^|\.)autograd\.Function$|^Function$/.test(b))) {
      const backward = methods.get('backward');
      if (backward) this.readUnitScaler(name, backward);
    }
  }

  /** `setattr(self.w, 'sequence_parallel', v)` with `v` not written as False. */
  private readMarker(cls: string, call: PyNode): void {
    if (this.text(child(call, 'function')!) !== 'setattr') return;
    const args = named(child(call, 'arguments')!);
    if (args.length !== 3 || !MARK_ATTRIBUTE.test(this.text(args[1]))) return;
    const target = /^self\.(\w+)$/.exec(this.text(args[0]));
    if (!target || /^(False|None|0)$/.test(this.text(args[2]))) return;
    this.markers.push({ ...this.located(call), cls, attribute: target[1] });
  }

  /**
   * A function that selects parameters by `getattr(p, 'sequence_parallel', …)` (or `p.sequence_parallel`), reads a
   * gradient (`.grad`, `.main_grad`), all-reduces over a group named tensor-parallel with the default SUM, and
   * scales nothing: a division there would make the sum something else.
   */
  private sumsMarkedGradients(fn: PyNode): boolean {
    const written = this.source.textOf(fn);
    if (!/['"]sequence_parallel['"]|\.sequence_parallel\b/.test(written)) return false;
    if (!/\.(main_)?grad\b/.test(written)) return false;
    if (/\bop\s*=|\/|\bdiv_?\(|\bmul_?\(|\bscale\w*\(|\bmean\(/.test(written.replace(/#.*$/gm, ''))) return false;
    let sums = false;
    visit(fn, (n) => {
      if (n.type !== 'call' || !/(?:^|\.)all_reduce$/.test(this.text(child(n, 'function')!))) return;
      const group = named(child(n, 'arguments')!).find(
        (a) => a.type === 'keyword_argument' && this.text(child(a, 'name')!) === 'group',
      );
      const value = group ? child(group, 'value') : undefined;
      if (value && (TP_GROUP.test(this.text(value)) || this.assignedTpGroup(fn, this.text(value)))) sums = true;
    });
    return sums;
  }

  /** `name` is assigned, in the function, a value that names the TP group. */
  private assignedTpGroup(fn: PyNode, name: string): boolean {
    if (!/^\w+$/.test(name)) return false;
    let found = false;
    visit(fn, (n) => {
      if (n.type !== 'assignment') return;
      const left = child(n, 'left');
      const right = child(n, 'right');
      if (left && right && this.text(left) === name && TP_GROUP.test(this.text(right))) found = true;
    });
    return found;
  }

  /**
   * `def f(x, …)` whose returned value is derived from a mean over the tokens of `x` (`torch.mean(…x…)`, `x.mean()`,
   * `.mean(dim=0)`/`.mean(0)`) and which names no collective, group or size: a mean over the tokens it was given.
   */
  private returnsTokenMean(def: PyNode): boolean {
    const params = child(def, 'parameters');
    // The first parameter, plain or annotated (`logits: torch.Tensor`).
    const param = params ? named(params)[0] : undefined;
    const first = param?.type === 'typed_parameter' ? named(param)[0] : param;
    if (!first || first.type !== 'identifier') return false;
    const body = child(def, 'body');
    if (!body || RANK_AWARE.test(this.source.textOf(body))) return false;
    const derived = new Set([this.text(first)]);
    const meaned = new Set<string>();
    let returns = false;
    visit(body, (n) => {
      if (n.type === 'function_definition' || n.type === 'lambda') return false;
      if (n.type === 'assignment' || n.type === 'augmented_assignment') {
        const left = child(n, 'left');
        const right = child(n, 'right');
        if (!left || !right || left.type !== 'identifier') return;
        const name = this.text(left);
        if (this.mentions(right, meaned) || this.hasTokenMean(right, derived)) meaned.add(name);
        if (this.mentions(right, derived)) derived.add(name);
      }
      if (n.type === 'return_statement') {
        const value = named(n)[0];
        if (value && (this.mentions(value, meaned) || this.hasTokenMean(value, derived))) returns = true;
        else return false;
      }
    });
    return returns;
  }

  /** The expression holds a mean over the token dimension (or over every element) of a derived value. */
  private hasTokenMean(expr: PyNode, derived: ReadonlySet<string>): boolean {
    let found = false;
    visit(expr, (n) => {
      if (n.type !== 'call') return;
      const callee = child(n, 'function')!;
      if (!MEAN_CALL.test(this.text(callee))) return;
      const args = named(child(n, 'arguments')!);
      const object = callee.type === 'attribute' ? child(callee, 'object') : undefined;
      const isTorch = object !== undefined && /^(torch|th)$/.test(this.text(object));
      const subject = isTorch ? args[0] : object;
      const dims = isTorch ? args.slice(1) : args;
      if (!subject || !this.mentions(subject, derived)) return;
      if (dims.every((d) => /^(?:dim=)?0$/.test(this.text(d)))) found = true;
    });
    return found;
  }

  private mentions(expr: PyNode, names: ReadonlySet<string>): boolean {
    if (names.size === 0) return false;
    let found = false;
    visit(expr, (n) => {
      if (n.type === 'identifier' && names.has(this.text(n)) && n.field !== 'attribute') found = true;
      return !found;
    });
    return found;
  }

  /** The backward's return for each position: `torch.ones_like(v)`, possibly times a scale, directly or by name. */
  private readUnitScaler(name: string, backward: PyNode): void {
    const body = child(backward, 'body');
    if (!body) return;
    const returns: PyNode[] = [];
    visit(body, (n) => {
      if (n.type === 'function_definition') return false;
      if (n.type === 'return_statement') returns.push(n);
    });
    if (returns.length !== 1) return;
    const value = named(returns[0])[0];
    const items = value && (value.type === 'expression_list' || value.type === 'tuple') ? named(value) : [];
    const positions: number[] = [];
    items.forEach((item, i) => {
      if (this.isOnes(item) || (item.type === 'identifier' && this.assignedOnes(body, this.text(item)))) {
        positions.push(i);
      }
    });
    if (positions.length > 0) this.unitScalers.set(name, positions);
  }

  private isOnes(expr: PyNode): boolean {
    const e = unparen(expr);
    const written = this.text(e);
    if (/^torch\.ones_like\([^()]*\)$/.test(written)) return true;
    if (e.type !== 'binary_operator' || this.text(child(e, 'operator') ?? e) !== '*') return false;
    const left = child(e, 'left');
    const right = child(e, 'right');
    return [left, right].some((s) => s && /^torch\.ones_like\([^()]*\)$/.test(this.text(s)));
  }

  /** The name is assigned exactly once in the body, to a unit gradient. */
  private assignedOnes(body: PyNode, name: string): boolean {
    const values: PyNode[] = [];
    visit(body, (n) => {
      if (n.type !== 'assignment' && n.type !== 'augmented_assignment') return;
      const left = child(n, 'left');
      if (left && this.text(left) === name) values.push(n);
    });
    return values.length === 1 && values[0].type === 'assignment' && this.isOnes(child(values[0], 'right')!);
  }

  private readAttaches(cls: ClassInfo): void {
    // A method of a base is read again with each subclass that reaches it; one finding per attachment.
    const hierarchy = this.hierarchy(cls);
    const reader = new AttachReader(this.source, cls.name, hierarchy, this.markers);
    for (const a of reader.read())
      if (!this.attaches.some((b) => b.attach.range.startLine === a.attach.range.startLine)) this.attaches.push(a);
    for (const a of new CountAttachReader(this.source, cls.name, reader).read())
      if (!this.countAttaches.some((b) => b.attach.range.startLine === a.attach.range.startLine))
        this.countAttaches.push(a);
  }

  /** The class and its bases defined in this file, nearest first. */
  private hierarchy(cls: ClassInfo): ClassInfo[] {
    const out: ClassInfo[] = [];
    const queue = [cls];
    while (queue.length > 0) {
      const c = queue.shift()!;
      if (out.includes(c)) continue;
      out.push(c);
      for (const b of c.bases) {
        const base = this.classes.get(b);
        if (base) queue.push(base);
      }
    }
    return out;
  }
}

// What one file says about torch.distributed.pipelining's schedules, read from the syntax tree alone (cached per
// text, combined across files by pipeline-schedules.ts): where a schedule is built and whether it keeps
// `scale_grads` at its default, which functions and annotated callables return one, which names are assigned
// one, where `.step()` is called on such a name, and the `for … in range(…)` loops that run a step several times
// before one optimizer step.
import type { Parser } from 'web-tree-sitter';
import { parseModule } from '../parse';
import { child, named, unparen, visit, type PyNode, type Source } from '../tree';
import type { SourceRange } from '../types';
import { readLossDivider, splitTopLevel } from './pipeline-loss-wrappers';

/** How a construction sets `scale_grads`: left out (torch's default, True), True, False, or an expression. */
export type GradScaling = 'default' | 'true' | 'false' | 'unknown';

export interface Construction {
  readonly range: SourceRange;
  readonly line: number;
  /** The callee as written (`schedule_class`, `Schedule1F1B`). */
  readonly callee: string;
  readonly scaling: GradScaling;
  /** The micro-batch count as written (`n_microbatches=` or the second positional argument). */
  readonly microbatches?: string;
  /** `loss_fn=wrap(fn, k)`: the wrapper's name and its arguments as written. */
  readonly lossWrapper?: { readonly callee: string; readonly args: readonly string[]; readonly range: SourceRange };
  /** The enclosing function, and the name the schedule is assigned to there. */
  readonly fn?: string;
  readonly variable?: string;
}

/** A tuple position a function or callable returns a schedule at; -1 when it returns the schedule itself. */
export type Position = number;

/** `return v` or `return v, …` of a function, where `v` was assigned a call to `callee` (or a construction). */
export interface ReturnedCall {
  readonly fn: string;
  readonly index: Position;
  readonly callee: string;
  readonly calleeIndex: Position;
}

/** An assignment of (a tuple of) names from a call: `(self.pp_schedule, …) = self.train_spec.pipelining_fn(…)`. */
export interface Holder {
  readonly targets: readonly string[];
  readonly tuple: boolean;
  readonly callee: string;
  readonly cls?: string;
  readonly fn?: string;
  readonly line: number;
  readonly range: SourceRange;
}

export interface StepCall {
  readonly receiver: string;
  readonly cls?: string;
  readonly fn?: string;
  readonly range: SourceRange;
  readonly line: number;
}

/** A `for … in range(count)` loop whose body neither clears the gradients nor steps an optimizer. */
export interface AccumulationLoop {
  readonly cls?: string;
  readonly fn?: string;
  readonly count: string;
  readonly range: SourceRange;
  readonly line: number;
  /** Functions called in the body (`self.forward_backward_step(…)` → `forward_backward_step`), with `self.`. */
  readonly calls: ReadonlySet<string>;
  /** `.step(` receivers called in the body. */
  readonly steps: ReadonlySet<string>;
  /** The first optimizer `.step()` after the loop in the same function. */
  readonly optimizerStep?: { readonly range: SourceRange; readonly line: number; readonly text: string };
}

export interface PipelineFacts {
  readonly constructions: readonly Construction[];
  /** Functions whose return annotation names a schedule, by name. */
  readonly annotatedReturns: ReadonlyMap<string, Position>;
  readonly returnedCalls: readonly ReturnedCall[];
  /** Class fields and module-level names annotated as callables that return a schedule (`pipelining_fn`). */
  readonly annotatedCallables: ReadonlyMap<string, Position>;
  readonly holders: readonly Holder[];
  readonly steps: readonly StepCall[];
  readonly loops: readonly AccumulationLoop[];
  /** Functions that return a closure dividing the wrapped loss by one of their parameters, with its position. */
  readonly lossDividers: ReadonlyMap<string, { readonly index: number; readonly range: SourceRange }>;
}

const PIPELINING = /^torch\.distributed\.pipelining(\.schedules)?\./;
const SCHEDULE_CLASS =
  /^(_PipelineSchedule|_PipelineScheduleRuntime|PipelineScheduleSingle|PipelineScheduleMulti|Schedule\w+)$/;
const PARSE_BUDGET_MS = 5_000;

/** Files worth parsing once a schedule is known to be built somewhere: they call `.step(` or name pipelining. */
export function mayConcernSchedules(text: string): boolean {
  return text.includes('pipelining') || /\.step\s*\(/.test(text);
}

export function readPipelineFacts(parser: Parser, text: string): PipelineFacts | undefined {
  if (!mayConcernSchedules(text)) return undefined;
  const parsed = parseModule(parser, text, PARSE_BUDGET_MS, Number.POSITIVE_INFINITY);
  if (!('module' in parsed)) return undefined;
  return new FileReader(parsed.module, parsed.source).read();
}

class FileReader {
  private readonly imports = new Map<string, string>();
  private readonly aliases = new Map<string, Position>();
  private readonly constructions: Construction[] = [];
  private readonly annotatedReturns = new Map<string, Position>();
  private readonly returnedCalls: ReturnedCall[] = [];
  private readonly annotatedCallables = new Map<string, Position>();
  private readonly holders: Holder[] = [];
  private readonly steps: StepCall[] = [];
  private readonly loops: AccumulationLoop[] = [];
  private readonly lossDividers = new Map<string, { index: number; range: SourceRange }>();

  constructor(
    private readonly module: PyNode,
    private readonly source: Source,
  ) {}

  read(): PipelineFacts {
    this.readImports();
    this.readAliases();
    this.walk(this.module, undefined, undefined);
    return {
      constructions: this.constructions,
      annotatedReturns: this.annotatedReturns,
      returnedCalls: this.returnedCalls,
      annotatedCallables: this.annotatedCallables,
      holders: this.holders,
      steps: this.steps,
      loops: this.loops,
      lossDividers: this.lossDividers,
    };
  }

  private text(n: PyNode): string {
    return this.source.textOf(n).replace(/\s+/g, '');
  }

  private readImports(): void {
    visit(this.module, (n) => {
      if (n.type !== 'import_from_statement') return true;
      const from = child(n, 'module_name');
      const prefix = from ? this.text(from) : '';
      for (const item of n.children.filter((c) => c.field === 'name')) {
        const name = item.type === 'aliased_import' ? child(item, 'name') : item;
        const alias = item.type === 'aliased_import' ? child(item, 'alias') : item;
        if (name && alias) this.imports.set(this.text(alias), `${prefix}.${this.text(name)}`);
      }
      return false;
    });
  }

  /** A schedule class or base imported from torch.distributed.pipelining, by its local name. */
  private isScheduleType(name: string): boolean {
    const imported = this.imports.get(name);
    return imported !== undefined && PIPELINING.test(imported) && SCHEDULE_CLASS.test(imported.split('.').pop()!);
  }

  /** Module-level `Name: TypeAlias = Callable[..., tuple[_PipelineSchedule, …]]` (or without the annotation). */
  private readAliases(): void {
    for (const statement of named(this.module)) {
      const a = statement.type === 'expression_statement' ? named(statement)[0] : undefined;
      const left = a?.type === 'assignment' ? child(a, 'left') : undefined;
      const right = a ? child(a, 'right') : undefined;
      if (left?.type !== 'identifier' || !right) continue;
      const position = this.returnedPosition(this.text(right), true);
      if (position !== undefined) this.aliases.set(this.text(left), position);
    }
  }

  /**
   * Where an annotation puts a schedule: `_PipelineSchedule` → -1, `tuple[_PipelineSchedule, list[nn.Module]]` →
   * 0; with `callable`, what a `Callable[..., …]` (or an alias of one) returns. `X | None` and `Optional[X]` are X.
   */
  private returnedPosition(annotation: string, callable: boolean): Position | undefined {
    let t = annotation.replace(/\|None$|^None\|/, '').replace(/^(typing\.)?Optional\[(.*)\]$/, '$2');
    if (callable) {
      const alias = this.aliases.get(t);
      if (alias !== undefined) return alias;
      const m = /^(typing\.|collections\.abc\.)?Callable\[(\.\.\.|\[.*?\]),(.*)\]$/.exec(t);
      if (!m) return undefined;
      t = m[3];
    }
    if (this.isScheduleType(t)) return -1;
    const tuple = /^(tuple|Tuple|typing\.Tuple)\[(.*)\]$/.exec(t);
    if (!tuple) return undefined;
    const items = splitTopLevel(tuple[2]);
    const index = items.findIndex((item) => this.isScheduleType(item));
    return index >= 0 ? index : undefined;
  }

  private walk(node: PyNode, cls: string | undefined, fn: string | undefined): void {
    for (const c of node.children) {
      if (c.type === 'class_definition') {
        const name = child(c, 'name');
        this.readFields(c);
        this.walk(c, name ? this.text(name) : undefined, undefined);
      } else if (c.type === 'function_definition') {
        this.readFunction(c, cls);
      } else {
        this.walk(c, cls, fn);
      }
    }
  }

  /** Dataclass-style fields `pipelining_fn: PipeliningFunction | None = None` in a class body. */
  private readFields(cls: PyNode): void {
    const body = child(cls, 'body');
    for (const statement of body ? named(body) : []) {
      const a = statement.type === 'expression_statement' ? named(statement)[0] : undefined;
      const left = a?.type === 'assignment' ? child(a, 'left') : undefined;
      const type = a ? child(a, 'type') : undefined;
      if (left?.type !== 'identifier' || !type) continue;
      const position = this.returnedPosition(this.text(type), true);
      if (position !== undefined) this.annotatedCallables.set(this.text(left), position);
    }
  }

  private readFunction(def: PyNode, cls: string | undefined): void {
    const nameNode = child(def, 'name');
    const body = child(def, 'body');
    if (!nameNode || !body) return;
    const fn = this.text(nameNode);
    const returnType = child(def, 'return_type');
    const annotated = returnType ? this.returnedPosition(this.text(returnType), false) : undefined;
    if (annotated !== undefined) this.annotatedReturns.set(fn, annotated);
    const divider = readLossDivider(this.source, def, body);
    if (divider) this.lossDividers.set(fn, divider);
    const scheduleClasses = this.scheduleClassVariables(body);
    /** Local name → the callee its (last) assignment calls, and the position taken from that call's result. */
    const assigned = new Map<string, { callee: string; index: Position }>();
    const nodes: PyNode[] = [];
    visit(body, (n) => {
      if (n !== body && (n.type === 'function_definition' || n.type === 'class_definition')) {
        if (n.type === 'function_definition') this.readFunction(n, cls);
        return false;
      }
      nodes.push(n);
      return true;
    });
    for (const n of nodes) {
      if (n.type === 'call') this.readCall(n, cls, fn, scheduleClasses);
      else if (n.type === 'assignment') this.readAssignment(n, cls, fn, assigned);
      else if (n.type === 'for_statement') this.readLoop(n, cls, fn, body);
    }
    for (const n of nodes) if (n.type === 'return_statement') this.readReturn(n, fn, assigned);
  }

  /** Locals every assignment of which is `get_schedule_class(…)` or an imported schedule class. */
  private scheduleClassVariables(body: PyNode): Set<string> {
    const verdicts = new Map<string, boolean>();
    visit(body, (n) => {
      if (n.type !== 'assignment') return true;
      const left = child(n, 'left');
      const right = child(n, 'right');
      if (left?.type !== 'identifier' || !right) return true;
      const r = unparen(right);
      const callee = r.type === 'call' ? child(r, 'function') : undefined;
      const ok =
        (r.type === 'identifier' && this.isScheduleType(this.text(r))) ||
        (callee?.type === 'identifier' &&
          PIPELINING.test(this.imports.get(this.text(callee)) ?? '') &&
          this.text(callee) === 'get_schedule_class');
      const name = this.text(left);
      verdicts.set(name, (verdicts.get(name) ?? true) && ok);
      return true;
    });
    return new Set([...verdicts].filter(([, ok]) => ok).map(([name]) => name));
  }

  private readCall(call: PyNode, cls: string | undefined, fn: string, scheduleClasses: Set<string>): void {
    const callee = child(call, 'function');
    const args = child(call, 'arguments');
    if (!callee || !args) return;
    const name = this.text(callee);
    if (callee.type === 'identifier' && (scheduleClasses.has(name) || this.isScheduleType(name))) {
      this.constructions.push(this.construction(call, name, args, fn));
      return;
    }
    if (callee.type === 'attribute' && this.text(child(callee, 'attribute') ?? callee) === 'step') {
      const receiver = child(callee, 'object');
      if (receiver)
        this.steps.push({
          receiver: this.text(receiver),
          cls,
          fn,
          range: this.source.range(call),
          line: this.source.lineOf(call),
        });
    }
  }

  private construction(call: PyNode, callee: string, args: PyNode, fn: string): Construction {
    let scaling: GradScaling = 'default';
    let microbatches: string | undefined;
    let lossWrapper: Construction['lossWrapper'];
    const positional = named(args).filter((a) => a.type !== 'keyword_argument');
    for (const a of named(args)) {
      if (a.type === 'dictionary_splat') scaling = 'unknown';
      if (a.type !== 'keyword_argument') continue;
      const key = this.text(child(a, 'name') ?? a);
      const value = child(a, 'value');
      if (key === 'scale_grads' && value)
        scaling = this.text(value) === 'True' ? 'true' : this.text(value) === 'False' ? 'false' : 'unknown';
      if (key === 'n_microbatches' && value) microbatches = this.source.textOf(value);
      if (key === 'loss_fn' && value?.type === 'call') lossWrapper = this.wrapperCall(value);
    }
    if (microbatches === undefined && positional[1]) microbatches = this.source.textOf(positional[1]);
    const statement = call.parent?.type === 'assignment' ? call.parent : undefined;
    const left = statement ? child(statement, 'left') : undefined;
    return {
      range: this.source.range(call),
      line: this.source.lineOf(call),
      callee,
      scaling,
      microbatches,
      lossWrapper,
      fn,
      variable: left && child(statement!, 'right') === call ? this.text(left) : undefined,
    };
  }

  private wrapperCall(call: PyNode): Construction['lossWrapper'] {
    const callee = child(call, 'function');
    const args = child(call, 'arguments');
    if (callee?.type !== 'identifier' || !args) return undefined;
    const items = named(args);
    if (items.some((a) => a.type !== 'identifier' && a.type !== 'attribute' && a.type !== 'integer')) return undefined;
    return { callee: this.text(callee), args: items.map((a) => this.text(a)), range: this.source.range(call) };
  }

  private readAssignment(
    a: PyNode,
    cls: string | undefined,
    fn: string,
    assigned: Map<string, { callee: string; index: Position }>,
  ): void {
    const left = child(a, 'left');
    const right = child(a, 'right');
    if (!left || !right) return;
    const r = unparen(right);
    const callee = r.type === 'call' ? child(r, 'function') : undefined;
    if (!callee) return;
    const calleeName =
      callee.type === 'attribute' ? this.text(child(callee, 'attribute') ?? callee) : this.text(callee);
    const l = unparen(left);
    const tuple = ['pattern_list', 'tuple_pattern', 'tuple', 'expression_list', 'list_pattern'].includes(l.type);
    const targets = tuple ? named(l).map((t) => this.text(t)) : [this.text(l)];
    targets.forEach((t, i) => assigned.set(t, { callee: calleeName, index: tuple ? i : -1 }));
    this.holders.push({
      targets,
      tuple,
      callee: calleeName,
      cls,
      fn,
      line: this.source.lineOf(a),
      range: this.source.range(a),
    });
  }

  private readReturn(ret: PyNode, fn: string, assigned: Map<string, { callee: string; index: Position }>): void {
    const value = named(ret)[0];
    if (!value) return;
    const v = unparen(value);
    const items = v.type === 'expression_list' || v.type === 'tuple' ? named(v) : [v];
    items.forEach((item, i) => {
      const from = assigned.get(this.text(item));
      if (from)
        this.returnedCalls.push({
          fn,
          index: items.length > 1 || v.type === 'tuple' ? i : -1,
          callee: from.callee,
          calleeIndex: from.index,
        });
    });
  }

  private readLoop(loop: PyNode, cls: string | undefined, fn: string, fnBody: PyNode): void {
    const right = child(loop, 'right');
    const body = child(loop, 'body');
    if (!right || !body || right.type !== 'call' || this.text(child(right, 'function') ?? right) !== 'range') return;
    const args = named(child(right, 'arguments') ?? right);
    // `range(n)` only: a start and stop (`range(1, k)`) or a literal count of one or none proves no repetition.
    if (args.length !== 1 || (args[0].type === 'integer' && Number(this.text(args[0])) <= 1)) return;
    const calls = new Set<string>();
    const steps = new Set<string>();
    let clears = false;
    visit(body, (n) => {
      if (n.type !== 'call') return true;
      const callee = child(n, 'function');
      if (!callee) return true;
      const text = this.text(callee);
      if (/(^|\.)zero_grad$/.test(text)) clears = true;
      if (/\.step$/.test(text)) {
        const receiver = text.slice(0, -'.step'.length);
        if (isOptimizer(receiver)) clears = true;
        steps.add(receiver);
      }
      calls.add(text.replace(/^self\./, 'self.'));
      return true;
    });
    if (clears) return;
    let optimizerStep: AccumulationLoop['optimizerStep'];
    visit(fnBody, (n) => {
      if (optimizerStep || n.start < loop.end) return n.end > loop.end && !optimizerStep;
      const callee = n.type === 'call' ? child(n, 'function') : undefined;
      const text = callee ? this.text(callee) : '';
      if (/\.step$/.test(text) && isOptimizer(text.slice(0, -'.step'.length)))
        optimizerStep = { range: this.source.range(n), line: this.source.lineOf(n), text: this.source.textOf(n) };
      return !optimizerStep;
    });
    if (!optimizerStep) return;
    this.loops.push({
      cls,
      fn,
      count: this.source.textOf(args[0]),
      range: this.source.range(child(loop, 'left') ?? loop),
      line: this.source.lineOf(loop),
      calls,
      steps,
      optimizerStep,
    });
  }
}

/** `optimizer`, `self.optimizers`, `opt`: the receiver of an optimizer's `.step()`. */
function isOptimizer(receiver: string): boolean {
  return /(^|\.)(optim\w*|opt)$/i.test(receiver);
}

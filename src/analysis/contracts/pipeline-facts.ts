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
import type {
  AccumulationLoop,
  Construction,
  Holder,
  PipelineFacts,
  Position,
  ReturnedCall,
  StepCall,
} from './pipeline-fact-types';
import { readConstruction } from './pipeline-constructions';
import { readAccumulationLoop } from './pipeline-accumulation-loops';

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
      else if (n.type === 'for_statement') {
        const loop = readAccumulationLoop(this.source, n, cls, fn, body);
        if (loop) this.loops.push(loop);
      }
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
      this.constructions.push(readConstruction(this.source, call, name, args, fn));
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
}

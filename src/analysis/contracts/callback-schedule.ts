// A micro-batch schedule that runs backward K times on a callback's mean loss before one optimizer step (CP008).
// Megatron-style training takes the model's loss from a `forward_step` callback that the training script passes to
// the framework (`pretrain(…, forward_step)`), which hands it down to the function that runs one optimizer step
// (`train_step`). That function's contract is read from the code in view: it zeroes the gradients, runs backward on
// the callback's losses a number of times that adds up, over its loops and on every path, to a micro-batch count K
// (`range(K - w)` in the 1F1B loop and `range(w)` in the cooldown, with `w = min(…, K)`), and steps once; the losses go
// through the callback's tuple, a queue and a backward helper (callback-counts.ts). Reported at the callback's loss
// when it is a mean over its own micro-batch (callback-loss.ts) and nothing divides by K: not the callback, not the
// schedule or its helpers, and no division by K's setting anywhere in the program. The gradient of the step is then
// the sum of K micro-batch means, K times the mean of the batch (Megatron-LM before 3d7194c).
import type { Parser } from 'web-tree-sitter';
import type { Finding } from '../types';
import { ancestors, child, unparen, visit, type PyNode } from '../tree';
import {
  assignedNames,
  callArguments,
  parameterNames,
  readCallbackFile,
  readClassUnits,
  visitBody,
  type CallbackFile,
} from './callback-files';
import { countBackwards, type Located } from './callback-counts';
import { microBatchCount } from './callback-micro-batch-count';
import { dividesByCount, meanLoss } from './callback-loss';
import { compact } from './loss-scaler-classes';
import { callbackLoss, type CallbackLoss, type CallbackProgram } from './callback-arguments';
import { scheduleFinding, type Schedule } from './callback-schedule-finding';
import { dividesOnLine, mayHoldSchedule } from './callback-text-scans';
import { filesByModuleName, importClosure, importedModules } from './callback-reach';

interface Entry {
  readonly text: string;
  /** Read once per text: the editor asks for the contracts' findings on every edit. */
  readonly candidate: boolean;
  parsed?: CallbackFile | null;
  /** The top-level classes `parsed` leaves out, parsed when a reader finds a name it follows called there. */
  classes?: PyNode | null;
  /** What this file's functions were found to schedule, by function name (see Reading). */
  readonly schedules: Map<string, Reading>;
  /** Per-text answers of the program-wide text scans (a division by a setting, a call of a name), by question. */
  readonly scans: Map<string, boolean>;
  /** The modules the text imports (callback-reach.ts), read when a schedule's reach is asked. */
  imports?: readonly string[];
}

/**
 * A function's schedule as read from its file and the files its calls resolved to, with those resolutions: the
 * reading holds while every module still resolves to the same file and each such file has the same text, so an edit
 * of an unrelated file re-reads nothing (the editor asks on every edit).
 */
interface Reading {
  readonly schedule: Schedule | undefined;
  readonly resolutions: readonly Resolution[];
}

interface Resolution {
  readonly from: string;
  readonly module: string;
  readonly path: string | undefined;
  readonly text: string | undefined;
}

interface Caller {
  readonly fn: Located;
  readonly param: string;
  /** The files of the callers between this one and the schedule. */
  readonly chain: readonly string[];
}

interface Entrance {
  readonly callback: Located;
  readonly call: PyNode;
  /** The files of the functions that hand the callback down to the schedule. */
  readonly chain: readonly string[];
}

/** How many functions up from the schedule a callback parameter is followed to the script that passes it. */
const CHAIN_DEPTH = 6;

export class CallbackScheduleIndex {
  private readonly files = new Map<string, Entry>();
  /** The files by module name, for the imports' reach; rebuilt when a file is added or removed. */
  private byName: Map<string, string[]> | undefined;

  constructor(
    private readonly parser: Parser,
    private readonly resolveModule: (from: string, module: string) => string | undefined,
  ) {}

  setFile(path: string, text: string): void {
    if (!this.files.has(path)) this.byName = undefined;
    if (this.files.get(path)?.text !== text)
      this.files.set(path, { text, candidate: mayHoldSchedule(text), schedules: new Map(), scans: new Map() });
  }

  removeFile(path: string): void {
    if (this.files.delete(path)) this.byName = undefined;
  }

  findings(wanted: ReadonlySet<string>, isTest: (path: string) => boolean): Map<string, Finding[]> {
    const out = new Map<string, Finding[]>();
    for (const [path, entry] of this.files) {
      if (!entry.candidate || isTest(path)) continue;
      const file = this.parsed(path);
      if (!file) continue;
      for (const [name, def] of file.functions) {
        const schedule = this.scheduleRead({ path, file, def, name });
        const setting = schedule?.setting.split('.').pop();
        if (!schedule || !setting || !/^\w+$/.test(setting)) continue;
        const dividing = this.filesDividing(setting);
        for (const { callback, call, chain } of this.entries(schedule, isTest)) {
          if (!wanted.has(callback.path)) continue;
          const loss = meanLoss(callback.def, callback.file.source);
          const { source } = callback.file;
          if (!loss || source.textOf(callback.def).includes('backward')) continue;
          if (dividesByCount(callback.def, source, new Set([schedule.count]))) continue;
          if (dividing.length > 0) {
            const run = [schedule.fn.path, ...schedule.counted.functions.map((f) => f.path), ...chain, callback.path];
            const reached = this.reach(run);
            if (dividing.some((p) => reached.has(p))) continue;
          }
          const f = scheduleFinding(schedule, callback, call, loss);
          out.set(callback.path, [...(out.get(callback.path) ?? []), f]);
        }
      }
    }
    return out;
  }

  /** What the program passes to a callable parameter of a top-level function (callback-arguments.ts). */
  callbackLoss(path: string, fnName: string, param: string, counts: ReadonlySet<string>): CallbackLoss {
    const program: CallbackProgram = {
      paths: [...this.files.keys()],
      textOf: (p) => this.files.get(p)?.text,
      parsed: (p) => this.parsed(p),
      resolve: (at, callee) => this.resolve(at, callee),
      classes: (p) => this.classes(p),
    };
    return callbackLoss(program, path, fnName, param, counts);
  }

  private parsed(path: string): CallbackFile | undefined {
    const entry = this.files.get(path);
    if (!entry) return undefined;
    if (entry.parsed === undefined) {
      try {
        entry.parsed = readCallbackFile(this.parser, entry.text) ?? null;
      } catch {
        entry.parsed = null;
      }
    }
    return entry.parsed ?? undefined;
  }

  private classes(path: string): PyNode | undefined {
    const entry = this.files.get(path);
    if (!entry) return undefined;
    if (entry.classes === undefined) {
      try {
        entry.classes = readClassUnits(this.parser, entry.text) ?? null;
      } catch {
        entry.classes = null;
      }
    }
    return entry.classes ?? undefined;
  }

  /** The function's schedule, read again only when its file or a file its calls resolved to changed. */
  private scheduleRead(fn: Located): Schedule | undefined {
    const entry = this.files.get(fn.path)!;
    const cached = entry.schedules.get(fn.name);
    if (cached && cached.resolutions.every((r) => this.stillResolves(r))) return cached.schedule;
    const resolutions: Resolution[] = [];
    const schedule = this.schedule(fn, resolutions);
    entry.schedules.set(fn.name, { schedule, resolutions });
    return schedule;
  }

  private stillResolves(r: Resolution): boolean {
    const path = this.resolveModule(r.from, r.module);
    return path === r.path && (path === undefined || this.files.get(path)?.text === r.text);
  }

  private resolve(at: Located, callee: string, resolutions?: Resolution[]): Located | undefined {
    const own = at.file.functions.get(callee);
    if (own) return { path: at.path, file: at.file, def: own, name: callee };
    const imported = at.file.imports.get(callee);
    const path = imported && this.resolveModule(at.path, imported.module);
    if (imported)
      resolutions?.push({ from: at.path, module: imported.module, path, text: path && this.files.get(path)?.text });
    const file = path ? this.parsed(path) : undefined;
    const def = file?.functions.get(imported!.name);
    return path && file && def ? { path, file, def, name: imported!.name } : undefined;
  }

  /** The function zeroes the gradients, runs K backward passes on a callback parameter's losses, and steps once. */
  private schedule(fn: Located, resolutions: Resolution[]): Schedule | undefined {
    const { source } = fn.file;
    let zero: PyNode | undefined;
    const steps: PyNode[] = [];
    visitBody(fn.def, (n) => {
      const callee = n.type === 'call' ? compact(source, child(n, 'function') ?? n) : '';
      if (/(^|\.)zero_grad$/.test(callee)) zero ??= n;
      if (/^\w*optim\w*\.step$/i.test(callee)) steps.push(n);
      return true;
    });
    if (!zero || steps.length !== 1) return undefined;
    const assigned = assignedNames(fn.def, source);
    const lists = [...assigned].filter(
      ([, at]) => at.length === 1 && compact(source, child(at[0], 'right') ?? at[0]) === '[]',
    );
    const ctx = { resolve: (at: Located, callee: string) => this.resolve(at, callee, resolutions) };
    for (const param of parameterNames(fn.def, source)) {
      if (!param) continue;
      for (const queue of [undefined, ...lists.map(([name]) => name)]) {
        const bindings = {
          callbacks: new Set([param]),
          queues: new Set(queue ? [queue] : []),
          seeds: new Set<string>(),
        };
        const counted = countBackwards(fn, bindings, ctx);
        const count = counted && microBatchCount(fn, counted, assigned);
        if (!counted || !count) continue;
        const first = Math.min(...counted.backwards.map((b) => (b.at.def === fn.def ? b.node.start : Infinity)));
        if (zero.start > first || steps[0].start < zero.start) return undefined;
        const names = new Set([count.name, count.setting.split('.').pop()!]);
        if (counted.functions.some((f) => dividesByCount(f.def, f.file.source, names))) return undefined;
        // A division by the setting elsewhere (dividedAnywhere) is asked of the whole program on each reading.
        return { fn, param, count: count.name, setting: count.setting, counted, step: steps[0] };
      }
    }
    return undefined;
  }

  /**
   * The files that divide by the count's setting (a loss or gradient scaled for the window): each keeps the schedules
   * whose run reaches it silent (reach).
   */
  private filesDividing(setting: string): string[] {
    const named = new RegExp(`\\b${setting}\\b`);
    return [...this.files]
      .filter(([, e]) =>
        scanned(e, `divides:${setting}`, () => e.text.includes(setting) && dividesOnLine(e.text, named)),
      )
      .map(([path]) => path);
  }

  /** The files a run through these files may execute: they and every module they import, to the end. */
  private reach(run: readonly string[]): Set<string> {
    this.byName ??= filesByModuleName(this.files.keys());
    const importsOf = (path: string): readonly string[] | undefined => {
      const entry = this.files.get(path);
      if (entry) entry.imports ??= importedModules(entry.text);
      return entry?.imports;
    };
    return importClosure(run, importsOf, this.byName);
  }

  /** The module-level calls that pass a top-level function down the chain of callers to the schedule's parameter. */
  private entries(schedule: Schedule, isTest: (path: string) => boolean): Entrance[] {
    const out: Entrance[] = [];
    let frontier: Caller[] = [{ fn: schedule.fn, param: schedule.param, chain: [] }];
    const seen = new Set<string>();
    for (let depth = 0; depth < CHAIN_DEPTH && frontier.length > 0; depth++) {
      const next: Caller[] = [];
      for (const target of frontier) {
        const key = `${target.fn.path}\u0000${target.fn.name}\u0000${target.param}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const index = parameterNames(target.fn.def, target.fn.file.source).indexOf(target.param);
        const called = new RegExp(`\\b${target.fn.name}\\s*\\(`);
        for (const [path, entry] of this.files) {
          if (isTest(path) || !scanned(entry, `calls:${target.fn.name}`, () => called.test(entry.text))) continue;
          const file = this.parsed(path);
          if (file) this.callersIn(path, file, target, index, next, out);
        }
      }
      frontier = next;
    }
    return out;
  }

  private callersIn(
    path: string,
    file: CallbackFile,
    target: Caller,
    index: number,
    next: Caller[],
    out: Entrance[],
  ): void {
    const chain = [...target.chain, target.fn.path];
    const { source } = file;
    visit(file.module, (n) => {
      if (n.type !== 'call') return true;
      const callee = child(n, 'function');
      if (callee?.type !== 'identifier') return true;
      const site: Located = { path, file, def: file.module, name: '' };
      const resolved = this.resolve(site, source.textOf(callee));
      if (resolved?.def !== target.fn.def) return true;
      const args = callArguments(n, source);
      const arg = args && (args.keywords.get(target.param) ?? (index >= 0 ? args.positional[index] : undefined));
      if (!arg || unparen(arg).type !== 'identifier') return true;
      const name = source.textOf(unparen(arg));
      const enclosing = ancestors(n).filter((a) => a.type === 'function_definition' || a.type === 'class_definition');
      const outer = enclosing[enclosing.length - 1];
      if (!outer) {
        const def = file.functions.get(name);
        if (def) out.push({ callback: { path, file, def, name }, call: n, chain });
        return true;
      }
      const callerName = source.textOf(child(outer, 'name') ?? outer);
      if (outer.type !== 'function_definition' || file.functions.get(callerName) !== outer) return true;
      if (parameterNames(outer, source).includes(name) && !assignedNames(outer, source).has(name))
        next.push({ fn: { path, file, def: outer, name: callerName }, param: name, chain });
      return true;
    });
  }
}

/** A text scan's answer for the entry's text, computed on the first question after the text changed. */
function scanned(entry: Entry, question: string, scan: () => boolean): boolean {
  let answer = entry.scans.get(question);
  if (answer === undefined) {
    answer = scan();
    entry.scans.set(question, answer);
  }
  return answer;
}

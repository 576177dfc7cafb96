// What the program passes to a callable parameter (`def train_step(forward_fn, …)`), for the per-file accumulation
// rule (accumulation.ts): a loss that a schedule takes from `forward_fn(batch, model)` is an undivided mean only when
// every function the program hands to `forward_fn` returns one. The calls of the schedule's function are found in
// every file (own or imported name), an argument that is the caller's own parameter is followed up to the caller's
// callers, and each function that arrives is read with the callback contract's loss reader (callback-loss.ts).
// A parameter to which no call passes a function (a `model` given a module object) is not a callback: its call's
// result keeps the per-file rule's own reading.
import { ancestors, child, unparen, type PyNode } from '../tree';
import { assignedNames, callArguments, parameterNames, type CallbackFile } from './callback-files';
import type { Located } from './callback-counts';
import { dividesByCount, meanLoss } from './callback-loss';

/**
 * `undivided`: functions reach the parameter and each returns a mean over its own micro-batch that it never divides by
 * the count; `divided`: some function that reaches it divides by the count or is not such a mean, or a function-like
 * value that cannot be read reaches it (a lambda, a `partial`, a name bound in the caller); `not-callback`: no call in
 * the program passes a function to it.
 */
export type CallbackLoss = 'undivided' | 'divided' | 'not-callback';

/** The callback contract's view of the program that this reader needs: files by path and name resolution. */
export interface CallbackProgram {
  readonly paths: readonly string[];
  textOf(path: string): string | undefined;
  parsed(path: string): CallbackFile | undefined;
  resolve(at: Located, callee: string): Located | undefined;
  /** The file's top-level classes, which `parsed` leaves out, parsed on their own; undefined where they do not parse. */
  classes(path: string): PyNode | undefined;
}

/** How many functions up a parameter passed on as an argument is followed. */
const CHAIN_DEPTH = 6;

export function callbackLoss(
  program: CallbackProgram,
  path: string,
  fnName: string,
  param: string,
  counts: ReadonlySet<string>,
): CallbackLoss {
  const file = program.parsed(path);
  const def = file?.functions.get(fnName);
  if (!file || !def) return 'not-callback';
  const arriving: PyNode[] = [];
  const functions: Located[] = [];
  let frontier: Located[] = [{ path, file, def, name: fnName }];
  let params = [param];
  const seen = new Set<string>();
  for (let depth = 0; depth < CHAIN_DEPTH && frontier.length > 0; depth++) {
    const next: Located[] = [];
    const nextParams: string[] = [];
    frontier.forEach((target, i) => {
      const key = `${target.path}\u0000${target.name}\u0000${params[i]}`;
      if (seen.has(key)) return;
      seen.add(key);
      const sites = callSites(program, target);
      // A call inside a class whose text does not parse passes something unknown: the reading stays silent.
      if (sites.unknown) arriving.push(target.def);
      for (const site of sites.found) {
        const arg = argumentFor(site, target, params[i]);
        if (arg === 'splat') {
          arriving.push(site.call);
          continue;
        }
        if (!arg) continue;
        const value = unparen(arg);
        const name = value.type === 'identifier' ? site.file.source.textOf(value) : undefined;
        // In a class only a module-level function's name is read. Anything else (`self.loss_fn`, a name the method
        // takes or binds, a name of the class body) comes from callers or attributes this reader does not follow, so
        // it may be any function: the reading stays silent, as it was before classes were read at all.
        if (site.inClass) {
          const free = !!name && !!site.method && !boundInMethod(site.method, name, site.file);
          const resolved = free ? program.resolve(site.at, name) : undefined;
          if (resolved) functions.push(resolved);
          else arriving.push(value);
          continue;
        }
        const outer = site.outer;
        // The caller passes its own parameter on: what reaches the callback is what its callers pass.
        if (name && outer && parameterNames(outer.def, site.file.source).includes(name)) {
          if (!assignedNames(outer.def, site.file.source).has(name)) {
            next.push(outer);
            nextParams.push(name);
          } else arriving.push(value);
          continue;
        }
        // A name the caller binds itself is not the module's function of that name.
        const local = !!name && !!outer && assignedNames(outer.def, site.file.source).has(name);
        const resolved = name && !local ? program.resolve(site.at, name) : undefined;
        if (resolved) functions.push(resolved);
        else if (functionLike(value, site.file)) arriving.push(value);
      }
    });
    frontier = next;
    params = nextParams;
  }
  if (frontier.length > 0) return 'divided';
  if (functions.length === 0 && arriving.length === 0) return 'not-callback';
  if (arriving.length > 0) return 'divided';
  const undivided = functions.every((f) => {
    const source = f.file.source;
    return meanLoss(f.def, source, true) !== undefined && !dividesByCount(f.def, source, counts);
  });
  return undivided ? 'undivided' : 'divided';
}

interface CallSite {
  readonly call: PyNode;
  readonly file: CallbackFile;
  /** The file as a place names are resolved from. */
  readonly at: Located;
  /** The top-level function the call is made in; undefined at module level and in a class. */
  readonly outer?: Located;
  /** True for a call written in a top-level class; `method` is the innermost function around it there. */
  readonly inClass?: boolean;
  readonly method?: PyNode;
}

/** Every call of the target by a bare name that resolves to it, in any file that names it; `unknown` when such a call may sit in a class the contract left unparsed. */
function callSites(program: CallbackProgram, target: Located): { found: CallSite[]; unknown: boolean } {
  const out: CallSite[] = [];
  let unknown = false;
  const called = new RegExp(`\\b${target.name}\\s*\\(`);
  for (const path of program.paths) {
    if (!called.test(program.textOf(path) ?? '')) continue;
    const file = program.parsed(path);
    if (!file) continue;
    const at: Located = { path, file, def: file.module, name: '' };
    const visit = (n: PyNode, inClass: boolean): void => {
      if (n.type === 'call') {
        const callee = child(n, 'function');
        if (callee?.type === 'identifier' && program.resolve(at, file.source.textOf(callee))?.def === target.def) {
          if (!inClass) out.push({ call: n, file, at, outer: outerFunction(n, path, file) });
          else out.push({ call: n, file, at, inClass, method: innermostFunction(n) });
        }
      }
      n.children.forEach((c) => visit(c, inClass));
    };
    visit(file.module, false);
    // The classes are parsed only where their text calls the target (the editor asks on every edit).
    if (called.test(file.unparsedText)) {
      const classes = program.classes(path);
      if (classes) visit(classes, true);
      else unknown = true;
    }
  }
  return { found: out, unknown };
}

function innermostFunction(n: PyNode): PyNode | undefined {
  return ancestors(n).find((a) => a.type === 'function_definition');
}

/** The method takes the name as a parameter or binds it (`fn = self.fn`, `for fn in …`). */
function boundInMethod(method: PyNode, name: string, file: CallbackFile): boolean {
  return parameterNames(method, file.source).includes(name) || assignedNames(method, file.source).has(name);
}

/** The top-level function around a node, when it is one the file defines once. */
function outerFunction(n: PyNode, path: string, file: CallbackFile): Located | undefined {
  const defs = ancestors(n).filter((a) => a.type === 'function_definition' || a.type === 'class_definition');
  const outer = defs[defs.length - 1];
  if (!outer || outer.type !== 'function_definition') return undefined;
  const name = file.source.textOf(child(outer, 'name') ?? outer);
  return file.functions.get(name) === outer ? { path, file, def: outer, name } : undefined;
}

/** The argument bound to `param` at a call, 'splat' where a `*`/`**` argument may bind it. */
function argumentFor(site: CallSite, target: Located, param: string): PyNode | 'splat' | undefined {
  const args = callArguments(site.call, site.file.source);
  if (!args) return 'splat';
  const index = parameterNames(target.def, target.file.source).indexOf(param);
  return args.keywords.get(param) ?? (index >= 0 ? args.positional[index] : undefined);
}

/** A value that is a function the reader cannot follow: a lambda, a `partial(…)`, a nested function's name. */
function functionLike(value: PyNode, file: CallbackFile): boolean {
  if (value.type === 'lambda') return true;
  if (value.type === 'call') return /(^|\.)partial$/.test(file.source.textOf(child(value, 'function') ?? value));
  if (value.type !== 'identifier') return false;
  const name = file.source.textOf(value);
  let found = false;
  const visit = (n: PyNode): void => {
    if (found) return;
    if (n.type === 'function_definition' && file.source.textOf(child(n, 'name') ?? n) === name) found = true;
    n.children.forEach(visit);
  };
  visit(file.module);
  return found;
}

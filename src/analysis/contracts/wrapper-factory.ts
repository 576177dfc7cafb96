// The class an optimizer wrapper is built from when the code does not name it: a method receives the batch and a flag
// as parameters (`_prepare_optimizer(self, optimizer, *, expected_batch_size, distributed)`) and builds whatever a
// factory function returns (`optim_class = get_optimizer_class(clipping=clipping, distributed=distributed)`), a
// function whose returns are classes chosen by conditions on its parameters. The values are followed up the calls
// of that method from the same class (`self._prepare_optimizer(..., distributed=True)`), each call on its own: a
// finding at one call holds for that call. A factory's choice is decided only where every condition before the
// chosen return is decided by literal arguments (or the parameters' defaults); anything undecided chooses nothing.
import { child, hasSplat, named, unparen, type PyNode } from '../tree';
import type { FileModel, FunctionInfo, Param } from '../scope';
import { reboundNames } from '../nested-calls';
import { isMethod } from '../path-conditions';
import { keywordOnly } from './wrapper-claim';

export type Literal = string | number | boolean | null;

/** A function, and the call of it whose arguments its parameters are read from (none: the parameters are unknown). */
export interface CallContext {
  readonly fn: FunctionInfo;
  readonly site?: { readonly call: PyNode; readonly caller: CallContext };
}

/** A value and the context its names are read in. */
export interface ContextValue {
  readonly node: PyNode;
  readonly ctx: CallContext;
}

/** A function that returns one of several classes by its arguments, and the literal values it was called with. */
export interface FactoryChoice {
  /** The returned class as the factory's file writes it. */
  readonly className: string;
  /** The factory's call as written (`get_optimizer_class(clipping=clipping, distributed=distributed)`). */
  readonly call: PyNode;
  /** The parameters whose values decided the choice, `name=value`. */
  readonly decidedBy: readonly string[];
}

const MAX_CALLERS_DEPTH = 2;
const MAX_VALUE_DEPTH = 4;

/** The function itself with unknown parameters, and each call of it through `self.` from a method of its class. */
export function callContexts(model: FileModel, fn: FunctionInfo, depth = 0): CallContext[] {
  const out: CallContext[] = [{ fn }];
  if (!fn.className || !isMethod(fn) || depth >= MAX_CALLERS_DEPTH) return out;
  for (const caller of model.functions) {
    if (caller.className !== fn.className || caller === fn) continue;
    for (const call of caller.calls) {
      if (model.syntax.calleeText(call) !== `self.${fn.name}`) continue;
      for (const up of callContexts(model, caller, depth + 1)) out.push({ fn, site: { call, caller: up } });
    }
  }
  return out;
}

/**
 * The value a parameter of the context's function has at its call (the argument, or the default where the call
 * passes none or no call is in view), carried up through the callers; any other node stays where it is. Undefined
 * where a parameter's value is not known (no default and no call, a splat, a parameter the function rebinds).
 */
export function atSite(model: FileModel, value: ContextValue, depth = 0): ContextValue | undefined {
  const node = unparen(value.node);
  const fn = value.ctx.fn;
  if (node.type !== 'identifier' || depth > MAX_VALUE_DEPTH) return value;
  const name = model.syntax.text(node);
  const params = model.callableParams(fn);
  const param = params.find((p) => p.name === name);
  if (!param) return fn.params.some((p) => p.name === name) ? undefined : value;
  if (reboundNames(model, fn).has(name)) return undefined;
  // A method no call in view reaches is judged for the call that leaves the parameter at its default.
  if (!value.ctx.site) return param.defaultValue ? { node: param.defaultValue, ctx: value.ctx } : undefined;
  const site = value.ctx.site;
  const given = argumentFor(model, site.call, param, params[0]?.index ?? 0);
  if (given === null) return undefined;
  if (given) return atSite(model, { node: given, ctx: site.caller }, depth + 1);
  return param.defaultValue ? { node: param.defaultValue, ctx: value.ctx } : undefined;
}

/** The literal a value is in its context: written, a parameter given one at the call, or a name assigned one once. */
export function literalAt(model: FileModel, value: ContextValue, assumed?: Assumed, depth = 0): Literal | undefined {
  if (depth > MAX_VALUE_DEPTH) return undefined;
  const resolved = atSite(model, value);
  if (!resolved) return undefined;
  const s = model.syntax;
  const node = unparen(resolved.node);
  const lit = literal(s, node);
  if (lit !== undefined || node.type !== 'identifier') return lit;
  const name = s.text(node);
  const assumedValue = assumed?.fn === resolved.ctx.fn ? assumed.values.get(name) : undefined;
  if (assumedValue !== undefined) return assumedValue;
  const assigned = onlyAssignment(model, resolved.ctx.fn, name);
  return assigned ? literalAt(model, { node: assigned, ctx: resolved.ctx }, assumed, depth + 1) : undefined;
}

/** Values a proof takes names of one function to have: the path it holds on (`distributed` true). */
export interface Assumed {
  readonly fn: FunctionInfo;
  readonly values: ReadonlyMap<string, Literal>;
}

/** The one value `name` is assigned in `fn` by a plain `=`, where it is not a parameter. */
export function onlyAssignment(model: FileModel, fn: FunctionInfo, name: string): PyNode | undefined {
  if (fn.params.some((p) => p.name === name)) return undefined;
  const s = model.syntax;
  const writes = fn.assignments.filter((a) => {
    const left = child(a, 'left');
    return left?.type === 'identifier' && s.text(left) === name;
  });
  if (writes.length !== 1 || writes[0].type !== 'assignment') return undefined;
  return child(writes[0], 'right') ?? undefined;
}

/**
 * The class a factory returns for a call of it: its `return` and `raise` statements in source order, each guarded
 * only by `if`/`elif`/`else` tests over its parameters; the first whose guards all hold is taken, provided every
 * earlier one has a guard that fails. Undefined when a guard is undecided, the taken statement raises, or a
 * return is not a bare class name.
 */
export function factoryChoice(
  factoryModel: FileModel,
  factory: FunctionInfo,
  siteModel: FileModel,
  site: ContextValue,
  assumed?: Assumed,
): FactoryChoice | undefined {
  const call = unparen(site.node);
  const args = siteModel.syntax.args(call);
  if (hasSplat(args.list) || factory.className) return undefined;
  const values = new Map<string, Literal | undefined>();
  const decidedBy: string[] = [];
  const valueOf = (name: string): Literal | undefined => {
    if (values.has(name)) return values.get(name);
    const param = factory.params.find((p) => p.name === name);
    let value: Literal | undefined;
    if (param && !reboundNames(factoryModel, factory).has(name)) {
      const given = argumentFor(siteModel, call, param, factory.params[0]?.index ?? 0);
      if (given) value = literalAt(siteModel, { node: given, ctx: site.ctx }, assumed);
      else if (given === undefined && param.defaultValue)
        value = literal(factoryModel.syntax, unparen(param.defaultValue));
    }
    values.set(name, value);
    if (value !== undefined) decidedBy.push(`${name}=${value === null ? 'None' : String(value)}`);
    return value;
  };
  const returned = chosenReturn(factoryModel, factory, valueOf);
  const value = returned ? unparen(returned) : undefined;
  if (value?.type !== 'identifier') return undefined;
  const className = factoryModel.syntax.text(value);
  if (factory.assignments.some((a) => factoryModel.syntax.text(child(a, 'left') ?? a) === className)) return undefined;
  return { className, call, decidedBy };
}

/**
 * The expression a function returns where its parameters have the given literal values: its `return` and `raise`
 * statements in source order, each guarded only by `if`/`elif`/`else` tests over its parameters; the first whose
 * guards all hold is taken, provided every earlier one has a guard that fails. Undefined when a guard is undecided,
 * or the statement taken raises or returns nothing.
 */
export function chosenReturn(
  model: FileModel,
  fn: FunctionInfo,
  valueOf: (name: string) => Literal | undefined,
): PyNode | undefined {
  const exits = fn.nodes.filter((n) => n.type === 'return_statement' || n.type === 'raise_statement');
  for (const exit of exits) {
    const guards = plainGuards(exit, fn);
    if (!guards) return undefined;
    const results = guards.map((g) => {
      const holds = evaluate(model, g.test, valueOf);
      return holds === undefined ? undefined : holds === g.expect;
    });
    if (results.some((r) => r === false)) continue;
    if (results.some((r) => r === undefined) || exit.type === 'raise_statement') return undefined;
    return named(exit)[0];
  }
  return undefined;
}

/** The `if` tests a statement runs under, with the outcome it needs; undefined inside a loop, `try` or `with`. */
export function plainGuards(node: PyNode, fn: FunctionInfo): { test: PyNode; expect: boolean }[] | undefined {
  const out: { test: PyNode; expect: boolean }[] = [];
  let prev = node;
  for (let p = node.parent; p && p !== fn.node; prev = p, p = p.parent) {
    if (p.type === 'block' || p.type === 'else_clause' || p.type === 'expression_statement') continue;
    if (p.type === 'elif_clause') {
      const test = child(p, 'condition');
      if (!test) return undefined;
      out.push({ test, expect: true });
      continue;
    }
    if (p.type !== 'if_statement') return undefined;
    const test = child(p, 'condition');
    if (!test || prev === test) return undefined;
    const inConsequence = prev === child(p, 'consequence');
    out.push({ test, expect: inConsequence });
    // An `elif` or `else` runs only where every earlier `elif` of the same statement failed.
    if (!inConsequence) {
      for (const clause of named(p)) {
        if (clause === prev) break;
        if (clause.type !== 'elif_clause') continue;
        const earlier = child(clause, 'condition');
        if (!earlier) return undefined;
        out.push({ test: earlier, expect: false });
      }
    }
  }
  return out;
}

/** A test over the factory's parameters: names, `not`, `and`, `or`, and `==`/`!=`/`is`/`is not` with a literal. */
function evaluate(model: FileModel, expr: PyNode, valueOf: (name: string) => Literal | undefined): boolean | undefined {
  const s = model.syntax;
  const n = unparen(expr);
  const lit = literal(s, n);
  if (lit !== undefined) return Boolean(lit);
  if (n.type === 'identifier') {
    const v = valueOf(s.text(n));
    return v === undefined ? undefined : Boolean(v);
  }
  if (n.type === 'not_operator') {
    const arg = child(n, 'argument');
    const v = arg ? evaluate(model, arg, valueOf) : undefined;
    return v === undefined ? undefined : !v;
  }
  if (n.type === 'boolean_operator') {
    const l = child(n, 'left');
    const r = child(n, 'right');
    const a = l ? evaluate(model, l, valueOf) : undefined;
    const b = r ? evaluate(model, r, valueOf) : undefined;
    if (s.operator(n) === 'and') return a === false || b === false ? false : a && b ? true : undefined;
    return a === true || b === true ? true : a === false && b === false ? false : undefined;
  }
  if (n.type !== 'comparison_operator') return undefined;
  const parts = named(n);
  const op = n.children
    .filter((c) => !c.named)
    .map((c) => s.text(c))
    .join(' ');
  if (parts.length !== 2 || !['==', '!=', 'is', 'is not'].includes(op)) return undefined;
  const side = (p: PyNode): Literal | undefined => {
    const u = unparen(p);
    return u.type === 'identifier' ? valueOf(s.text(u)) : literal(s, u);
  };
  const a = side(parts[0]);
  const b = side(parts[1]);
  if (a === undefined || b === undefined) return undefined;
  // `is True` holds only for the boolean itself; `== True` also for 1, which a literal argument rarely is.
  const same = a === b;
  return op === '==' || op === 'is' ? same : !same;
}

/**
 * The argument a call passes for a parameter (by keyword, or by position where the parameter takes one);
 * undefined where it passes none, null where a splat hides it.
 */
export function argumentFor(
  model: FileModel,
  call: PyNode,
  param: Param,
  firstIndex: number,
): PyNode | undefined | null {
  const args = model.syntax.args(call);
  const byName = args.keywords.get(param.name)?.value;
  if (byName) return byName;
  if (hasSplat(args.list)) return null;
  const position = keywordOnly(param) ? -1 : param.index - firstIndex;
  return position >= 0 ? args.positional[position] : undefined;
}

function literal(s: FileModel['syntax'], n: PyNode): Literal | undefined {
  if (n.type === 'true') return true;
  if (n.type === 'false') return false;
  if (n.type === 'none') return null;
  const num = s.numberValue(n);
  if (num !== undefined) return num;
  return n.type === 'string' ? s.stringValue(n) : undefined;
}

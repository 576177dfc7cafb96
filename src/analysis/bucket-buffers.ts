// The flat gradient buffers of bucketing optimizers, as the double-division rule (bucket-double-divide.ts) needs
// them: locals that hold a parameter's own gradient, the parameter whose slices a bucket (a list, or a dict of lists
// read back by key) holds, the attribute a view is taken of, and the proof that a buffer passed to a method is the
// one the gradients of an attribute list were pointed into (`grad.data = self.buffer[...].narrow(...)`). Guards are
// compared only as conditions written the same way (`self.flag` needed true and false is a contradiction).
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import { guardsOf } from './conditions';
import { argumentFor, compact } from './bucket-averaging';

/** A condition as written (without `not`) and the value a place needs. */
export interface Constraint {
  readonly text: string;
  readonly value: boolean;
}

const VIEW_METHODS = new Set(['narrow', 'view', 'view_as', 'reshape', 'flatten', 'data', 'split', 'chunk']);

/** Locals holding a parameter's own gradient: `g = p.grad`, `g = self.grad_of(p)` where `grad_of` returns `p.grad`. */
export function gradientLocals(model: FileModel, fn: FunctionInfo): { name: string; param: string }[] {
  const out: { name: string; param: string }[] = [];
  for (const a of fn.assignments) {
    const left = child(a, 'left');
    const right = child(a, 'right');
    if (a.type !== 'assignment' || left?.type !== 'identifier' || !right) continue;
    const param = gradientOf(model, right);
    if (param) out.push({ name: model.syntax.text(left), param });
  }
  return out;
}

/** `p` when the expression is `p.grad` (or `.data` of it), or a method call that returns its argument's `.grad`. */
function gradientOf(model: FileModel, expr: PyNode): string | undefined {
  const s = model.syntax;
  const n = unparen(expr);
  const direct = /^(\w+)\.grad(\.data)?$/.exec(compact(s.text(n)));
  if (direct) return direct[1];
  if (n.type !== 'call') return undefined;
  const callee = model.resolveCall(n);
  const first = s.args(n).positional[0];
  if (!callee || !first || unparen(first).type !== 'identifier') return undefined;
  const params = model.callableParams(callee);
  if (params.length < 1) return undefined;
  return returnsGradientOf(model, callee, params[0].name) ? s.text(unparen(first)) : undefined;
}

/** Some `return` of the function gives `param.grad` (a branch of a conditional expression counts). */
function returnsGradientOf(model: FileModel, fn: FunctionInfo, param: string): boolean {
  const s = model.syntax;
  return fn.nodes.some((n) => {
    if (n.type !== 'return_statement') return false;
    const value = named(n)[0];
    if (!value) return false;
    const v = unparen(value);
    const options = v.type === 'conditional_expression' ? named(v) : [v];
    return options.some((o) => new RegExp(`^${param}\\.grad(\\.data)?$`).test(compact(s.text(o))));
  });
}

export function loopsOver(model: FileModel, loop: PyNode, name: string): boolean {
  const left = child(loop, 'left');
  return !!left && new RegExp(`(^|[^\\w.])${name}([^\\w]|$)`).test(model.syntax.text(left));
}

/**
 * The parameter of `fn` whose slices the bucket holds: `buckets[key]` of a dict of lists, or a list, whose appended
 * items (or the tensors in appended tuples) are all views of that one parameter.
 */
export function slicedParam(model: FileModel, fn: FunctionInfo, bucket: PyNode): string | undefined {
  const s = model.syntax;
  const b = unparen(bucket);
  const container = b.type === 'subscript' ? child(b, 'value') : b;
  if (container?.type !== 'identifier') return undefined;
  const name = s.text(container);
  const keyed = b.type === 'subscript';
  let param: string | undefined;
  for (const call of fn.calls) {
    if (s.calleeName(call) !== 'append') continue;
    const object = s.calleeObject(call);
    if (!object || !fillsContainer(model, object, name, keyed)) continue;
    const item = s.args(call).positional[0];
    const items = item && unparen(item).type === 'tuple' ? named(unparen(item)) : item ? [item] : [];
    for (const it of items) {
      const base = viewBase(model, fn, it, 0);
      if (!base || !fn.params.some((p) => p.name === base)) continue;
      if (param && param !== base) return undefined;
      param = base;
    }
  }
  return param;
}

/** `buckets[k].append`, `buckets.setdefault(k, []).append` for a dict; `bucket.append` for a list. */
function fillsContainer(model: FileModel, object: PyNode, name: string, keyed: boolean): boolean {
  const s = model.syntax;
  const o = unparen(object);
  if (!keyed) return o.type === 'identifier' && s.text(o) === name;
  if (o.type === 'subscript') return compact(s.text(child(o, 'value') ?? o)) === name;
  return o.type === 'call' && s.calleeName(o) === 'setdefault' && compact(s.text(s.calleeObject(o) ?? o)) === name;
}

/** The name (a local's source followed through views) or `self.attr` an expression is a view of. */
export function viewBase(model: FileModel, fn: FunctionInfo, expr: PyNode, depth: number): string | undefined {
  const s = model.syntax;
  const n = unparen(expr);
  if (depth > 6) return undefined;
  if (n.type === 'identifier') {
    const name = s.text(n);
    if (fn.params.some((p) => p.name === name)) return name;
    const values = fn.assignments.filter(
      (a) => a.type === 'assignment' && child(a, 'left')?.type === 'identifier' && s.text(child(a, 'left')!) === name,
    );
    if (values.length !== 1) return undefined;
    return viewBase(model, fn, child(values[0], 'right')!, depth + 1);
  }
  if (n.type === 'subscript') return viewBase(model, fn, child(n, 'value')!, depth + 1);
  if (n.type === 'attribute') {
    const text = compact(s.text(n));
    if (/^self\.\w+$/.test(text)) return text;
    const attr = child(n, 'attribute');
    return attr && s.text(attr) === 'data' ? viewBase(model, fn, child(n, 'object')!, depth + 1) : undefined;
  }
  if (n.type === 'call' && VIEW_METHODS.has(s.calleeName(n))) {
    const object = s.calleeObject(n);
    return object ? viewBase(model, fn, object, depth + 1) : undefined;
  }
  return undefined;
}

export interface Alias {
  /** The call that passes the buffer to the averaging method. */
  readonly site: PyNode;
  /** `grad.data = <slice of the buffer>`. */
  readonly assignment: PyNode;
  readonly buffer: string;
}

/**
 * A call of `fn` passes `self.BUF[...]` for `param`, and a method of the class points the gradient of each parameter
 * it appends to `list` at a slice of `self.BUF`; the guards of both places agree with `constraints` on the object's
 * own flags.
 */
export function aliasedBuffer(
  model: FileModel,
  fn: FunctionInfo,
  param: string,
  list: string,
  constraints: Constraint[],
): Alias | undefined {
  const s = model.syntax;
  const own = (cs: Constraint[]) => cs.filter((c) => /^self\./.test(c.text));
  for (const site of model.callSites.get(fn.name) ?? []) {
    if (model.resolveCall(site.call) !== fn) continue;
    const arg = argumentFor(model, fn, site.call, param);
    const buffer = arg && viewBase(model, site.caller, arg, 0);
    if (!buffer || !/^self\./.test(buffer)) continue;
    const siteConstraints = [...own(constraints), ...own(guardsOf(site.call, site.caller).map(constraintOf(model)))];
    if (!consistent(siteConstraints)) continue;
    for (const method of model.functions) {
      if (method.className !== fn.className) continue;
      for (const a of method.assignments) {
        const left = child(a, 'left');
        const right = child(a, 'right');
        if (a.type !== 'assignment' || left?.type !== 'attribute' || !right) continue;
        if (s.text(child(left, 'attribute')!) !== 'data') continue;
        if (viewBase(model, method, right, 0) !== buffer) continue;
        const gradient = gradientBehind(model, method, child(left, 'object')!);
        if (!gradient || !appendsTo(model, method, list, gradient)) continue;
        const all = [...siteConstraints, ...own(guardsOf(a, method).map(constraintOf(model)))];
        if (consistent(all)) return { site: site.call, assignment: a, buffer };
      }
    }
  }
  return undefined;
}

/** The parameter whose gradient an expression is: `p.grad`, or a local assigned from it. */
function gradientBehind(model: FileModel, fn: FunctionInfo, expr: PyNode): string | undefined {
  const n = unparen(expr);
  const direct = gradientOf(model, n);
  if (direct) return direct;
  if (n.type !== 'identifier') return undefined;
  const name = model.syntax.text(n);
  return gradientLocals(model, fn).find((g) => g.name === name)?.param;
}

function appendsTo(model: FileModel, fn: FunctionInfo, list: string, name: string): boolean {
  const s = model.syntax;
  return fn.calls.some((call) => {
    const object = s.calleeObject(call);
    const item = s.args(call).positional[0];
    return (
      s.calleeName(call) === 'append' &&
      !!object &&
      compact(s.text(object)) === list &&
      !!item &&
      new RegExp(`(^|[^\\w.])${name}([^\\w]|$)`).test(s.text(item))
    );
  });
}

export function constraintOf(model: FileModel): (g: { test: PyNode; expect: boolean }) => Constraint {
  return (g) => {
    let n = unparen(g.test);
    let value = g.expect;
    while (n.type === 'not_operator' && child(n, 'argument')) {
      n = unparen(child(n, 'argument')!);
      value = !value;
    }
    return { text: compact(model.syntax.text(n)), value };
  };
}

export function consistent(constraints: Constraint[]): boolean {
  const seen = new Map<string, boolean>();
  for (const c of constraints) {
    if (seen.has(c.text) && seen.get(c.text) !== c.value) return false;
    seen.set(c.text, c.value);
  }
  return true;
}

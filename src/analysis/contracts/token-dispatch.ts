// The expert-parallel token dispatch as torch's parallel-style contract states it. A `ParallelStyle` whose `_apply`
// returns `distribute_module(module, device_mesh, …, input_fn=self.<m>)` runs `<m>` on the module's inputs before
// every forward (`distribute_module` registers it as a forward pre-hook); when `<m>` moves the inputs with
// `all_to_all_single_autograd` over that mesh's group, the module computes on tokens sent by every rank of the mesh,
// and the backward of the all-to-all returns each token's gradient to the rank it came from. So the gradient of the
// module's own parameters is the sum of the contributions of the tokens of all the mesh's ranks: the MoE dispatch.
// `parallelize_module(module, mesh, Style())` applies the style to a module on a mesh.
//
// Read per file: the dispatching style classes (the all-to-all written in the input hook, over the `_apply` mesh),
// and the applications of a style to a module with the plan written as a constructor call or as a local of the same
// function, every value of which is listed (so a plan chosen by a condition is seen as its alternatives). A style
// that overrides the hook, a plan from elsewhere, or a hook that moves tokens over another group is not a dispatch.
import { child, named, unparen, visit, type PyNode } from '../tree';
import type { Located } from './expert-facts';
import { enclosingDefinition, parameterNames, type FileSyntax } from './placement-syntax';

const PARALLEL_STYLE = /^torch\.distributed\.tensor\.parallel(\.style)?\.ParallelStyle$/;
const DISTRIBUTE_MODULE = /^torch\.distributed\.(_tensor|tensor)(\._api|\.api)?\.distribute_module$/;
const PARALLELIZE_MODULE = /^torch\.distributed\.tensor\.parallel(\.api)?\.parallelize_module$/;
const ALL_TO_ALL_AUTOGRAD = /^torch\.distributed\._functional_collectives\.all_to_all_single_autograd$/;

export interface DispatchStyle {
  readonly cls: string;
  /** The input hook's method name. */
  readonly hook: string;
  /** The all-to-all that moves the module's inputs over the style's mesh. */
  readonly dispatch: Located;
}

export interface StyleApplication {
  /** The module and the mesh as written (`transformer_block.moe.experts`, `experts_mesh`). */
  readonly module: string;
  readonly mesh: string;
  /** The style classes the plan may be: one per constructor call among the plan's values; `null` for any other. */
  readonly plans: readonly (string | null)[];
  readonly fn: string;
  readonly site: Located;
  /** The call and its function, for readers that pair the plan with the mesh per branch. */
  readonly call: PyNode;
  readonly fnNode: PyNode;
}

export function readDispatchStyles(syntax: FileSyntax): DispatchStyle[] {
  const out: DispatchStyle[] = [];
  for (const cls of named(syntax.module).filter((n) => n.type === 'class_definition')) {
    const bases = child(cls, 'superclasses');
    if (!bases || !named(bases).some((b) => PARALLEL_STYLE.test(syntax.qualified(syntax.text(b))))) continue;
    const methods = new Map<string, PyNode>();
    for (const m of named(child(cls, 'body') ?? cls)) {
      const def = m.type === 'decorated_definition' ? child(m, 'definition') : m;
      if (def?.type === 'function_definition') methods.set(syntax.text(child(def, 'name') ?? def), def);
    }
    const hook = inputHook(syntax, methods.get('_apply'));
    const dispatch = hook && dispatchIn(syntax, methods.get(hook));
    if (hook && dispatch)
      out.push({ cls: syntax.text(child(cls, 'name') ?? cls), hook, dispatch: syntax.located(dispatch) });
  }
  return out;
}

/** The method `_apply` hands to `distribute_module` as `input_fn`, with the module and mesh passed on unchanged. */
function inputHook(syntax: FileSyntax, apply: PyNode | undefined): string | undefined {
  if (!apply) return undefined;
  const [, moduleParam, meshParam] = parameterNames(apply, syntax);
  let hook: string | undefined;
  visit(apply, (n) => {
    if (n.type !== 'call' || !DISTRIBUTE_MODULE.test(syntax.qualified(syntax.callee(n)))) return undefined;
    const module = syntax.arg(n, 0, 'module');
    const mesh = syntax.arg(n, 1, 'device_mesh');
    const input = syntax.arg(n, 3, 'input_fn');
    if (!module || !mesh || syntax.text(module) !== moduleParam || syntax.text(mesh) !== meshParam) return undefined;
    hook = input ? /^self\.(\w+)$/.exec(syntax.text(input))?.[1] : undefined;
    return undefined;
  });
  return hook;
}

/** `all_to_all_single_autograd(…, <mesh>.get_group())` in the hook `(self, module, inputs, mesh)`. */
function dispatchIn(syntax: FileSyntax, hook: PyNode | undefined): PyNode | undefined {
  if (!hook) return undefined;
  const mesh = parameterNames(hook, syntax)[3];
  let found: PyNode | undefined;
  visit(hook, (n) => {
    if (found || n.type !== 'call' || !ALL_TO_ALL_AUTOGRAD.test(syntax.qualified(syntax.callee(n)))) return undefined;
    const group = syntax.arg(n, 3, 'group');
    if (group && mesh && new Set([mesh, `${mesh}.get_group()`]).has(syntax.text(group))) found = n;
    return undefined;
  });
  return found;
}

export function readStyleApplications(syntax: FileSyntax): StyleApplication[] {
  const out: StyleApplication[] = [];
  visit(syntax.module, (n) => {
    if (n.type !== 'call' || !PARALLELIZE_MODULE.test(syntax.qualified(syntax.callee(n)))) return undefined;
    const module = syntax.arg(n, 0, 'module');
    const mesh = syntax.arg(n, 1, 'device_mesh');
    const plan = syntax.arg(n, 2, 'parallelize_plan');
    const fn = enclosingDefinition(n, 'function_definition');
    if (!module || !mesh || !plan || !fn) return undefined;
    out.push({
      module: syntax.text(module),
      mesh: syntax.text(mesh),
      plans: planValues(syntax, fn, unparen(plan)).map((v) => (v.type === 'call' ? syntax.callee(v) : null)),
      fn: syntax.text(child(fn, 'name') ?? fn),
      site: syntax.located(n),
      call: n,
      fnNode: fn,
    });
    return undefined;
  });
  return out;
}

/** The plan written, or every value a local of the same function is given (`None` included). */
function planValues(syntax: FileSyntax, fn: PyNode, plan: PyNode): PyNode[] {
  if (plan.type !== 'identifier') return [plan];
  const name = syntax.text(plan);
  const values: PyNode[] = [];
  visit(fn, (n) => {
    if (n !== fn && (n.type === 'function_definition' || n.type === 'class_definition')) return false;
    if (n.type !== 'assignment') return undefined;
    const left = child(n, 'left');
    const right = child(n, 'right');
    if (!left || !right) return undefined;
    // `a, b = x, y` assigns element by element; anything else that names the plan is a value not read.
    const targets = left.type === 'pattern_list' ? named(left) : [left];
    const sources = left.type === 'pattern_list' && right.type === 'expression_list' ? named(right) : [right];
    targets.forEach((t, i) => {
      if (syntax.text(t) === name) values.push(unparen(sources.length === targets.length ? sources[i] : right));
    });
    return undefined;
  });
  return values.length > 0 ? values : [plan];
}

/**
 * A subclass of another class (one base, named): the input hook its own `_apply` registers, if it defines one, and
 * the hooks it overrides as `return super().<hook>(module, inputs, self.<attr>)` with `self.<attr>` a constructor
 * parameter (torchtitan's `ExpertTensorParallel` dispatches over the expert-parallel mesh given to its constructor,
 * while its `_apply` mesh is the expert-and-tensor-parallel one). Any other override is recorded as unread.
 */
export interface StyleSubclass {
  readonly cls: string;
  readonly base: string;
  readonly inputHook?: string;
  /** Overridden methods: the constructor parameter (after `self`) a delegating hook passes on, or null if unread. */
  readonly overrides: ReadonlyMap<string, { readonly meshIndex: number; readonly meshParam: string } | null>;
}

export function readStyleSubclasses(syntax: FileSyntax): StyleSubclass[] {
  const out: StyleSubclass[] = [];
  for (const cls of named(syntax.module).filter((n) => n.type === 'class_definition')) {
    const bases = named(child(cls, 'superclasses') ?? cls);
    if (bases.length !== 1 || bases[0].type !== 'identifier') continue;
    const methods = new Map<string, PyNode>();
    for (const m of named(child(cls, 'body') ?? cls)) {
      const def = m.type === 'decorated_definition' ? child(m, 'definition') : m;
      if (def?.type === 'function_definition') methods.set(syntax.text(child(def, 'name') ?? def), def);
    }
    const init = methods.get('__init__');
    const initParams = init ? parameterNames(init, syntax) : [];
    const overrides = new Map<string, { meshIndex: number; meshParam: string } | null>();
    for (const [name, method] of methods) {
      if (name === '__init__' || name === '_apply') continue;
      overrides.set(name, init ? delegatedMesh(syntax, name, method, init, initParams) : null);
    }
    const hook = inputHook(syntax, methods.get('_apply'));
    out.push({
      cls: syntax.text(child(cls, 'name') ?? cls),
      base: syntax.text(bases[0]),
      ...(hook ? { inputHook: hook } : {}),
      overrides,
    });
  }
  return out;
}

function delegatedMesh(
  syntax: FileSyntax,
  name: string,
  method: PyNode,
  init: PyNode,
  initParams: readonly string[],
): { meshIndex: number; meshParam: string } | null {
  const body = named(child(method, 'body') ?? method);
  const call = body.length === 1 && body[0].type === 'return_statement' ? named(body[0])[0] : undefined;
  const match = call ? /^super\(\)\.(\w+)\((\w+),(\w+),self\.(\w+)\)$/.exec(syntax.text(call)) : null;
  const params = parameterNames(method, syntax);
  if (!match || match[1] !== name || match[2] !== params[1] || match[3] !== params[2]) return null;
  const stored: string[] = [];
  visit(init, (n) => {
    if (n.type !== 'assignment' || syntax.text(child(n, 'left') ?? n) !== `self.${match[4]}`) return undefined;
    const right = child(n, 'right');
    stored.push(right?.type === 'identifier' ? syntax.text(right) : '');
    return undefined;
  });
  const index = stored.length === 1 ? initParams.indexOf(stored[0]) : -1;
  return index > 0 ? { meshIndex: index - 1, meshParam: stored[0] } : null;
}

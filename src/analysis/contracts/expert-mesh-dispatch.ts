// Part (c) of the expert-mesh proof (expert-mesh-average.ts): the module a function wraps for every layer receives
// its inputs through a token dispatch, and over which mesh. The program applies a parallel style to the same
// sub-module of every layer (`parallelize_module(block.moe.experts, mesh, plan)` in a function the wrapping function
// calls with the same model); the plan and its mesh are read per branch of that function, and only the branches
// the call's arguments allow are kept (a mesh argument passed as `m if c else None`, with `c` known where the
// experts are wrapped, makes `m is None` false). Every kept plan must dispatch tokens (token-dispatch.ts), over a
// mesh that is one parameter of the applying function; the wrapping function's argument for it is the dispatch mesh.
import { child, named, unparen, type PyNode } from '../tree';
import { guardsOf, Known } from './branch-guards';
import { pairedValues } from './branch-values';
import type { LocatedStyle, ProgramFacts } from './expert-mesh-types';
import { parameterNames, type FileSyntax } from './placement-syntax';
import type { StyleApplication } from './token-dispatch';

export interface Dispatched {
  /** The wrapping function's argument that is the dispatch mesh. */
  readonly mesh: PyNode;
  readonly application: { path: string; item: StyleApplication };
  readonly style: LocatedStyle;
}

/** The loop that makes `target`'s first name every layer of the model: `for _, v in model.<attr>.items()`. */
export function loopOver(
  syntax: FileSyntax,
  target: PyNode,
  model: string,
): { variable: string; path: string } | undefined {
  const [variable, ...path] = syntax.text(target).split('.');
  if (path.length === 0) return undefined;
  for (let n = target.parent; n; n = n.parent) {
    if (n.type !== 'for_statement') continue;
    const left = child(n, 'left');
    const right = child(n, 'right');
    const names = left ? (left.type === 'identifier' ? [left] : named(left)).map((t) => syntax.text(t)) : [];
    if (names[names.length - 1] !== variable || !right) continue;
    const over = /^(\w+)\.(\w+)(\.(items|values)\(\))?$/.exec(syntax.text(right));
    const shape = over && (over[4] === 'items' ? names.length === 2 : names.length === 1);
    return over && over[1] === model && shape ? { variable, path: `${over[2]}.${path.join('.')}` } : undefined;
  }
  return undefined;
}

export function dispatchOf(
  syntax: FileSyntax,
  fn: PyNode,
  known: Known,
  model: string,
  path: string,
  program: ProgramFacts,
): Dispatched | undefined {
  const found: Dispatched[] = [];
  for (const application of program.applications) {
    const a = application.syntax;
    const g = application.item.fnNode;
    const params = parameterNames(g, a);
    const module = a.arg(application.item.call, 0, 'module');
    const layer = module && loopOver(a, module, params[0]);
    if (!layer || layer.path !== path) continue;
    const call = callOf(syntax, fn, application.item.fn, model);
    if (!call || known.all(guardsOf(syntax, call, fn)) !== true) continue;
    const bound = (index: number): PyNode | null | undefined => {
      const arg = syntax.arg(call, index, params[index]);
      return arg ? decided(syntax, known, arg) : undefined;
    };
    const facts = new Known();
    const assumed = facts.with(
      params.slice(1).flatMap((p, i) => {
        const value = bound(i + 1);
        if (value === undefined) return [];
        return [value === null ? { atom: `${p}isNone` } : { not: { atom: `${p}isNone` } }];
      }),
    );
    const dispatched = planMeshes(a, g, application.item.call, assumed, program);
    if (!dispatched || new Set(dispatched.map((d) => d.mesh)).size !== 1) continue;
    const index = params.indexOf(dispatched[0].mesh);
    const mesh = index > 0 ? bound(index) : undefined;
    if (mesh) found.push({ mesh, application, style: dispatched[0].style });
  }
  return found.length === 1 ? found[0] : undefined;
}

/** The call of the applying function with the model as its first argument, when there is exactly one in `fn`. */
function callOf(syntax: FileSyntax, fn: PyNode, name: string, model: string): PyNode | undefined {
  const calls: PyNode[] = [];
  const stack: PyNode[] = [...fn.children];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'function_definition' || n.type === 'class_definition') continue;
    stack.push(...n.children);
    if (n.type !== 'call') continue;
    const callee = syntax.callee(n);
    if (callee !== name && !callee.endsWith(`.${name}`)) continue;
    const first = syntax.arg(n, 0, '');
    if (first && syntax.text(first) === model) calls.push(n);
  }
  return calls.length === 1 ? calls[0] : undefined;
}

/** An argument's value where it is decided: `x if c else None` with `c` known; null for `None`. */
function decided(syntax: FileSyntax, known: Known, arg: PyNode): PyNode | null | undefined {
  const v = unparen(arg);
  if (syntax.text(v) === 'None') return null;
  if (v.type !== 'conditional_expression') return v;
  const [yes, condition, no] = named(v);
  const holds = condition ? known.value({ atom: syntax.text(condition) }) : undefined;
  if (holds === undefined) return undefined;
  return decided(syntax, known, holds ? yes : no);
}

/** Each kept plan of the application with the name of the mesh it dispatches over (a parameter of `g`). */
function planMeshes(
  a: FileSyntax,
  g: PyNode,
  call: PyNode,
  known: Known,
  program: ProgramFacts,
): { mesh: string; style: LocatedStyle }[] | undefined {
  const plan = a.arg(call, 2, 'parallelize_plan');
  const mesh = a.arg(call, 1, 'device_mesh');
  if (!plan || !mesh) return undefined;
  const pairs =
    plan.type === 'identifier' && mesh.type === 'identifier'
      ? pairedValues(a, g, a.text(plan), a.text(mesh))
      : [{ first: plan, second: mesh, guards: [] }];
  if (!pairs) return undefined;
  const kept = pairs.filter((p) => known.all(p.guards) !== false);
  const out: { mesh: string; style: LocatedStyle }[] = [];
  for (const p of kept) {
    const resolved = styleMesh(a, unparen(p.first), unparen(p.second), program);
    if (!resolved) return undefined;
    out.push(resolved);
  }
  return out.length > 0 ? out : undefined;
}

/** The mesh a constructed plan dispatches over, as a name in the applying function, or undefined. */
function styleMesh(
  a: FileSyntax,
  plan: PyNode,
  mesh: PyNode,
  program: ProgramFacts,
): { mesh: string; style: LocatedStyle } | undefined {
  if (plan.type !== 'call' || mesh.type !== 'identifier') return undefined;
  const cls = a.callee(plan);
  const direct = program.styles.get(cls);
  if (direct) return { mesh: a.text(mesh), style: direct };
  const sub = program.subclasses.get(cls);
  const base = sub ? program.styles.get(sub.base) : undefined;
  if (!sub || !base || (sub.inputHook !== undefined && sub.inputHook !== base.hook)) return undefined;
  // Every override must be read: the hook delegating with a constructor mesh, or a method the hook does not use.
  const hook = sub.overrides.get(base.hook);
  if (hook === undefined) return sub.overrides.size === 0 ? { mesh: a.text(mesh), style: base } : undefined;
  if (hook === null) return undefined;
  const arg = a.arg(plan, hook.meshIndex, hook.meshParam);
  return arg?.type === 'identifier' ? { mesh: a.text(arg), style: base } : undefined;
}

// The backward reduction of a DTensor parametrization (torch's DTensor contract). A module that hands a parameter on
// as `x.redistribute(placements=[Replicate()] * n).to_local(grad_placements=[Partial("avg")] * n)` all-gathers the
// parameter in the forward and declares the gradient of the local tensor a partial value: in the backward,
// `redistribute`'s transpose reduce-scatters (or all-reduces) that gradient with `avg` over the parameter's mesh. So
// a function that distributes a model's parameters on a mesh it is given and registers such a module as their
// parametrization averages the gradients of those parameters over that mesh, for each call with the mesh of the
// call (SimpleFSDP's `data_parallel(model, mesh, …)` → `ReplicateComputation(device_mesh, …)`).
//
// Read per file: the class (its constructor stores the mesh parameter, the gradient placements are `Partial("avg")`
// for every dimension of that mesh, and a method redistributes a tensor on that mesh to `Replicate()` and hands it
// on with those gradient placements) and the functions that bind it (the class constructed with the function's own
// parameter as the mesh, the parameters distributed with torch's `distribute_tensor` on the same parameter, and the
// module returned). A `Partial` subclass (`_ScaledPartial`, which divides by a factor of its own and sums), a
// placement chosen by a condition, a reduce op the code computes or another mesh is not read.
import { child, named, unparen, visit, type PyNode } from '../tree';
import type { Located } from './expert-facts';
import { enclosingDefinition, parameterNames, type FileSyntax } from './placement-syntax';

const DISTRIBUTE_TENSOR = /^torch\.distributed\.(_tensor|tensor)(\._api|\.api)?\.distribute_tensor$/;
const FROM_LOCAL = /^torch\.distributed\.(_tensor|tensor)(\._api|\.api)?\.DTensor\.from_local$/;

/** A function that averages the gradients of a module's parameters over a mesh it is given, in the backward. */
export interface BackwardAverager {
  readonly fn: string;
  /** Positions of the module and of the mesh among the function's parameters. */
  readonly moduleIndex: number;
  readonly meshIndex: number;
  readonly meshParam: string;
  /** The `Partial("avg")` that chooses the divisor: the mesh's size. */
  readonly placement: Located;
  readonly cls: string;
}

interface AveragingClass {
  readonly name: string;
  /** The constructor parameter (after `self`) that is the mesh, by position and by name. */
  readonly meshIndex: number;
  readonly meshParam: string;
  readonly placement: PyNode;
}

export function readBackwardAveragers(syntax: FileSyntax): BackwardAverager[] {
  const classes = new Map<string, AveragingClass>();
  for (const cls of named(syntax.module).filter((n) => n.type === 'class_definition')) {
    const found = averagingClass(syntax, cls);
    if (found) classes.set(found.name, found);
  }
  if (classes.size === 0) return [];
  const out: BackwardAverager[] = [];
  for (const fn of topLevelFunctions(syntax.module)) {
    const bound = bindingOf(syntax, fn, classes);
    if (bound) out.push(bound);
  }
  return out;
}

function topLevelFunctions(module: PyNode): PyNode[] {
  return named(module)
    .map((n) => (n.type === 'decorated_definition' ? child(n, 'definition') : n))
    .filter((n): n is PyNode => n?.type === 'function_definition');
}

/** `self.<attr> = <value>` assignments of one method, by attribute. */
function selfAssignments(syntax: FileSyntax, method: PyNode): Map<string, PyNode[]> {
  const out = new Map<string, PyNode[]>();
  visit(method, (n) => {
    if (n !== method && (n.type === 'function_definition' || n.type === 'class_definition')) return false;
    if (n.type !== 'assignment') return undefined;
    const left = child(n, 'left');
    const right = child(n, 'right');
    const match = left ? /^self\.(\w+)$/.exec(syntax.text(left)) : null;
    if (match && right) out.set(match[1], [...(out.get(match[1]) ?? []), right]);
    return undefined;
  });
  return out;
}

function averagingClass(syntax: FileSyntax, cls: PyNode): AveragingClass | undefined {
  const body = child(cls, 'body');
  if (!body) return undefined;
  const methods = named(body)
    .map((n) => (n.type === 'decorated_definition' ? child(n, 'definition') : n))
    .filter((n): n is PyNode => n?.type === 'function_definition');
  const init = methods.find((m) => syntax.text(child(m, 'name') ?? m) === '__init__');
  if (!init) return undefined;
  const params = parameterNames(init, syntax);
  const assigned = selfAssignments(syntax, init);
  const once = (attr: string) => (assigned.get(attr)?.length === 1 ? assigned.get(attr)![0] : undefined);
  // The mesh: a constructor parameter stored once on the instance.
  const meshes = new Map<string, number>();
  for (const [attr, values] of assigned) {
    const index = values.length === 1 && values[0].type === 'identifier' ? params.indexOf(syntax.text(values[0])) : -1;
    if (index > 0) meshes.set(attr, index);
  }
  for (const method of methods) {
    for (const site of handOns(syntax, method)) {
      const grad = /^self\.(\w+)$/.exec(syntax.text(site.gradPlacements));
      const value = grad ? once(grad[1]) : undefined;
      const avg = syntax.uniformPlacement(value);
      if (!avg || avg.kind !== 'Partial' || avg.op !== 'avg') continue;
      const mesh = meshOf(syntax, site, method, meshes, avg.repeat);
      if (mesh === undefined) continue;
      const meshIndex = meshes.get(mesh)!;
      return {
        name: syntax.text(child(cls, 'name') ?? cls),
        meshIndex: meshIndex - 1,
        meshParam: params[meshIndex],
        placement: avg.call,
      };
    }
  }
  return undefined;
}

interface HandOn {
  /** The tensor redistributed (a parameter of the method, or a local made with `DTensor.from_local`). */
  readonly source: PyNode;
  readonly gradPlacements: PyNode;
}

/** `<t>.redistribute(placements=<Replicate list>, …).to_local(grad_placements=<g>)`, directly or through a local. */
function handOns(syntax: FileSyntax, method: PyNode): HandOn[] {
  const out: HandOn[] = [];
  visit(method, (n) => {
    if (n.type !== 'call' || !syntax.callee(n).endsWith('.to_local')) return undefined;
    const grad = syntax.args(n).keywords.get('grad_placements');
    const object = child(child(n, 'function'), 'object');
    if (!grad || !object) return undefined;
    const redistribute = redistributeCall(syntax, unparen(object), method);
    if (!redistribute) return undefined;
    const target = syntax.arg(redistribute, 1, 'placements');
    const placed = target && resolveSelf(syntax, method, target);
    if (syntax.arg(redistribute, 0, 'device_mesh') || syntax.uniformPlacement(placed)?.kind !== 'Replicate')
      return undefined;
    const source = child(child(redistribute, 'function'), 'object');
    if (source) out.push({ source: unparen(source), gradPlacements: grad });
    return undefined;
  });
  return out;
}

function redistributeCall(syntax: FileSyntax, node: PyNode, method: PyNode): PyNode | undefined {
  if (node.type === 'call') return syntax.callee(node).endsWith('.redistribute') ? node : undefined;
  if (node.type !== 'identifier') return undefined;
  const value = localValue(syntax, method, syntax.text(node));
  return value?.type === 'call' && syntax.callee(value).endsWith('.redistribute') ? value : undefined;
}

/** The one value a name is assigned in a function, or undefined. */
function localValue(syntax: FileSyntax, fn: PyNode, name: string): PyNode | undefined {
  const values: PyNode[] = [];
  visit(fn, (n) => {
    if (n !== fn && (n.type === 'function_definition' || n.type === 'class_definition')) return false;
    if (n.type === 'assignment' && syntax.text(child(n, 'left') ?? n) === name) {
      const right = child(n, 'right');
      if (right) values.push(unparen(right));
    }
    return undefined;
  });
  return values.length === 1 ? values[0] : undefined;
}

/** `self.<attr>` read as the one value the class's `__init__` gives it. */
function resolveSelf(syntax: FileSyntax, method: PyNode, node: PyNode): PyNode | undefined {
  const match = /^self\.(\w+)$/.exec(syntax.text(node));
  if (!match) return node;
  const cls = enclosingDefinition(method, 'class_definition');
  const init = named(child(cls, 'body') ?? method).find(
    (m) => m.type === 'function_definition' && syntax.text(child(m, 'name') ?? m) === '__init__',
  );
  const values = init ? selfAssignments(syntax, init).get(match[1]) : undefined;
  return values?.length === 1 ? values[0] : undefined;
}

/**
 * The stored mesh attribute the redistributed tensor lives on: a local made by `DTensor.from_local(t, self.<m>, …)`,
 * or the method's own tensor parameter (whose mesh is the one the binding function distributes it on, checked
 * there). The placements must cover that mesh: repeated `self.<m>.ndim` times, or written once.
 */
function meshOf(
  syntax: FileSyntax,
  site: HandOn,
  method: PyNode,
  meshes: ReadonlyMap<string, number>,
  repeat: PyNode | undefined,
): string | undefined {
  const covered = repeat ? /^self\.(\w+)\.ndim$/.exec(syntax.text(repeat))?.[1] : undefined;
  if (repeat && (!covered || !meshes.has(covered))) return undefined;
  const params = parameterNames(method, syntax);
  let mesh: string | undefined;
  if (site.source.type === 'identifier' && params.indexOf(syntax.text(site.source)) > 0) {
    mesh = covered ?? (meshes.size === 1 ? [...meshes.keys()][0] : undefined);
  } else if (site.source.type === 'identifier') {
    const made = localValue(syntax, method, syntax.text(site.source));
    if (made?.type !== 'call' || !FROM_LOCAL.test(syntax.qualified(syntax.callee(made)))) return undefined;
    const meshArg = syntax.arg(made, 1, 'device_mesh');
    const local = meshArg?.type === 'identifier' ? localValue(syntax, method, syntax.text(meshArg)) : meshArg;
    mesh = local ? /^self\.(\w+)$/.exec(syntax.text(local))?.[1] : undefined;
  }
  return mesh !== undefined && meshes.has(mesh) && (covered === undefined || covered === mesh) ? mesh : undefined;
}

/**
 * A function that constructs an averaging class with its own parameter as the mesh, distributes tensors with torch's
 * `distribute_tensor` on the same parameter, and returns its first parameter (the module it wraps).
 */
function bindingOf(
  syntax: FileSyntax,
  fn: PyNode,
  classes: ReadonlyMap<string, AveragingClass>,
): BackwardAverager | undefined {
  const params = parameterNames(fn, syntax);
  let found: BackwardAverager | undefined;
  let distributes = new Set<string>();
  let returnsModule = false;
  visit(fn, (n) => {
    if (n !== fn && (n.type === 'function_definition' || n.type === 'class_definition')) return false;
    if (n.type === 'return_statement') returnsModule ||= syntax.text(named(n)[0] ?? n) === params[0];
    if (n.type !== 'call') return undefined;
    const callee = syntax.callee(n);
    const cls = classes.get(callee);
    const mesh = cls && syntax.arg(n, cls.meshIndex, cls.meshParam);
    const meshIndex = mesh ? params.indexOf(syntax.text(mesh)) : -1;
    if (cls && meshIndex > 0) {
      found = {
        fn: syntax.text(child(fn, 'name') ?? fn),
        moduleIndex: 0,
        meshIndex,
        meshParam: params[meshIndex],
        placement: syntax.located(cls.placement),
        cls: cls.name,
      };
    }
    if (distributesTensors(syntax, fn, callee)) {
      const meshArg = syntax.arg(n, 1, 'device_mesh');
      if (meshArg) distributes = new Set([...distributes, syntax.text(meshArg)]);
    }
    return undefined;
  });
  // A later call on a model whose sub-modules an earlier call wrapped must leave them as they are (a `continue` in
  // the loop over the modules): otherwise their gradients would be averaged twice, and no single mesh decides them.
  let skips = false;
  visit(fn, (n) => {
    if (n.type === 'continue_statement') skips = true;
  });
  return found && returnsModule && skips && distributes.size === 1 && distributes.has(found.meshParam)
    ? found
    : undefined;
}

/** torch's `distribute_tensor`, or a local chosen between it and another function by a condition. */
function distributesTensors(syntax: FileSyntax, fn: PyNode, callee: string): boolean {
  if (DISTRIBUTE_TENSOR.test(syntax.qualified(callee))) return true;
  if (!/^\w+$/.test(callee)) return false;
  const value = localValue(syntax, fn, callee);
  if (value?.type !== 'conditional_expression') return false;
  return named(value).some((branch) => DISTRIBUTE_TENSOR.test(syntax.qualified(syntax.text(branch))));
}

// CP003 for the gradient of a summed loss averaged over the devices (the JAX SAM baseline of algoperf before
// f845bf3). A loss function that returns the sum of its examples' losses, with their count beside it, has a gradient
// that must be summed over the devices and divided by the summed count. `lax.pmean` of that gradient divides by the
// number of devices instead, so the update is the examples per device times the mean gradient.
//
// The rule speaks only when the file itself proves that the loss is such a sum: one call of the gradient function
// (`jax.value_and_grad(loss_fn, has_aux=True)`, or `jax.grad`) has its gradient `lax.psum`-ed together with a count
// from the loss function's auxiliary output, and divided by the summed count (`tree_map(lambda x: x / n, grad)`),
// over the same axis as the `pmean`. Another call of that same gradient function then has its gradient `pmean`-ed,
// with nothing rescaling it afterwards other than clipping by its own norm. The gradient function is followed to
// the `pmean` through the file's values (value-origins.ts): a parameter bound at a call site, a tuple passed as an
// argument and unpacked, an optax `GradientTransformation(init, update)` whose `update` is called through the value
// returned, and the algoperf submission API, whose runner passes what `init_optimizer_state` returns to
// `update_params` as `optimizer_state` (algorithmic_efficiency's submission_runner.py and spec.py).
import { child, named, unparen, visit, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import { nameAt, reachingAssignment, subtreeAt, ValueOrigins } from './value-origins';
import { algoperfSubmissionApi } from './contracts/algoperf-submission';
import type { ExplainedVerdict } from './findings';
import { clip } from './messages';

interface GradientFunction {
  /** The `jax.value_and_grad(...)`/`jax.grad(...)` call. */
  readonly node: PyNode;
  readonly lossName: string;
  /** Where the gradient and the auxiliary output sit in what calling the gradient function returns. */
  readonly gradientAt: readonly number[];
  readonly auxAt: readonly number[] | undefined;
  /** The calls that pass the gradient function on, as parameters, on the way to the call that is judged. */
  readonly passedBy: readonly PyNode[];
}

interface CountNormalisation {
  readonly call: PyNode;
  readonly psum: PyNode;
  readonly division: PyNode;
  readonly count: string;
  readonly axis: string;
}

export function summedLossPmeanVerdicts(model: FileModel): ExplainedVerdict[] {
  const pmeans = model.functions.flatMap((fn) => fn.calls.filter((c) => isJaxCollective(model, c, 'pmean')));
  if (pmeans.length === 0) return [];
  const origins = new ValueOrigins(model, algoperfSubmissionApi(model));
  const out: ExplainedVerdict[] = [];
  for (const pmean of pmeans) {
    const fn = model.enclosingFunction(pmean);
    const verdict = fn ? judgePmean(model, origins, pmean, fn) : undefined;
    if (verdict) out.push(verdict);
  }
  return out;
}

function judgePmean(
  model: FileModel,
  origins: ValueOrigins,
  pmean: PyNode,
  fn: FunctionInfo,
): ExplainedVerdict | undefined {
  const syntax = model.syntax;
  const reduced = syntax.args(pmean).positional[0];
  if (!reduced || unparen(reduced).type !== 'identifier') return undefined;
  const name = syntax.text(unparen(reduced));
  const made = reachingAssignment(model, name, pmean.start, fn);
  if (!made || made === 'unknown') return undefined;
  const producer = unparen(child(made.node, 'right')!);
  if (producer.type !== 'call') return undefined;
  const gradient = gradientFunctionOf(model, origins, producer, fn);
  if (!gradient || !samePath(made.position, gradient.gradientAt)) return undefined;
  const axis = axisOf(model, origins, pmean, fn);
  if (axis === undefined) return undefined;
  const evidence = countNormalisation(model, origins, gradient, producer, axis);
  if (!evidence) return undefined;
  const result = assignedName(model, pmean);
  if (!result || rescaledAfter(model, fn, result, pmean) || !reachesUpdate(model, fn, result, pmean)) return undefined;
  const line = (n: PyNode) => syntax.source.lineOf(n) + 1;
  return {
    node: pmean,
    message:
      `\`lax.pmean\` averages \`${name}\`, the gradient of \`${gradient.lossName}\` (line ${line(gradient.node)}), ` +
      `over the '${axis}' axis, so it divides by the number of devices; but this file treats that loss as a sum ` +
      `over examples: at line ${line(evidence.division)} the same gradient is summed over '${axis}' with ` +
      `\`${evidence.count}\`, the count \`${gradient.lossName}\` returns beside it, and divided by the summed count. ` +
      `The averaged gradient is B× the mean gradient (B: the examples per device), so the effective learning rate ` +
      `is B× the configured one. Sum the gradient and the count over '${axis}' and divide one by the other.`,
    related: [
      { node: producer, message: `\`${clip(syntax.text(producer), 60)}\`: the gradient that is averaged` },
      { node: gradient.node, message: `the gradient function of \`${gradient.lossName}\`` },
      ...gradient.passedBy.map((call) => ({
        node: call,
        message: `\`${clip(syntax.text(call), 60)}\` passes the gradient function on`,
      })),
      { node: evidence.psum, message: `the same gradient and \`${evidence.count}\` summed over ${axis}` },
      { node: evidence.division, message: `divided by the summed \`${evidence.count}\`` },
    ],
  };
}

/** The gradient function a call invokes, when every origin of its callee is the same `value_and_grad`/`grad`. */
function gradientFunctionOf(
  model: FileModel,
  origins: ValueOrigins,
  call: PyNode,
  fn: FunctionInfo,
): GradientFunction | undefined {
  const callee = child(call, 'function');
  if (!callee || callee.type !== 'identifier') return undefined;
  const passedBy: PyNode[] = [];
  const found = origins.of(callee, fn, [], 0, passedBy);
  if (!found || found.length === 0 || found.some((o) => o.node !== found[0].node)) return undefined;
  const made = found[0].node;
  if (made.type !== 'call') return undefined;
  const syntax = model.syntax;
  const kind = jaxName(model, made);
  if (kind !== 'value_and_grad' && kind !== 'grad') return undefined;
  const loss = syntax.arg(made, 'fun', 0);
  if (!loss) return undefined;
  const aux = syntax.arg(made, 'has_aux', -1);
  const hasAux = aux !== undefined && syntax.text(aux) === 'True';
  if (aux !== undefined && !hasAux && syntax.text(aux) !== 'False') return undefined;
  // `argnums` other than the first parameter changes which argument the gradient is taken for: not followed.
  if (syntax.arg(made, 'argnums', -1)) return undefined;
  const lossName = clip(syntax.text(loss), 40);
  if (kind === 'value_and_grad')
    return { node: made, lossName, gradientAt: [1], auxAt: hasAux ? [0, 1] : undefined, passedBy };
  return { node: made, lossName, gradientAt: hasAux ? [0] : [], auxAt: hasAux ? [1] : undefined, passedBy };
}

/**
 * Another call of the same gradient function whose gradient is psum-ed with a count from the loss function's
 * auxiliary output and divided by the summed count, over `axis`.
 */
function countNormalisation(
  model: FileModel,
  origins: ValueOrigins,
  gradient: GradientFunction,
  except: PyNode,
  axis: string,
): CountNormalisation | undefined {
  if (!gradient.auxAt) return undefined;
  for (const fn of model.functions) {
    for (const call of fn.calls) {
      if (call === except || !isAssignedCall(call)) continue;
      const same = gradientFunctionOf(model, origins, call, fn);
      if (!same || same.node !== gradient.node) continue;
      const target = child(call.parent!, 'left')!;
      const grad = nameAt(model, target, gradient.gradientAt);
      const aux = subtreeAt(target, gradient.auxAt);
      if (!grad || !aux) continue;
      const counts = new Set<string>();
      visit(aux, (n) => void (n.type === 'identifier' && counts.add(model.syntax.text(n))));
      const found = psumNormalised(model, origins, fn, call, grad, counts, axis);
      if (found) return { call, ...found };
    }
  }
  return undefined;
}

/** After `after` in `fn`: `(…, n2, g2) = lax.psum((…, n, g), axis)` then `g2 / n2` (directly or in a tree_map). */
function psumNormalised(
  model: FileModel,
  origins: ValueOrigins,
  fn: FunctionInfo,
  after: PyNode,
  grad: string,
  counts: ReadonlySet<string>,
  axis: string,
): Omit<CountNormalisation, 'call'> | undefined {
  const syntax = model.syntax;
  for (const psum of fn.calls) {
    if (psum.start < after.end || !isJaxCollective(model, psum, 'psum') || !isAssignedCall(psum)) continue;
    if (axisOf(model, origins, psum, fn) !== axis) continue;
    const summed = unparen(syntax.args(psum).positional[0] ?? psum);
    if (summed.type !== 'tuple') continue;
    const parts = named(summed).map((p) => syntax.text(unparen(p)));
    const g = parts.indexOf(grad);
    const target = child(psum.parent!, 'left')!;
    const summedGrad = g >= 0 ? nameAt(model, target, [g]) : undefined;
    if (!summedGrad) continue;
    for (let i = 0; i < parts.length; i++) {
      if (!counts.has(parts[i])) continue;
      const count = nameAt(model, target, [i]);
      const division = count ? divisionOf(model, fn, summedGrad, count, psum) : undefined;
      if (division) return { psum, division, count: parts[i], axis };
    }
  }
  return undefined;
}

/** `g / n`, or `tree_map(lambda x: x / n, g)`, in `fn` after `after`. */
function divisionOf(model: FileModel, fn: FunctionInfo, grad: string, count: string, after: PyNode) {
  const syntax = model.syntax;
  for (const n of fn.nodes) {
    if (n.start < after.end) continue;
    if (n.type === 'binary_operator' && syntax.operator(n) === '/') {
      const left = unparen(child(n, 'left')!);
      const right = unparen(child(n, 'right')!);
      if (right.type === 'identifier' && syntax.text(right) === count) {
        if (left.type === 'identifier' && syntax.text(left) === grad) return n;
        const map = treeMapOver(model, n);
        if (map && syntax.text(map.tree) === grad && left.type === 'identifier' && syntax.text(left) === map.param)
          return map.call;
      }
    }
  }
  return undefined;
}

/** The tree_map call whose lambda contains `n`, with the lambda's (one) parameter and the mapped tree. */
function treeMapOver(model: FileModel, n: PyNode): { call: PyNode; param: string; tree: PyNode } | undefined {
  let lambda: PyNode | null = n.parent;
  while (lambda && lambda.type !== 'lambda') lambda = lambda.parent;
  const call = lambda?.parent?.parent;
  if (!lambda || call?.type !== 'call' || !/tree_map$/.test(model.syntax.calleeText(call))) return undefined;
  const params = child(lambda, 'parameters');
  const args = model.syntax.args(call).positional;
  if (!params || named(params).length !== 1 || args[0] !== lambda || args.length !== 2) return undefined;
  return { call, param: model.syntax.text(named(params)[0]), tree: unparen(args[1]) };
}

/**
 * True when `name` is multiplied or divided after `after` by anything but a value made from its own norm (clipping):
 * the averaged gradient's scale is then not the `pmean`'s.
 */
function rescaledAfter(model: FileModel, fn: FunctionInfo, name: string, after: PyNode): boolean {
  const syntax = model.syntax;
  for (const n of fn.nodes) {
    if (n.start < after.end || n.type !== 'binary_operator' || !['/', '*'].includes(syntax.operator(n))) continue;
    const operands = [child(n, 'left'), child(n, 'right')].map((o) => (o ? unparen(o) : undefined));
    const map = treeMapOver(model, n);
    const scaled = operands.some(
      (o) =>
        o?.type === 'identifier' &&
        (syntax.text(o) === name ||
          (map !== undefined && syntax.text(o) === map.param && isName(model, map.tree, name))),
    );
    if (scaled && !dividedByOwnNorm(model, fn, n, name)) return true;
  }
  return false;
}

function dividedByOwnNorm(model: FileModel, fn: FunctionInfo, product: PyNode, name: string): boolean {
  let clipped = false;
  for (const f of model.syntax.factors(product)) {
    if (f.sign !== -1) continue;
    visit(f.node, (n) => {
      if (n.type !== 'identifier') return;
      const made = reachingAssignment(model, model.syntax.text(n), product.start, fn);
      const value = made && made !== 'unknown' ? child(made.node, 'right') : undefined;
      if (value && mentions(model, value, name) && /norm|sqrt/.test(model.syntax.text(value))) clipped = true;
    });
  }
  return clipped;
}

/**
 * True when the averaged gradient is handed to an update after `after` (a call named for an update or its
 * application: `tx.update`, an optax `update_fn` parameter, `optax.apply_updates`, `apply_gradients`) or returned
 * as it is: a gradient only measured or logged is not a training step's scale.
 */
function reachesUpdate(model: FileModel, fn: FunctionInfo, name: string, after: PyNode): boolean {
  const syntax = model.syntax;
  for (const call of fn.calls) {
    if (call.start < after.end || !/update|apply/i.test(syntax.calleeName(call))) continue;
    if (syntax.args(call).positional.some((a) => isName(model, a, name))) return true;
  }
  return fn.nodes.some((n) => {
    if (n.type !== 'return_statement' || n.start < after.end) return false;
    const value = named(n)[0];
    if (!value) return false;
    const v = unparen(value);
    const parts = v.type === 'tuple' || v.type === 'expression_list' ? named(v) : [v];
    return parts.some((p) => isName(model, p, name));
  });
}

function axisOf(model: FileModel, origins: ValueOrigins, call: PyNode, fn: FunctionInfo): string | undefined {
  const arg = model.syntax.arg(call, 'axis_name', 1);
  const found = arg ? origins.of(arg, fn) : undefined;
  const values = found?.map((o) => model.syntax.stringValue(o.node));
  return values && values.length > 0 && values.every((v) => v !== undefined && v === values[0]) ? values[0] : undefined;
}

function isJaxCollective(model: FileModel, call: PyNode, name: 'psum' | 'pmean'): boolean {
  return jaxName(model, call) === name;
}

/** The jax function a call names (`jax.lax.pmean`, `lax.pmean`, `pmean` imported from jax.lax), or undefined. */
function jaxName(model: FileModel, call: PyNode): string | undefined {
  const text = model.syntax.calleeText(call);
  const name = model.syntax.calleeName(call);
  const head = text.split('.')[0];
  const module = text.includes('.') ? model.moduleOf(head) : model.moduleOf(name);
  return module && /^jax(\.|$)/.test(module) ? name : undefined;
}

function isAssignedCall(call: PyNode): boolean {
  return call.parent?.type === 'assignment' && child(call.parent, 'right') === call;
}

function assignedName(model: FileModel, call: PyNode): string | undefined {
  if (!isAssignedCall(call)) return undefined;
  const left = unparen(child(call.parent!, 'left')!);
  return left.type === 'identifier' ? model.syntax.text(left) : undefined;
}

function isName(model: FileModel, node: PyNode, name: string): boolean {
  const n = unparen(node);
  return n.type === 'identifier' && model.syntax.text(n) === name;
}

function mentions(model: FileModel, node: PyNode, name: string): boolean {
  let found = false;
  visit(node, (n) => void (n.type === 'identifier' && model.syntax.text(n) === name && (found = true)));
  return found;
}

function samePath(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

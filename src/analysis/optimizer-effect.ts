// What a constant factor on the gradient does to the update, by the optimizer the gradient reaches. Every scaling
// finding proves that the gradient the step reads is K× (or 1/K of) the intended one. For SGD, with or without
// momentum, that is exactly a K× learning rate. An adaptive optimizer (Adam and its kin, Adagrad, RMSprop,
// Adafactor, LAMB) divides its step by a running estimate of the gradient's scale, so a constant factor cancels
// except through `eps`, a gradient clipping by norm in view (its threshold is then off by K) and an L2 weight decay
// added to the gradient. The findings' messages keep today's wording unless the step's optimizer is resolved to a
// constructor call in view (optimizerAt); restateEffect then rewrites the one clause that states the effect.
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';

export interface ResolvedOptimizer {
  /** The constructor's name as the library spells it: `AdamW`, `FusedAdam`, `optax.adamw`. */
  readonly name: string;
  readonly adaptive: boolean;
  /** A gradient clipping by norm in view of the step (`torch.nn.utils.clip_grad_norm_(...)`), as source text. */
  readonly clip?: string;
  /** True when the constructor adds an L2 weight decay to the gradient (not a decoupled decay). */
  readonly coupledDecay?: boolean;
}

// Optimizers whose step divides by a running estimate of the gradient's scale. Lower-case names are optax's.
const ADAPTIVE = new Set([
  'Adam',
  'AdamW',
  'FusedAdam',
  'FusedLAMB',
  'FusedMixedPrecisionLamb',
  'Adamax',
  'NAdam',
  'Nadam',
  'RAdam',
  'LAMB',
  'Lamb',
  'Adagrad',
  'FusedAdagrad',
  'RMSprop',
  'RMSProp',
  'Adafactor',
  'Adadelta',
  'SparseAdam',
  'DeepSpeedCPUAdam',
  'DeepSpeedCPUAdagrad',
  'DeepSpeedCPULamb',
  'AdamOptimizer',
  'AdagradOptimizer',
  'RMSPropOptimizer',
  'AdamWeightDecay',
  'Adam8bit',
  'AdamW8bit',
  'adam',
  'adamw',
  'lamb',
  'adafactor',
  'adagrad',
  'rmsprop',
  'adamax',
  'adamaxw',
  'nadam',
  'nadamw',
  'radam',
  'adadelta',
]);
// Optimizers whose step is linear in the gradient: a K× gradient is a K× learning rate.
const LINEAR = new Set(['SGD', 'FusedSGD', 'GradientDescentOptimizer', 'MomentumOptimizer', 'sgd']);
// Adaptive optimizers whose weight decay is decoupled from the gradient (AdamW's), or that have none in `weight_decay`.
const DECOUPLED = new Set(['AdamW', 'FusedAdam', 'FusedLAMB', 'LAMB', 'Lamb', 'AdamWeightDecay', 'AdamW8bit']);
// The modules these constructors are read from: a class of the same name elsewhere proves nothing.
const OPTIMIZER_MODULE =
  /^(torch\.optim|apex\.optimizers|apex\.contrib\.optimizers|deepspeed\.ops\.(adam|lamb|adagrad)|transformers(\.optimization)?|timm\.optim|bitsandbytes\.optim|torch_optimizer|(tensorflow|tf)\.(keras\.optimizers|compat\.v1\.train|train)|keras\.optimizers|optax)(\.|$)/;
// Wrappers whose step is the wrapped optimizer's (Horovod's and DeepSpeed's distributed optimizers, apex's FP16).
const WRAPPERS = new Set(['DistributedOptimizer', 'FP16_Optimizer', 'FP16_DeepSpeedZeroOptimizer']);
const CLIP = /^(clip_grad_norm_?|clip_by_global_norm)$/;

/** The optimizer the step near `node` applies the gradient with, when every step there resolves to the same one. */
export function optimizerAt(model: FileModel, node: PyNode): ResolvedOptimizer | undefined {
  // An update named by its function (`def train_step`) is that function's steps.
  const fn = model.functions.find((f) => f.node === node.parent) ?? model.enclosingFunction(node);
  if (!fn) return undefined;
  const s = model.syntax;
  // A learning-rate scheduler's `step()` applies no gradient; one named otherwise leaves the optimizer unresolved.
  const steps = isStep(model, node)
    ? [node]
    : fn.calls.filter((c) => isStep(model, c) && !/sched/i.test(s.text(s.calleeObject(c) ?? c)));
  let found: ResolvedOptimizer | undefined;
  for (const step of steps) {
    const args = s.args(step);
    // `scaler.step(optimizer)`: the AMP scaler steps the optimizer it is given.
    const target =
      s.calleeName(step) === 'step' && args.positional.length === 1 ? args.positional[0] : s.calleeObject(step);
    const opt = target && resolve(model, fn, target, 0);
    if (!opt || (found && (found.name !== opt.name || found.adaptive !== opt.adaptive))) return undefined;
    found = opt;
  }
  if (!found?.adaptive) return found;
  const clipCall = found.clip ? undefined : fn.calls.find((c) => CLIP.test(s.calleeName(c)));
  return clipCall ? { ...found, clip: s.calleeText(clipCall) } : found;
}

function isStep(model: FileModel, call: PyNode): boolean {
  if (call.type !== 'call') return false;
  const name = model.syntax.calleeName(call);
  // optax's `tx.update(grads, opt_state, params)`; a scaler's `update()` takes no gradients and is not a step.
  return name === 'step' || (name === 'update' && model.syntax.args(call).positional.length >= 2);
}

function resolve(model: FileModel, fn: FunctionInfo, target: PyNode, depth: number): ResolvedOptimizer | undefined {
  const s = model.syntax;
  const t = unparen(target);
  if (depth > 3) return undefined;
  if (t.type === 'call') return constructed(model, fn, t, depth);
  if (t.type !== 'identifier' && t.type !== 'attribute') return undefined;
  const text = s.text(t).replace(/\s+/g, '');
  // A local name is bound in its function (or at module level); a parameter's value is not in view.
  let values = model.valuesSeenBy(text, fn);
  if (t.type === 'identifier') {
    if (fn.params.some((p) => p.name === text)) return undefined;
    // The innermost of this function, the functions around it and the module that binds the name.
    let scoped: typeof values = [];
    for (let f: FunctionInfo | undefined = fn; f && scoped.length === 0; f = f.enclosing)
      scoped = values.filter((v) => v.fn === f);
    values = scoped;
  }
  if (values.length === 0 || rebound(model, text)) return undefined;
  let found: ResolvedOptimizer | undefined;
  for (const v of values) {
    const opt = resolve(model, v.fn, v.value, depth + 1);
    if (!opt || (found && found.name !== opt.name)) return undefined;
    found = opt;
  }
  return found;
}

// Calls that hand back the optimizer they are given, wrapped: `model, optimizer = accelerator.prepare(model, optimizer)`.
const PASS_THROUGH = new Set(['prepare', 'initialize', 'boost']);

/**
 * True when `text` is also bound by unpacking (`model, optimizer = build(cfg)`), whose value the file does not show,
 * unless the call is a wrapper handed the same name back.
 */
function rebound(model: FileModel, text: string): boolean {
  const s = model.syntax;
  for (const fn of model.functions) {
    for (const a of fn.assignments) {
      const left = a.type === 'assignment' ? child(a, 'left') : undefined;
      if (!left || (left.type !== 'pattern_list' && left.type !== 'tuple_pattern')) continue;
      if (!named(left).some((c) => s.text(c).replace(/\s+/g, '') === text)) continue;
      const right = child(a, 'right');
      const call = right ? unparen(right) : undefined;
      const args = call?.type === 'call' ? s.args(call) : undefined;
      const handed = args && [...args.positional, ...[...args.keywords.values()].map((k) => k.value)];
      if (
        !call ||
        !PASS_THROUGH.has(s.calleeName(call)) ||
        !handed?.some((h) => s.text(h).replace(/\s+/g, '') === text)
      )
        return true;
    }
  }
  return false;
}

function constructed(model: FileModel, fn: FunctionInfo, call: PyNode, depth: number): ResolvedOptimizer | undefined {
  const s = model.syntax;
  const name = s.calleeName(call);
  const args = s.args(call);
  if (WRAPPERS.has(name)) {
    const inner = s.arg(call, 'optimizer', 0) ?? s.arg(call, 'init_optimizer', 0);
    return inner ? resolve(model, fn, inner, depth + 1) : undefined;
  }
  const path = fullPath(model, s.calleeText(call));
  if (name === 'chain' && path === 'optax.chain') {
    // One optimizer in the chain; a clipping transformation before it is the clipping in view.
    const parts = args.positional.map((a) => unparen(a)).filter((a) => a.type === 'call');
    const opts = parts.map((p) => constructed(model, fn, p, depth + 1)).filter((o) => o !== undefined);
    const clip = parts.find((p) => s.calleeName(p) === 'clip_by_global_norm');
    if (opts.length !== 1) return undefined;
    return clip ? { ...opts[0], clip: s.calleeText(clip) } : opts[0];
  }
  if (!OPTIMIZER_MODULE.test(path)) return undefined;
  if (LINEAR.has(name)) return { name, adaptive: false };
  if (!ADAPTIVE.has(name)) return undefined;
  const decay = args.keywords.get('weight_decay')?.value;
  const coupledDecay =
    !DECOUPLED.has(name) && decay !== undefined && !/^0(\.0*)?$/.test(s.text(decay).trim()) ? true : undefined;
  return { name: path.startsWith('optax.') ? `optax.${name}` : name, adaptive: true, coupledDecay };
}

/** `FusedAdam` → `apex.optimizers.FusedAdam`, `optim.Adam` → `torch.optim.Adam`, through the file's imports. */
function fullPath(model: FileModel, callee: string): string {
  const [head, ...rest] = callee.split('.');
  const module = model.moduleOf(head);
  return module ? [module, ...rest].join('.') : callee;
}

// The clause every builder states the effect with: "the effective learning rate is 8× the configured one",
// "The experts' effective learning rate is 1/N (world size) of the configured one". A parenthesised one is an
// aside of a rule whose effect is not a constant factor (micro-batches discarded), and is left as it is.
const EFFECT =
  /(?<!\()\b([Tt])he (?:\w+'s? |\w+s' )?effective learning rate(?: of these parameters)? is (.+?) the configured one/;

/** The message with its effect clause stated for `opt`; unchanged for SGD and for an unresolved optimizer. */
export function restateEffect(message: string, opt: ResolvedOptimizer | undefined): string {
  if (!opt?.adaptive) return message;
  return message.replace(EFFECT, (_all, t: string, factor: string) => {
    return `${t}he gradient the optimizer reads is ${factor} the intended one, but ${opt.name} normalises its step by the gradient's scale, so the update changes only through ${throughList(opt)}, not as a learning-rate factor`;
  });
}

/**
 * CP005's effect: a learning rate scaled by the world size on top of gradients summed over the ranks. Under SGD the
 * two factors multiply (`squared`, N²×). An adaptive optimizer cancels the gradient's factor but not the learning
 * rate's, so the update is `factor` (N×) the single-GPU one, and the summed gradient acts only through eps, the
 * clipping and an L2 decay.
 */
export function learningRateOnSumEffect(factor: string, squared: string, opt: ResolvedOptimizer | undefined): string {
  if (!opt?.adaptive) return `the effective learning rate is ${squared} the single-GPU one`;
  return (
    `the update is ${factor} the single-GPU one, not ${squared}: ${opt.name} normalises its step by the ` +
    `gradient's scale, so the sum's factor changes the update only through ${throughList(opt)}, while the learning ` +
    `rate's factor scales every step`
  );
}

/** What a constant gradient factor still reaches under an adaptive optimizer: eps, a clipping, an L2 decay. */
function throughList(opt: ResolvedOptimizer): string {
  const through = ['eps'];
  if (opt.clip) through.push(`the gradient clipping (\`${opt.clip}\`, whose threshold is then off by that factor)`);
  if (opt.coupledDecay) through.push('the L2 weight decay added to the gradient');
  const last = through.pop()!;
  return through.length ? `${through.join(', ')} and ${last}` : last;
}

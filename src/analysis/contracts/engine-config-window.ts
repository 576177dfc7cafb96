// The third link of the cross-file engine window (engine-window-program.ts): the receiver of `x.backward(loss,
// model, optimizer)` resolved to the object it is built as (a strategy, through the trainer's constructor and a
// factory such as `get_strategy(args)`), whose class's `backward` hands the loss to `.backward(loss)` on the model
// it is given, on every path and with DeepSpeed's default scaling; and the engines that class builds with
// `deepspeed.initialize(..., config=...)`, every one of which must have a config dictionary in view whose window
// (deepspeed-config-window.ts) is decided, with the class's fields read in the frame of the construction and the
// entry script's argument defaults (entry-arguments.ts). Then the engine divides each micro-batch's loss by a window
// the code fixes, not by the `%` the trainer's loop reads.
//
// Not followed: the model object itself from the class's `prepare` into the trainer (the model's `.backward(loss)`
// exists only on an engine, and every engine the class builds is judged), an engine built outside the class, a
// window changed after start-up (`set_gradient_accumulation_steps`), and command lines other than the defaults
// (the message says at which defaults and world sizes the window is above 1).
import { child, unparen, type PyNode } from '../tree';
import { lastAssigned, reached, resolved, type Frame, type Value } from './bound-values';
import { configWindow, sizesAboveOne, type ConfigWindow } from './deepspeed-config-window';
import { EntryArguments } from './entry-arguments';
import { constructorArguments } from './loader-fields';
import type { ProgramClass, ProgramModels } from './program-models';
import type { SplatTokenCounts } from './splat-token-count';

export interface EngineWindow {
  readonly window: ConfigWindow;
  /** The world sizes at which the window is above 1 (`all` for a window the config gives). */
  readonly sizes: number[] | 'all';
  /** The entry scripts whose argument defaults the window was read at. */
  readonly entries: readonly string[];
  /** A `deepspeed.initialize` call that builds the engine. */
  readonly engine: Value;
  /** The `model.backward(loss)` in the receiver's class. */
  readonly handOff: Value;
}

const INITIALIZE = /^(deepspeed\.)?initialize$/;

export class EngineConfigWindows {
  constructor(
    private readonly models: ProgramModels,
    private readonly tokens: SplatTokenCounts,
  ) {}

  /** The window of the engine `call` (`receiver.backward(loss, model, ...)` in `root`) hands the loss to. */
  windowOf(call: PyNode, root: Frame): EngineWindow | undefined {
    const receiver = root.at.model.syntax.calleeObject(call);
    if (!receiver) return undefined;
    const value: Value = { node: receiver, frame: root };
    const sites = constructorArguments(this.models, value) ?? [value];
    const found = sites.map((site) => this.siteWindow(enteredFromMain(site)));
    const first = found[0];
    if (!first || found.some((f) => !f || !sameWindow(f.window, first.window))) return undefined;
    return first;
  }

  private siteWindow(site: Value): EngineWindow | undefined {
    const reader = new EntryArguments(this.models);
    const object = resolved(site, 0, reader);
    const made = object && this.tokens.constructed(object);
    if (!made) return undefined;
    const initFn = this.models.method(made.cls, '__init__');
    const init: Frame | undefined = initFn && { at: initFn, call: made.ctor.node, caller: made.ctor.frame };
    const handOff = this.handOff(made.cls, init);
    if (!handOff) return undefined;
    const enter = (c: Value) => this.enter(c, made.cls);
    let result: EngineWindow | undefined;
    const { model, path } = made.cls;
    for (const fn of model.functions) {
      if (fn.className !== made.cls.name) continue;
      for (const build of fn.calls) {
        if (!INITIALIZE.test(model.syntax.calleeText(build)) || !isDeepSpeed(model, build)) continue;
        const config = model.syntax.args(build).keywords.get('config')?.value;
        const frame: Frame = { at: { path, model, fn }, ...(init ? { init } : {}) };
        const window = config && configWindow({ node: config, frame }, enter, reader);
        // Every engine the class builds must have the same decided window.
        if (!window || (result && !sameWindow(window, result.window))) return undefined;
        result ??= { window, sizes: sizesAboveOne(window), entries: [], engine: { node: build, frame }, handOff };
      }
    }
    return result && { ...result, entries: [...reader.used] };
  }

  /**
   * The class's `backward(loss, model, ...)` calls `model.backward(loss)` (or `.backward` on an attribute the model
   * is rebound to, `model = model.model`) on every path, with no other `backward` call and no `scale_wrt_gas`.
   */
  private handOff(cls: ProgramClass, init: Frame | undefined): Value | undefined {
    const method = this.models.method(cls, 'backward');
    if (!method) return undefined;
    const frame: Frame = { at: method, ...(init ? { init } : {}) };
    const s = method.model.syntax;
    const params = method.fn.params.map((p) => p.name).filter((p, i) => i > 0 || !/^(self|cls)$/.test(p));
    const [loss] = params;
    const backwards = method.fn.calls.filter((c) => s.calleeName(c) === 'backward');
    const hand = backwards.length === 1 ? backwards[0] : undefined;
    const object = hand && s.calleeObject(hand);
    const modelParam = object && s.text(unparen(object));
    if (!loss || !hand || !modelParam || !params.slice(1).includes(modelParam)) return undefined;
    const args = s.args(hand);
    if (args.positional.length !== 1 || s.text(unparen(args.positional[0])) !== loss || args.keywords.size > 0)
      return undefined;
    if (lastAssigned(frame, loss, hand.start) !== null || reached(frame, hand) !== true) return undefined;
    // The model may be unwrapped to an attribute of itself; anything else is another object.
    const rebinds = method.fn.assignments.filter((a) => s.text(child(a, 'left') ?? a) === modelParam);
    const unwraps = rebinds.every((a) => s.text(child(a, 'right') ?? a).startsWith(`${modelParam}.`));
    return unwraps ? { node: hand, frame } : undefined;
  }

  /** A call made in the class's methods: `self.method(...)` of the object's class, or what the token trace enters. */
  private enter(call: Value, cls: ProgramClass): Frame | undefined {
    const callee = child(call.node, 'function');
    const object = callee?.type === 'attribute' ? child(callee, 'object') : undefined;
    const name = callee && child(callee, 'attribute');
    if (object?.type !== 'identifier' || call.frame.at.model.syntax.text(object) !== 'self' || !name)
      return this.tokens.enter(call);
    const method = this.models.method(cls, call.frame.at.model.syntax.text(name));
    const init = call.frame.init;
    return method && { at: method, call: call.node, caller: call.frame, ...(init ? { init } : {}) };
  }
}

/** `initialize` is DeepSpeed's: `deepspeed.initialize`, or imported from `deepspeed`. */
function isDeepSpeed(model: Frame['at']['model'], call: PyNode): boolean {
  const text = model.syntax.calleeText(call);
  return text === 'deepspeed.initialize'
    ? model.moduleOf('deepspeed') === 'deepspeed'
    : model.moduleOf(text) === 'deepspeed.initialize';
}

function sameWindow(a: ConfigWindow, b: ConfigWindow): boolean {
  if (a.kind === 'given') return b.kind === 'given' && a.steps === b.steps;
  return b.kind === 'derived' && a.trainBatch === b.trainBatch && a.microBatch === b.microBatch;
}

/**
 * A value read in a top-level function entered through no call (a construction site), placed in the frame of the
 * function's one call, made by the module's own top-level code (`train(args)` in the script's main block), so that
 * its parameters are bound.
 */
function enteredFromMain(site: Value): Value {
  const { frame } = site;
  const { model, fn, path } = frame.at;
  if (frame.call || fn.className || fn.enclosing?.node.type !== 'module') return site;
  const calls = model.callSites.get(fn.name) ?? [];
  const only = calls.length === 1 ? calls[0] : undefined;
  if (!only || only.caller.node.type !== 'module' || child(only.call, 'function')?.type !== 'identifier') return site;
  return {
    node: site.node,
    frame: { at: frame.at, call: only.call, caller: { at: { path, model, fn: only.caller } } },
  };
}

/** The sentence that states the engine's window: its formula, the defaults it was read at, and the world sizes. */
export function windowText(engine: EngineWindow): string {
  const at = engine.entries.length > 0 ? ` at the defaults of ${engine.entries.join(', ')}` : '';
  const w = engine.window;
  if (w.kind === 'given')
    return `The DeepSpeed engine divides every micro-batch's loss by its configured window, \`gradient_accumulation_steps\` = ${w.steps}${at}`;
  const sizes = engine.sizes === 'all' ? [] : engine.sizes;
  const list = sizes.length > 1 ? `${sizes.slice(0, -1).join(', ')} or ${sizes[sizes.length - 1]}` : `${sizes[0]}`;
  const limit = w.trainBatch / w.microBatch;
  return `The DeepSpeed engine divides every micro-batch's loss by its accumulation window, \`train_batch_size // (train_micro_batch_size_per_gpu * N)\` = ${w.trainBatch} // (${w.microBatch} * N) on N data-parallel ranks${at}: above 1 for N = ${list} (the sizes below ${Number.isInteger(limit) ? limit : Math.ceil(limit)} that DeepSpeed runs, which need ${w.trainBatch} = ${w.microBatch} × window × N)`;
}

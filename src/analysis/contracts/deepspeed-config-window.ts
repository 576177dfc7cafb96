// DeepSpeed's gradient-accumulation window of a config dictionary in view, as `DeepSpeedConfig` derives it
// (deepspeed/runtime/config.py, `_set_batch_related_parameters`): `gradient_accumulation_steps` where the config
// gives it; otherwise, with `train_batch_size` and `train_micro_batch_size_per_gpu`, `train_batch_size //
// train_micro_batch_size_per_gpu // world_size`, where DeepSpeed then asserts `train_batch_size == micro * window *
// world_size`, so only world sizes that divide the batch run; with only one of the two, a window of 1. The engine's
// `backward(loss)` divides the loss by that window (`scale_wrt_gas=True` by default).
//
// The dictionary is read where it is made: a literal, followed through the names and calls that return it (a
// method `get_ds_train_config` returning what a helper `get_train_ds_config` builds), with the entries each frame
// sets on the way (`ds_config["train_batch_size"] = ...`) under guards the frame decides. A key set under an
// undecided guard, a dictionary passed to another call or updated (`.update`, `**` in the literal), a config
// that is a file path, or elasticity (which rewrites the batch sizes) leaves the window undecided.
import { child, named, unparen } from '../tree';
import { lastAssigned, reached, reachedReturn, type CallReader, type Frame, type Value } from './bound-values';

/** The keys that decide the window, and the one that rewrites them at start-up. */
const WINDOW_KEYS = new Set(['gradient_accumulation_steps', 'train_batch_size', 'train_micro_batch_size_per_gpu']);
const REWRITES = 'elasticity';
/** Methods that change a dictionary in place. */
const MUTATES = /^(update|setdefault|pop|popitem|clear|__setitem__)$/;
const MAX_HOPS = 12;

export type ConfigWindow =
  | { readonly kind: 'given'; readonly steps: number }
  | { readonly kind: 'derived'; readonly trainBatch: number; readonly microBatch: number };

/** The window of the config dictionary `value` stands for; undefined where any of its inputs is not decided. */
export function configWindow(
  value: Value,
  enter: (call: Value) => Frame | undefined,
  calls: CallReader,
): ConfigWindow | undefined {
  const entries = configEntries(value, enter, calls);
  if (!entries || entries.has(REWRITES)) return undefined;
  const number = (key: string) => {
    const v = entries.get(key);
    const n = v && calls.literal(v);
    return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : undefined;
  };
  if (entries.has('gradient_accumulation_steps')) {
    const steps = number('gradient_accumulation_steps');
    return steps === undefined ? undefined : { kind: 'given', steps };
  }
  const [trainBatch, microBatch] = [number('train_batch_size'), number('train_micro_batch_size_per_gpu')];
  if (trainBatch !== undefined && microBatch !== undefined) return { kind: 'derived', trainBatch, microBatch };
  // One of the two alone gives a window of 1; a key present but undecided gives none.
  const present = ['train_batch_size', 'train_micro_batch_size_per_gpu'].filter((k) => entries.has(k));
  return present.length === 1 && (trainBatch ?? microBatch) !== undefined ? { kind: 'given', steps: 1 } : undefined;
}

/** The world sizes at which DeepSpeed runs the config with a window above 1 (all of them for a given window). */
export function sizesAboveOne(w: ConfigWindow): number[] | 'all' {
  if (w.kind === 'given') return w.steps > 1 ? 'all' : [];
  const out: number[] = [];
  for (let world = 1; w.microBatch * world * 2 <= w.trainBatch; world++)
    if (w.trainBatch % (w.microBatch * world) === 0) out.push(world);
  return out;
}

interface Scope {
  readonly frame: Frame;
  readonly name: string;
  readonly after: number;
  readonly before: number;
}

/** The window keys of the dictionary a value stands for, each with the expression that sets it last. */
function configEntries(
  value: Value,
  enter: (call: Value) => Frame | undefined,
  calls: CallReader,
): Map<string, Value> | undefined {
  const scopes: Scope[] = [];
  let v: Value = value;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const n = unparen(v.node);
    const s = v.frame.at.model.syntax;
    if (n.type === 'dictionary') {
      const out = literalEntries(v);
      // The frames' own edits apply after the literal, the innermost (entered last) first.
      for (const scope of scopes.reverse()) if (!out || !applyEdits(scope, out, calls)) return undefined;
      return out;
    }
    if (n.type === 'identifier') {
      const assigned = lastAssigned(v.frame, s.text(n), n.start, calls);
      if (!assigned) return undefined;
      scopes.push({ frame: v.frame, name: s.text(n), after: assigned.node.end, before: n.start });
      v = assigned;
      continue;
    }
    const frame = n.type === 'call' ? enter(v) : undefined;
    const ret = frame && reachedReturn(frame, calls);
    if (!ret) return undefined;
    v = ret;
  }
  return undefined;
}

function literalEntries(dict: Value): Map<string, Value> | undefined {
  const s = dict.frame.at.model.syntax;
  const out = new Map<string, Value>();
  for (const pair of named(unparen(dict.node))) {
    if (pair.type === 'comment') continue;
    const key = pair.type === 'pair' ? s.stringValue(child(pair, 'key')) : undefined;
    const v = child(pair, 'value');
    if (key === undefined || !v) return undefined;
    out.set(key, { node: v, frame: dict.frame });
  }
  return out;
}

/** The scope's edits of its dictionary name between its assignment and its read; false where one is not decided. */
function applyEdits(scope: Scope, out: Map<string, Value>, calls: CallReader): boolean {
  const { frame, name, after, before } = scope;
  const s = frame.at.model.syntax;
  for (const n of frame.at.fn.nodes) {
    if (n.start < after || n.start >= before) continue;
    // The call that reads the dictionary (`deepspeed.initialize(config=ds_config)`) is the read, not an edit.
    if (n.type === 'call' && n.end <= before) {
      const object = s.calleeObject(n);
      const passed = s.args(n).positional.some((a) => s.text(unparen(a)) === name);
      const keyword = [...s.args(n).keywords.values()].some((k) => s.text(unparen(k.value)) === name);
      if ((object && s.text(object) === name && MUTATES.test(s.calleeName(n))) || passed || keyword) return false;
    }
    if (n.type === 'delete_statement' && s.text(n).includes(name)) return false;
    const left = /^(augmented_)?assignment$/.test(n.type) ? child(n, 'left') : undefined;
    const target = left && unparen(left);
    if (target?.type !== 'subscript' || s.text(child(target, 'value') ?? target) !== name) continue;
    const key = s.stringValue(child(target, 'subscript') ?? undefined);
    if (key === undefined) return false;
    if (!WINDOW_KEYS.has(key) && key !== REWRITES) continue;
    const right = child(n, 'right');
    const holds = reached(frame, n, before, calls);
    if (holds === undefined || n.type !== 'assignment' || !right) return false;
    if (holds) out.set(key, { node: right, frame });
  }
  return true;
}

// The claim optimizer-wrappers.ts reports, read off a wrapper's step path (wrapper-step-path.ts): on every step that
// updates, each gradient is divided once by an attribute set from a constructor parameter (with other factors that
// are not rank counts), and summed over all ranks then divided by the world size, both under the same conditions,
// with no other rescaling of the gradients anywhere on the path. Anything else proves nothing.
import { child, hasSplat, unparen } from '../tree';
import type { FileModel, Param } from '../scope';
import type { ChainClass, GradEvent, StepPath } from './wrapper-step-path';

export interface WrapperClaim {
  /** The attribute the batch division reads (`self.expected_batch_size`). */
  readonly attribute: string;
  /** The `__init__` parameter that sets it, in the class at `initIndex` of the chain. */
  readonly parameter: { readonly name: string; readonly index: number };
  readonly initIndex: number;
  readonly divide: GradEvent;
  readonly reduce: GradEvent;
  readonly worldDivide: GradEvent;
}

/** Factors that count ranks or devices: a division by one of them is not a batch division alone. */
export const RANK_COUNT = /world|replica|num_proc|nproc|ranks|gpus|devices|nodes/i;

export function wrapperClaim(chain: readonly ChainClass[], path: StepPath): WrapperClaim | undefined {
  if (path.unknown || !path.updates) return undefined;
  const events = path.events;
  if (events.some((e) => e.kind === 'other' || !e.guaranteed)) return undefined;
  const reduces = events.filter((e) => e.kind === 'reduce');
  const divides = events.filter((e) => e.kind === 'divide');
  if (reduces.length !== 1 || !reduces[0].worldSum || divides.length !== 2) return undefined;
  const reduce = reduces[0];
  const world = divides.filter(
    (d) =>
      d.factors.length === 1 &&
      isWorldAttribute(chain, d.factors[0]) &&
      d.loop !== undefined &&
      d.loop === reduce.loop &&
      d.node.start > reduce.node.start,
  );
  if (world.length !== 1) return undefined;
  const batch = divides.find((d) => d !== world[0]);
  if (!batch) return undefined;
  const fed = batch.factors.map((f) => ({ f, fed: constructorFed(chain, f) })).filter((x) => x.fed);
  if (fed.length !== 1) return undefined;
  const others = batch.factors.filter((f) => f !== fed[0].f);
  if (!others.every((f) => /^self\.\w+$/.test(f) && !RANK_COUNT.test(f) && !isWorldAttribute(chain, f)))
    return undefined;
  if (guardKey(batch) !== guardKey(world[0]) || !reduce.guards.every((g) => world[0].guards.includes(g)))
    return undefined;
  const { initIndex, parameter } = fed[0].fed!;
  return { attribute: fed[0].f, parameter, initIndex, divide: batch, reduce, worldDivide: world[0] };
}

function guardKey(e: GradEvent): string {
  return [...e.guards].sort().join('\u0000');
}

/** Every value the chain's classes give `self.x` (`text`), with the method that gives it. */
function attributeValues(chain: readonly ChainClass[], text: string) {
  return chain.flatMap((c, index) =>
    (c.model.assignedValues.get(text) ?? []).filter((v) => v.fn.className === c.name).map((v) => ({ ...v, index })),
  );
}

/** Some class of the chain rescales or rebinds `self.x` in place (`self.x /= …`). */
function augmented(chain: readonly ChainClass[], text: string): boolean {
  return chain.some((c) =>
    c.model.functions.some(
      (fn) =>
        fn.className === c.name &&
        fn.assignments.some(
          (a) =>
            a.type === 'augmented_assignment' &&
            c.model.syntax.text(child(a, 'left') ?? a).replace(/\s+/g, '') === text,
        ),
    ),
  );
}

/** `self.w` is given only `torch.distributed.get_world_size()` (over the default group) in the chain. */
function isWorldAttribute(chain: readonly ChainClass[], text: string): boolean {
  if (!/^self\.\w+$/.test(text) || augmented(chain, text)) return false;
  const values = attributeValues(chain, text);
  return (
    values.length > 0 &&
    values.every((v) => {
      const model = chain[v.index].model;
      const call = unparen(v.value);
      if (call.type !== 'call' || model.syntax.calleeName(call) !== 'get_world_size') return false;
      const args = model.syntax.args(call);
      if (args.positional.length > 0 || args.keywords.size > 0 || hasSplat(args.list)) return false;
      return moduleOfCallee(model, model.syntax.calleeText(call)) === 'torch.distributed';
    })
  );
}

function moduleOfCallee(model: FileModel, callee: string): string | undefined {
  const object = callee.slice(0, Math.max(0, callee.lastIndexOf('.')));
  if (object === '') return undefined;
  return object.includes('.') ? object : (model.moduleOf(object) ?? object);
}

/** `self.x` is given one value in the chain: a parameter of that class's `__init__`, never rebound there. */
export function constructorFed(
  chain: readonly ChainClass[],
  text: string,
): { initIndex: number; parameter: { name: string; index: number } } | undefined {
  if (!/^self\.\w+$/.test(text) || augmented(chain, text)) return undefined;
  const values = attributeValues(chain, text);
  if (values.length !== 1 || values[0].fn.name !== '__init__') return undefined;
  const { fn, index } = values[0];
  const value = unparen(values[0].value);
  const s = chain[index].model.syntax;
  if (value.type !== 'identifier') return undefined;
  const param = fn.params.find((p) => p.name === s.text(value));
  if (!param) return undefined;
  const rebound = fn.assignments.some((a) => s.text(child(a, 'left') ?? a).replace(/\s+/g, '') === param.name);
  if (rebound) return undefined;
  return { initIndex: index, parameter: { name: param.name, index: keywordOnly(param) ? -1 : param.index } };
}

/** A parameter after `*` or `*args` can only be passed by keyword. */
export function keywordOnly(param: Param): boolean {
  const list = param.node.parent;
  if (!list) return false;
  return list.children.some(
    (n) => (n.type === 'keyword_separator' || n.type === 'list_splat_pattern') && n.start < param.node.start,
  );
}

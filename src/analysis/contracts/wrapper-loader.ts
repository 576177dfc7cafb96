// The global batch proven on a path (opacus' `make_private` at 5795460): `len(loader.dataset) * (1 / len(loader))`
// where `loader` was rebound to what a method of the same class returns (`self._prepare_data_loader(...,
// distributed=distributed, poisson_sampling=poisson_sampling)`), the method's return chosen by its arguments
// (`if poisson_sampling: return DPDataLoader.from_data_loader(loader, distributed=distributed)`), and that is a
// classmethod constructor of a DataLoader subclass, in any file, whose `__init__` hands its base a batch sampler that
// splits the dataset among the ranks only under a flag (`if distributed: batch_sampler =
// DistributedUniformWithReplacementSampler(total_size=len(dataset), ...)`). Each rank then draws from its share of
// the dataset in len(loader) steps, so the ratio is the batch of all ranks, on the path where the flag, followed up
// to the function the ratio is written in, is true: that is the assumption returned, and the caller proves the rest
// of its claim on the same path. Nothing here is assumed about a name the flag cannot be followed to.
import { child, named, unparen, type PyNode } from '../tree';
import type { FileModel, FunctionInfo } from '../scope';
import { flatten, lenArgument } from '../sharded-loader';
import { bindingTarget, boundIdentifiers, reboundNames } from '../nested-calls';
import { baseInitCall } from '../class-constructors';
import { isMethod } from '../path-conditions';
import type { ChainClass } from './wrapper-step-path';
import {
  argumentFor,
  atSite,
  chosenReturn,
  literalAt,
  plainGuards,
  type Assumed,
  type CallContext,
  type Literal,
} from './wrapper-factory';

const SHARDING_SAMPLER = /^Distributed\w*Sampler$/;
const LOADER = /^DataLoader$/;
/** Sampler arguments that give the number of samples it splits: `total_size=len(dataset)`. */
const SIZE_KEYWORDS = ['total_size', 'num_samples'];

export type ClassResolver = (path: string, model: FileModel, name: string) => ChainClass | undefined;

/** The assumption under which `expr` (written in `fn`) is the batch of all ranks, or undefined where none proves it. */
export function globalBatchOnPath(
  path: string,
  model: FileModel,
  expr: PyNode,
  fn: FunctionInfo,
  resolveClass: ClassResolver,
): Assumed | undefined {
  const s = model.syntax;
  const factors = flatten(model, expr, fn, 1, 0);
  if (!factors) return undefined;
  const up = factors.filter((f) => f.sign === 1 && s.numberValue(f.node) !== 1);
  const down = factors.filter((f) => f.sign === -1 && s.numberValue(f.node) !== 1);
  if (up.length !== 1 || down.length !== 1 || up[0].fn !== fn || down[0].fn !== fn) return undefined;
  const dataset = lenArgument(model, up[0].node);
  const loader = lenArgument(model, down[0].node);
  if (!dataset || loader?.type !== 'identifier') return undefined;
  const name = s.text(loader);
  // Only the loader's own dataset: its sampler is what splits it.
  if (compact(model, dataset) !== `${name}.dataset`) return undefined;
  const value = reassignedValue(model, fn, name, loader);
  const selfCall = value && unparen(value);
  if (selfCall?.type !== 'call' || !fn.className) return undefined;
  const callee = s.calleeText(selfCall);
  const method = (model.byName.get(callee.replace(/^self\./, '')) ?? []).filter(
    (m) => m.className === fn.className && isMethod(m),
  );
  if (!callee.startsWith('self.') || method.length !== 1) return undefined;
  const top: CallContext = { fn };
  const inMethod: CallContext = { fn: method[0], site: { call: selfCall, caller: top } };
  const params = model.callableParams(method[0]);
  const valueOf = (param: string): Literal | undefined => {
    const p = params.find((q) => q.name === param);
    const given = p && argumentFor(model, selfCall, p, params[0]?.index ?? 0);
    if (!p || given === null || reboundNames(model, method[0]).has(param)) return undefined;
    const value = given ?? p.defaultValue;
    return value ? literalAt(model, { node: value, ctx: given ? top : inMethod }) : undefined;
  };
  const returned = chosenReturn(model, method[0], valueOf);
  const built = returned && unparen(returned);
  if (built?.type !== 'call') return undefined;
  const flag = loaderFlag(path, model, built, resolveClass);
  if (flag === undefined) return undefined;
  if (flag === true) return { fn, values: new Map() };
  // The flag as the function with the ratio holds it: a literal decides, a name of that function is assumed.
  const atTop = atSite(model, { node: flag, ctx: inMethod });
  if (!atTop || atTop.ctx.fn !== fn) return undefined;
  const known = literalAt(model, atTop);
  if (known !== undefined) return known === true ? { fn, values: new Map() } : undefined;
  const node = unparen(atTop.node);
  return node.type === 'identifier' ? { fn, values: new Map([[s.text(node), true]]) } : undefined;
}

/**
 * For `C.m(...)`, a classmethod constructor of a DataLoader subclass C: true where C always shards its dataset, the
 * argument of the call that C's flag comes from where it shards under that flag, undefined otherwise.
 */
function loaderFlag(
  path: string,
  model: FileModel,
  call: PyNode,
  resolveClass: ClassResolver,
): PyNode | true | undefined {
  const s = model.syntax;
  const object = s.calleeObject(call);
  if (object?.type !== 'identifier') return undefined;
  const cls = resolveClass(path, model, s.text(object));
  if (!cls) return undefined;
  const cm = cls.model;
  const bases = cm.classBasesOf(cls.name);
  if (bases?.length !== 1 || !LOADER.test(bases[0].split('.').pop() ?? '')) return undefined;
  if (['__len__', '__iter__'].some((m) => cm.byName.get(m)?.some((f) => f.className === cls.name))) return undefined;
  const factory = (cm.byName.get(s.calleeName(call)) ?? []).filter((f) => f.className === cls.name);
  const clsCall = factory.length === 1 ? classmethodReturn(cm, factory[0]) : undefined;
  const init = cm.initOf(cls.name);
  const base = baseInitCall(cm, cls.name);
  if (!clsCall || !init || !base) return undefined;
  const flagParam = shardingFlag(cm, init, base.call);
  if (flagParam === undefined) return undefined;
  if (flagParam === true) return true;
  // The flag: what `cls(...)` passes for it, a parameter of the classmethod, and what the call passes for that.
  const initParams = cm.callableParams(init);
  const param = initParams.find((p) => p.name === flagParam);
  const passed = param && argumentFor(cm, clsCall, param, initParams[0]?.index ?? 0);
  if (!passed || unparen(passed).type !== 'identifier') return undefined;
  const methodParams = cm.callableParams(factory[0]);
  const outer = methodParams.find((p) => p.name === cm.syntax.text(unparen(passed)));
  if (!outer || reboundNames(cm, factory[0]).has(outer.name)) return undefined;
  const given = argumentFor(model, call, outer, methodParams[0]?.index ?? 0);
  return given ?? undefined;
}

/** The `cls(...)` a `@classmethod` returns on its only return, `cls` never rebound. */
function classmethodReturn(model: FileModel, fn: FunctionInfo): PyNode | undefined {
  const decorated = fn.node.parent;
  const decorators =
    decorated?.type === 'decorated_definition' ? named(decorated).filter((c) => c.type === 'decorator') : [];
  if (decorators.length !== 1 || model.syntax.text(decorators[0]).replace(/\s+/g, '') !== '@classmethod')
    return undefined;
  const clsName = fn.params[0]?.name;
  const returns = fn.nodes.filter((n) => n.type === 'return_statement');
  if (!clsName || reboundNames(model, fn).has(clsName) || returns.length !== 1) return undefined;
  const value = named(returns[0])[0];
  const built = value ? unparen(value) : undefined;
  return built?.type === 'call' && model.syntax.calleeText(built) === clsName ? built : undefined;
}

/**
 * The `__init__` parameter under which the sampler handed to the base splits the base's dataset among all ranks
 * (true where it always does): the sampler is a name assigned a sharding sampler of that dataset only under
 * `if flag:`, and anything else only under `else`.
 */
function shardingFlag(model: FileModel, init: FunctionInfo, baseCall: PyNode): string | true | undefined {
  const s = model.syntax;
  const dataset = s.arg(baseCall, 'dataset', 0);
  const sampler = s.args(baseCall).keywords.get('batch_sampler')?.value ?? s.arg(baseCall, 'sampler', 3);
  if (dataset?.type !== 'identifier' || sampler?.type !== 'identifier') return undefined;
  const rebound = reboundNames(model, init);
  const datasetName = s.text(dataset);
  if (rebound.has(datasetName) || !init.params.some((p) => p.name === datasetName)) return undefined;
  const writes = init.assignments.filter((a) => s.text(child(a, 'left') ?? a) === s.text(sampler));
  const sharding = writes.filter((a) => {
    const right = child(a, 'right');
    return a.type === 'assignment' && right?.type === 'call' && SHARDING_SAMPLER.test(s.calleeName(right));
  });
  if (sharding.length !== 1 || !samplesDataset(model, child(sharding[0], 'right')!, datasetName)) return undefined;
  const guards = plainGuards(sharding[0], init);
  if (!guards || guards.length > 1) return undefined;
  if (guards.length === 0) return writes.length === 1 ? true : undefined;
  const test = unparen(guards[0].test);
  const flag = s.text(test);
  if (test.type !== 'identifier' || !guards[0].expect || rebound.has(flag)) return undefined;
  if (!model.callableParams(init).some((p) => p.name === flag)) return undefined;
  const exclusive = writes.every(
    (w) => w === sharding[0] || (plainGuards(w, init) ?? []).some((g) => !g.expect && s.text(unparen(g.test)) === flag),
  );
  return exclusive ? flag : undefined;
}

/** The sampler splits that dataset among every rank: given it or its length, and no count of replicas. */
function samplesDataset(model: FileModel, samplerCall: PyNode, dataset: string): boolean {
  const s = model.syntax;
  if (s.arg(samplerCall, 'num_replicas', 1) && s.arg(samplerCall, 'dataset', 0)) return false;
  const args = s.args(samplerCall);
  if (args.keywords.has('num_replicas')) return false;
  const given = args.keywords.get('dataset')?.value ?? args.positional[0];
  if (given && args.keywords.get('dataset')?.value === given) return s.text(unparen(given)) === dataset;
  const sized = SIZE_KEYWORDS.map((k) => args.keywords.get(k)?.value).find((v) => v !== undefined);
  const counted = sized && lenArgument(model, sized);
  if (counted) return s.text(counted) === dataset;
  return given !== undefined && s.text(unparen(given)) === dataset;
}

/**
 * The value a name has at `use` where the function writes it once, with `=`, in a statement of its own body (not
 * nested in a branch or loop) before `use`: a parameter rebound so (`data_loader = self._prepare(data_loader)`).
 */
function reassignedValue(model: FileModel, fn: FunctionInfo, name: string, use: PyNode): PyNode | undefined {
  const s = model.syntax;
  let writes = 0;
  for (const n of fn.nodes) {
    const left = bindingTarget(n);
    if (left) boundIdentifiers(left, (m) => void (s.text(m) === name && writes++));
  }
  const assignment = fn.assignments.find((a) => s.text(child(a, 'left') ?? a) === name);
  const statement = assignment?.parent;
  if (writes !== 1 || assignment?.type !== 'assignment' || statement?.type !== 'expression_statement') return undefined;
  if (statement.parent !== child(fn.node, 'body') || assignment.end > use.start) return undefined;
  return child(assignment, 'right') ?? undefined;
}

function compact(model: FileModel, node: PyNode): string {
  return model.syntax.text(node).replace(/\s+/g, '');
}

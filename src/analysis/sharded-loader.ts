// A batch size computed from a dataset's length and a loader's number of steps (`len(loader.dataset) //
// len(loader)`, or `len(dataset) * sample_rate` with `sample_rate = 1 / len(loader)`) is the GLOBAL batch, summed
// over all ranks, when the loader draws from a sampler that splits the dataset among the ranks: each rank then sees
// len(dataset) / N samples in len(loader) steps, so the ratio is N times the batch a rank computes. A divisor made
// this way counts like a count all-reduced over the ranks (sizes.ts' 'global-count'). A loader without such a
// sampler (each rank iterates the whole dataset) makes the ratio the rank's own batch, and a loader the code does
// not build in view proves nothing, so both keep the ratio unclassified.
import { child, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import { nestedCalls } from './nested-calls';
import {
  atCaller,
  baseInitCall,
  classmethodConstruction,
  type ScopedCall,
  type ScopedValue,
} from './class-constructors';

/** Samplers that give each rank its own share of the dataset (torch's DistributedSampler and its relatives). */
const SHARDING_SAMPLER = /^Distributed\w*Sampler$/;
/** The loader classes whose length is the number of batches their sampler yields. */
const LOADER = /^DataLoader$/;
/** The world size as the code writes it when it passes it to a sampler. */
const WORLD_SIZE = /^((\w+\.)*get_world_size\(\)|(\w+\.)*(world_size|num_replicas|num_processes))$/;
/** How many names (`sample_rate`, `loader`) are followed back to their assignment. */
const MAX_DEPTH = 4;

interface Factor {
  readonly node: PyNode;
  readonly sign: 1 | -1;
  /** The function whose names the factor is written in (a name's value may come from an enclosing one). */
  readonly fn: FunctionInfo;
}

/**
 * True when `expr` is len(D) over len(L) (with factors of 1 at most), where L is a DataLoader built in view with a
 * sharding sampler and D is the dataset that loader (and its sampler) draw from.
 */
export function isShardedGlobalBatch(model: FileModel, expr: PyNode, fn: FunctionInfo): boolean {
  const factors = flatten(model, expr, fn, 1, 0);
  if (!factors) return false;
  const up = factors.filter((f) => f.sign === 1 && model.syntax.numberValue(f.node) !== 1);
  const down = factors.filter((f) => f.sign === -1 && model.syntax.numberValue(f.node) !== 1);
  if (up.length !== 1 || down.length !== 1) return false;
  const dataset = lenArgument(model, up[0].node);
  const loader = lenArgument(model, down[0].node);
  if (!dataset || !loader) return false;
  const variants = shardedLoader(model, loader, down[0].fn, 0);
  if (!variants) return false;
  const datasetText = compact(model, dataset);
  if (datasetText === `${compact(model, loader)}.dataset`) return true;
  return variants.every((v) => {
    const bound = v.bind({ node: dataset, fn: up[0].fn });
    return bound !== undefined && v.dataset !== undefined && compact(model, bound.node) === v.dataset;
  });
}

/** One way the loader is built: at one call site of the function it is a parameter of, or in view directly. */
interface LoaderVariant {
  /** The dataset as written in the scope `bind` leads to; absent when only `loader.dataset` names it. */
  readonly dataset?: string;
  /** Carries a value written where the ratio is to that scope (through the call site), where it can. */
  readonly bind: (value: ScopedValue) => ScopedValue | undefined;
}

/**
 * Every way the loader can be built, each proven to split its dataset among the ranks; undefined when any is not.
 * A parameter of a nested function is followed to the arguments of all of that function's calls
 * (nested-calls.ts); a name or `self.x` to its one value in view.
 */
function shardedLoader(model: FileModel, loader: PyNode, fn: FunctionInfo, depth: number): LoaderVariant[] | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const s = model.syntax;
  const node = unparen(loader);
  if (node.type === 'identifier' && fn.params.some((p) => p.name === s.text(node))) {
    // Every call of a nested function is in view (nested-calls.ts): the loader is what each of them passes.
    const calls = nestedCalls(model, fn);
    if (!calls) return undefined;
    const out: LoaderVariant[] = [];
    for (const call of calls) {
      const caller = model.enclosingFunction(call);
      if (!caller) return undefined;
      const toSite = (v: ScopedValue): ScopedValue | undefined => atCaller(model, v, fn, { call, fn: caller });
      const argument = toSite({ node, fn });
      const inner = argument && shardedLoader(model, argument.node, argument.fn, depth + 1);
      if (!inner) return undefined;
      for (const v of inner)
        out.push({
          dataset: v.dataset,
          bind: (x) => {
            const atSite = toSite(x);
            return atSite && v.bind(atSite);
          },
        });
    }
    return out;
  }
  const built = loaderConstruction(model, node, fn, depth);
  return built ? [{ dataset: built.dataset, bind: (v) => v }] : undefined;
}

/** The product's factors with the names assigned once in view replaced by their values; `//` divides too. */
export function flatten(
  model: FileModel,
  expr: PyNode,
  fn: FunctionInfo,
  sign: 1 | -1,
  depth: number,
): Factor[] | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const s = model.syntax;
  const n = s.stripWrappers(expr);
  if (n.type === 'binary_operator') {
    const op = s.operator(n);
    const left = child(n, 'left');
    const right = child(n, 'right');
    if (!left || !right || !['*', '/', '//'].includes(op)) return undefined;
    const l = flatten(model, left, fn, sign, depth + 1);
    const r = flatten(model, right, fn, op === '*' ? sign : (-sign as 1 | -1), depth + 1);
    return l && r ? [...l, ...r] : undefined;
  }
  if (n.type === 'identifier') {
    const value = singleValue(model, s.text(n), fn);
    if (value && value.node.type !== 'identifier') return flatten(model, value.node, value.fn, sign, depth + 1);
  }
  return [{ node: n, sign, fn }];
}

/** `len(x)` → x. */
export function lenArgument(model: FileModel, node: PyNode): PyNode | undefined {
  const n = unparen(node);
  if (n.type !== 'call' || model.syntax.calleeText(n) !== 'len') return undefined;
  const args = model.syntax.args(n);
  return args.positional.length === 1 && args.keywords.size === 0 ? unparen(args.positional[0]) : undefined;
}

/**
 * The dataset a loader named by `loader` draws from, when every value the name is given in view is a
 * `DataLoader(dataset, sampler=DistributedSampler(dataset, ...))` over one dataset (the sampler may be a name
 * assigned such a call), directly or through a DataLoader subclass of this file or its classmethod constructor
 * (loaderBuild). A loader passed in, or built twice in different ways, is not proven. The dataset's text is given
 * only where it is written in the caller's names; otherwise only `len(loader.dataset)` names it.
 */
function loaderConstruction(
  model: FileModel,
  loader: PyNode,
  fn: FunctionInfo,
  depth: number,
): { dataset: string | undefined } | undefined {
  const s = model.syntax;
  const value =
    loader.type === 'call'
      ? { node: loader, fn }
      : loader.type === 'identifier'
        ? singleValue(model, s.text(loader), fn)
        : attributeValue(model, loader);
  if (!value || depth > MAX_DEPTH) return undefined;
  const call = unparen(value.node);
  if (call.type !== 'call') return undefined;
  const build = loaderBuild(model, { call, fn: value.fn });
  if (!build) return undefined;
  const samplerCall = samplerConstruction(model, build.sampler.node, build.sampler.fn);
  if (!samplerCall) return undefined;
  if (!splitsAmongAllRanks(model, samplerCall, (n) => build.atCaller({ node: n, fn: build.sampler.fn })))
    return undefined;
  const sampledNode = s.arg(samplerCall, 'dataset', 0);
  const sampled = sampledNode ? build.atCaller({ node: sampledNode, fn: build.sampler.fn }) : undefined;
  if (
    !sampled ||
    sampled.fn !== build.dataset.fn ||
    compact(model, sampled.node) !== compact(model, build.dataset.node)
  )
    return undefined;
  return { dataset: build.dataset.fn === value.fn ? compact(model, build.dataset.node) : undefined };
}

interface LoaderBuild {
  readonly dataset: ScopedValue;
  readonly sampler: ScopedValue;
  /** Carries a value written inside the subclass or classmethod back to the caller's names where it can. */
  readonly atCaller: (value: ScopedValue) => ScopedValue | undefined;
}

/**
 * The dataset and sampler a loader construction gives torch's DataLoader: `DataLoader(...)` itself, a subclass of
 * this file built directly (its `__init__` passes them on to `super().__init__`), or a classmethod constructor of
 * such a subclass that returns `cls(...)` (class-constructors.ts). A subclass that defines `__len__` or `__iter__`
 * changes what `len(loader)` counts, so it is not followed.
 */
function loaderBuild(model: FileModel, site: ScopedCall): LoaderBuild | undefined {
  const s = model.syntax;
  const identity = (v: ScopedValue): ScopedValue => v;
  if (LOADER.test(s.calleeName(site.call))) return fromLoaderCall(model, site, identity);
  const viaClassmethod = classmethodConstruction(model, site.call);
  if (viaClassmethod) {
    const inner = subclassBuild(model, viaClassmethod.className, viaClassmethod.built);
    if (!inner) return undefined;
    const back = (v: ScopedValue): ScopedValue | undefined => {
      const once = inner.atCaller(v);
      return once && atCaller(model, once, viaClassmethod.built.fn, site);
    };
    return withCaller(inner, back);
  }
  const fnNode = child(site.call, 'function');
  return fnNode?.type === 'identifier' ? subclassBuild(model, s.text(fnNode), site) : undefined;
}

function subclassBuild(model: FileModel, className: string, site: ScopedCall): LoaderBuild | undefined {
  const bases = model.classBasesOf(className);
  if (bases?.length !== 1 || !LOADER.test(bases[0].split('.').pop() ?? '')) return undefined;
  const overrides = ['__len__', '__iter__'].some((m) => model.byName.get(m)?.some((f) => f.className === className));
  const init = model.initOf(className);
  const base = baseInitCall(model, className);
  if (overrides || !init || !base) return undefined;
  return fromLoaderCall(model, base, (v) => atCaller(model, v, init, site));
}

function fromLoaderCall(
  model: FileModel,
  site: ScopedCall,
  back: (v: ScopedValue) => ScopedValue | undefined,
): LoaderBuild | undefined {
  const s = model.syntax;
  const datasetNode = s.arg(site.call, 'dataset', 0);
  const samplerNode = s.arg(site.call, 'sampler', 3) ?? s.args(site.call).keywords.get('batch_sampler')?.value;
  if (!datasetNode || !samplerNode) return undefined;
  const dataset = back({ node: datasetNode, fn: site.fn });
  const sampler = back({ node: samplerNode, fn: site.fn });
  return dataset && sampler ? { dataset, sampler, atCaller: back } : undefined;
}

function withCaller(build: LoaderBuild, back: (v: ScopedValue) => ScopedValue | undefined): LoaderBuild | undefined {
  const dataset = back(build.dataset);
  const sampler = back(build.sampler);
  return dataset && sampler ? { dataset, sampler, atCaller: back } : undefined;
}

function compact(model: FileModel, node: PyNode): string {
  return model.syntax.text(node).replace(/\s+/g, '');
}

/**
 * The sampler splits the dataset among every rank: `num_replicas` is left to its default (the world size), or
 * given as the world size. A sampler told another count (`num_replicas=1` for an evaluation loader) is not proven.
 */
function splitsAmongAllRanks(
  model: FileModel,
  samplerCall: PyNode,
  atCaller: (node: PyNode) => ScopedValue | undefined,
): boolean {
  const replicas = model.syntax.arg(samplerCall, 'num_replicas', 1);
  if (!replicas) return true;
  // A subclass's parameter (`num_replicas=num_replicas`) is what its caller passes.
  const value = atCaller(replicas);
  return value !== undefined && WORLD_SIZE.test(compact(model, value.node));
}

function samplerConstruction(model: FileModel, sampler: PyNode, fn: FunctionInfo): PyNode | undefined {
  const s = model.syntax;
  let node = unparen(sampler);
  if (node.type === 'identifier') node = unparen(singleValue(model, s.text(node), fn)?.node ?? node);
  else if (node.type === 'attribute') node = unparen(attributeValue(model, node)?.node ?? node);
  return node.type === 'call' && SHARDING_SAMPLER.test(s.calleeName(node)) ? node : undefined;
}

/** The one value `name` is assigned in `fn` or, when `fn` does not assign it, in the functions around it. */
function singleValue(model: FileModel, name: string, fn: FunctionInfo): { node: PyNode; fn: FunctionInfo } | undefined {
  for (let f: FunctionInfo | undefined = fn; f; f = f.enclosing) {
    if (f.params.some((p) => p.name === name)) return undefined;
    const values: PyNode[] = [];
    for (const a of f.assignments) {
      const left = child(a, 'left');
      const right = child(a, 'right');
      if (left?.type !== 'identifier' || !right || model.syntax.text(left) !== name) continue;
      // `batch /= world_size` (opacus' fix, under `if distributed:`) rescales the value on some paths: not one value.
      if (a.type !== 'assignment') return undefined;
      values.push(right);
    }
    if (values.length === 1) return { node: values[0], fn: f };
    if (values.length > 1) return undefined;
  }
  return undefined;
}

/** The one value a `self.x` attribute is assigned in the file's methods of that object. */
function attributeValue(model: FileModel, node: PyNode): { node: PyNode; fn: FunctionInfo } | undefined {
  const text = model.syntax.text(node).replace(/\s+/g, '');
  if (!text.startsWith('self.')) return undefined;
  const fn = model.enclosingFunction(node);
  if (!fn) return undefined;
  const values = model.valuesSeenBy(text, fn);
  return values.length === 1 ? { node: values[0].value, fn: values[0].fn } : undefined;
}

/**
 * The sentence a finding adds when the divisor `node` (a name assigned the ratio, or the ratio itself) is such a
 * global batch: the message then says why the count is over all ranks, which the divisor's name rarely does.
 */
export function globalBatchNote(model: FileModel, node: PyNode): string | undefined {
  const fn = model.enclosingFunction(node);
  if (!fn) return undefined;
  const s = model.syntax;
  let ratio: PyNode | undefined = s.stripWrappers(node);
  if (ratio.type === 'identifier') ratio = singleValue(model, s.text(ratio), fn)?.node;
  if (!ratio || !isShardedGlobalBatch(model, ratio, fn)) return undefined;
  const written = s.text(node).replace(/\s+/g, ' ');
  const value = s.text(ratio).replace(/\s+/g, ' ');
  const head = written === value ? `\`${clipped(value)}\`` : `\`${clipped(written)}\` (\`${clipped(value)}\`)`;
  return `${head} is the batch of all ranks together, since the loader's distributed sampler gives each rank 1/N of the dataset in the same number of steps.`;
}

function clipped(text: string): string {
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

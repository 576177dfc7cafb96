// Per-class summaries across files. A method that reduces over `self.group` and divides by `self.factor` can only
// say what they are when it knows what the object was built with, and the construction is often in another file
// (an engine builds the optimizer with `dp_process_group=self.seq_data_parallel_group`). So each file records what
// its constructor calls pass (the construction sites), with the denotation of each argument read in that file: the
// parallel dimensions of a process group, or of a size. When a method's `self.x` comes from an `__init__`
// parameter the file cannot bind, the program gathers every construction site of the class in the workspace: the
// parameter denotes what they all pass when they agree, and nothing when one disagrees, passes nothing (the
// default), passes `*args`/`**kwargs`, or is a subclass passing its own parameter on.
import { child, hasSplat, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import { nestedCallContexts } from './call-contexts';
import type { OriginOf } from './site-variants';
import { elementCalls, variantsOf } from './element-sites';
import { GroupSizes } from './group-sizes';
import type { ArgumentDenotation, ConstructorArgument, ProgramPlace, ValueOrigin } from './constructor-request';
import { placeOf } from './constructor-request';
import { listedSlots, loopVaryingArguments, type CallSlot } from './per-call-sites';

// The request's shapes live in constructor-request.ts, below group-sizes.ts, which asks for constructor arguments.
export {
  constructorRequest,
  type ArgumentDenotation,
  type ConstructorArgument,
  type ConstructorRequest,
} from './constructor-request';

/**
 * A site builds the class for certain, may build it (an import the program cannot resolve), or is test code; a
 * 'per-call' site is a top-level function's site read with a call in view (per-call-links.ts), and a 'called' site
 * is that function's own site, which stands for its callers not in view.
 */
export type SiteKind = 'certain' | 'possible' | 'test' | 'per-call' | 'called';

/** One call that builds an object of a class, or a subclass constructor passing arguments to its base's. */
export interface ConstructionSite {
  /** The dotted module the class name is imported from; undefined when the class is defined in the same file. */
  readonly module?: string;
  readonly name: string;
  readonly positional: readonly (ArgumentDenotation | undefined)[];
  readonly keywords: ReadonlyMap<string, ArgumentDenotation | undefined>;
  /** `*args` or `**kwargs` hide which argument is which. */
  readonly opaque: boolean;
  /** The top-level function of the file the site is in, if it is in one. */
  readonly inFunction?: string;
  /** The calls that receive a local list holding only this construction (per-call-sites.ts). */
  readonly listedFor?: readonly CallSlot[];
  /** The arguments (positions, keyword names) that may differ between the elements of such a list. */
  readonly loopVarying?: ReadonlySet<string>;
}

/**
 * The construction sites of a file: calls of capitalised names it imports or defines, and `super().__init__`.
 * `constructorArgument` says what this file's own classes were built with, so a site inside a method that passes
 * `self.group` on to another class (a buffer building its buckets) denotes what the buffer was built with.
 */
export function constructionSites(model: FileModel, constructorArgument?: ConstructorArgument): ConstructionSite[] {
  const s = model.syntax;
  const sizes = new GroupSizes(model, constructorArgument);
  const defined = new Set(model.functions.filter((f) => f.name === '__init__').map((f) => f.className));
  const out: ConstructionSite[] = [];
  for (const fn of model.functions) {
    // A helper nested in a function builds one object per call of the helper, each with that call's arguments.
    let contexts: ReturnType<typeof nestedCallContexts> | null = null;
    const inFunction = fn.node.type === 'function_definition' && fn.enclosing?.node.type === 'module' && !fn.className;
    for (const call of fn.calls) {
      const target = constructed(model, call, fn, defined);
      if (!target) continue;
      if (contexts === null) contexts = nestedCallContexts(model, fn);
      const listedFor = listedSlots(model, call, fn);
      const listed =
        listedFor.length > 0 ? { listedFor, loopVarying: loopVaryingArguments(model, call, fn) } : undefined;
      const argList = child(call, 'arguments');
      const opaque = !!hasSplat(argList);
      const args = s.args(call);
      const names = [...args.keywords.keys()];
      const own = [...args.positional, ...names.map((name) => args.keywords.get(name)!.value)];
      // The arguments of the objects built inside a list argument are evaluated with the site's own, so each
      // variant keeps an element's factor with the group the same path passed.
      const lists = own.map((node) => elementCalls(model, node, (c) => constructed(model, c, fn, defined)));
      const nodes = [...own, ...lists.flatMap((l) => l?.flatMap((e) => e.nodes) ?? [])];
      for (const [k, env] of (contexts ? contexts.map((c) => c.env) : [{ fn }]).entries()) {
        // A helper's construction site is reached through the call of the helper that passed the value.
        const passedAt = contexts ? [placeOf(model, contexts[k].call), placeOf(model, call)] : [placeOf(model, call)];
        const originOf: OriginOf = (origin, argument) =>
          origin && 'passed' in origin
            ? { ...origin.passed, through: [...origin.passed.through, ...passedAt] }
            : { ...placeOf(model, origin?.node ?? argument), through: passedAt };
        for (const values of env ? variantsOf(sizes, own, nodes, lists, env, originOf) : [own.map(() => undefined)]) {
          const positional = values.slice(0, args.positional.length);
          const keywords = new Map(names.map((name, i) => [name, values[args.positional.length + i]] as const));
          out.push({
            ...target,
            positional,
            keywords,
            opaque: opaque || !env,
            ...(inFunction ? { inFunction: fn.name } : {}),
            ...listed,
          });
        }
      }
    }
    for (const n of fn.nodes) {
      if ((n.type !== 'identifier' && n.type !== 'attribute') || !escapes(model, n)) continue;
      const target = n.type === 'identifier' ? classNamed(model, s.text(n), defined) : attributeClass(model, n);
      if (target) out.push({ ...target, positional: [], keywords: new Map(), opaque: true });
    }
  }
  return out;
}

/** The origins of a site's arguments, with the file's name on every place of this file (those without one). */
export function inFile(site: ConstructionSite, file: string): ConstructionSite {
  const stamp = (p: ProgramPlace): ProgramPlace => (p.file === undefined ? { ...p, file } : p);
  const origin = (o: ValueOrigin): ValueOrigin => ({ ...stamp(o), through: o.through.map(stamp) });
  const denotation = (d: ArgumentDenotation | undefined): ArgumentDenotation | undefined => {
    if (!d) return d;
    const elements = d.elements?.map((e) => ({
      ...e,
      positional: e.positional.map(denotation),
      keywords: new Map([...e.keywords].map(([k, v]) => [k, denotation(v)] as const)),
    }));
    return { ...d, ...(d.origin ? { origin: origin(d.origin) } : {}), ...(elements ? { elements } : {}) };
  };
  return {
    ...site,
    positional: site.positional.map(denotation),
    keywords: new Map([...site.keywords].map(([k, d]) => [k, denotation(d)] as const)),
  };
}

/**
 * A class used as a value (`cls = Optimizer`, `registry = {"zero": Optimizer}`, `build(Optimizer)`) may be built
 * where the analysis cannot see the call: it counts as a construction site with unknown arguments.
 */
function escapes(model: FileModel, n: PyNode): boolean {
  const parent = n.parent;
  if (!parent) return false;
  switch (parent.type) {
    case 'assignment':
      return n.field === 'right';
    case 'keyword_argument':
    case 'pair':
      return n.field === 'value';
    case 'tuple':
      return !(parent.parent?.type === 'argument_list' && isTypeTest(model, parent.parent.parent));
    case 'list':
    case 'set':
    case 'return_statement':
    case 'expression_list':
      return true;
    case 'argument_list': {
      // `isinstance(x, Optimizer)` and a class's bases name the class without building it.
      const call = parent.parent;
      if (call?.type === 'class_definition') return false;
      return !isTypeTest(model, call);
    }
    default:
      return false;
  }
}

function isTypeTest(model: FileModel, call: PyNode | null | undefined): boolean {
  const callee = call?.type === 'call' ? model.syntax.calleeName(call) : '';
  return callee === 'isinstance' || callee === 'issubclass' || callee === 'super';
}

function classNamed(
  model: FileModel,
  name: string,
  defined: ReadonlySet<string | undefined>,
): { module?: string; name: string } | undefined {
  if (defined.has(name)) return { name };
  return splitDotted(model.moduleOf(name), name);
}

/** The class a call builds, as `[module, name]`: `Cls(...)`, `mod.Cls(...)`, or `super().__init__(...)`. */
function constructed(
  model: FileModel,
  call: PyNode,
  fn: FunctionInfo,
  defined: ReadonlySet<string | undefined>,
): { module?: string; name: string } | undefined {
  const s = model.syntax;
  const callee = child(call, 'function');
  if (!callee) return undefined;
  if (callee.type === 'identifier') {
    const name = s.text(callee);
    return /^_*[A-Z]/.test(name) ? classNamed(model, name, defined) : undefined;
  }
  if (callee.type !== 'attribute') return undefined;
  const obj = child(callee, 'object');
  const attr = child(callee, 'attribute');
  if (!obj || !attr) return undefined;
  const name = s.text(attr);
  // `super().__init__(...)` in a subclass constructor passes arguments to its base's constructor.
  if (name === '__init__' && obj.type === 'call' && s.calleeText(obj) === 'super' && fn.name === '__init__')
    return baseOf(model, fn);
  return attributeClass(model, callee);
}

/** `mod.Cls`, `pkg.mod.Cls`, or `obj.Cls` of an object the file cannot name, as `[module, name]`. */
function attributeClass(model: FileModel, node: PyNode): { module: string; name: string } | undefined {
  const s = model.syntax;
  const obj = child(node, 'object');
  const attr = child(node, 'attribute');
  if (!obj || !attr) return undefined;
  const name = s.text(attr);
  if (!/^_*[A-Z]/.test(name)) return undefined;
  // `mod.Cls(...)`, `pkg.mod.Cls(...)`, or an object the file cannot name: the last may still build the class, so it
  // is kept under a module that resolves to no file (and then counts as a possible site).
  const text = s.text(obj).replace(/\s+/g, '');
  return { module: (obj.type === 'identifier' ? model.moduleOf(text) : undefined) ?? text, name };
}

function splitDotted(target: string | undefined, name: string): { module: string; name: string } | undefined {
  if (!target || !target.includes('.')) return undefined;
  const cut = target.lastIndexOf('.');
  return target.slice(cut + 1) === name ? { module: target.slice(0, cut), name } : undefined;
}

/** The single base class of the constructor's class, as imported or defined in the file. */
function baseOf(model: FileModel, init: FunctionInfo): { module?: string; name: string } | undefined {
  let cls: PyNode | null = init.node.parent;
  while (cls && cls.type !== 'class_definition') cls = cls.parent;
  const bases = cls ? child(cls, 'superclasses') : undefined;
  const names = (bases?.children ?? []).filter((c) => c.type === 'identifier' || c.type === 'attribute');
  if (names.length !== 1) return undefined;
  const text = model.syntax.text(names[0]);
  const name = text.split('.').pop() ?? text;
  if (names[0].type === 'identifier') return splitDotted(model.moduleOf(text), name) ?? { name };
  const module = model.moduleOf(text.slice(0, text.lastIndexOf('.')));
  return module ? { module, name } : undefined;
}

export { dimsKey } from './dims';

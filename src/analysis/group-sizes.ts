// Symbolic sizes of the process groups that model-parallel frameworks build. A group is a product of named
// parallel dimensions (dp: data, cp: context, sp: Ulysses sequence, ep: expert, edp: expert-data, tp, pp, mp), as
// written by the frameworks' constructors and `get_*_world_size` helpers. A sum over a group multiplies the
// gradients by the number of its ranks that hold copies of the same mean (the replicas), not by its whole size:
// Ulysses sequence ranks hold disjoint parts of one sequence's gradient, so a sum over the sequence-data-parallel
// group (dp × sp ranks) counts dp replicas and must be divided by dp. A wrong divisor is proven only when the
// group and every divisor are named by such helpers on one consistent path through the `if` branches, and their
// quotient keeps a dimension that the code names.
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { Binding, Env } from './sizes';
import { elementRequest, rebinds } from './element-attributes';
import { listedElementArgument } from './listed-elements';
import {
  constructorRequest,
  placeOf,
  type ConstructorArgument,
  type ConstructorRequest,
  type ProgramPlace,
} from './constructor-request';
import {
  branchesOf,
  combine,
  consistent,
  MAX_ALTERNATIVES,
  merge,
  reachingAssignments,
  answerAlternatives,
  type SizeAlternative,
  type SizeOrigin,
} from './size-alternatives';

// Dims lives in dims.ts, below constructor-request.ts, which this file imports.
export type { Dims } from './dims';
// The symbolic arithmetic lives in size-alternatives.ts; it is re-exported so callers import group sizes from one place.
export {
  branchesOf,
  combine,
  formatDims,
  multiplyDims,
  replicaDims,
  type SizeAlternative,
  type SizeOrigin,
} from './size-alternatives';

/** The dimensions a group helper's name denotes, after `_get_` / `get_` and `_group` / `_world_size` are removed. */
const GROUP_DIMS: Record<string, readonly string[]> = {
  data_parallel: ['dp'],
  sequence_data_parallel: ['dp', 'sp'],
  sequence_parallel: ['sp'],
  context_parallel: ['cp'],
  expert_data_parallel: ['edp'],
  data_modulo_expert_parallel: ['edp'],
  expert_model_parallel: ['ep'],
  expert_parallel: ['ep'],
  expert_tensor_parallel: ['etp'],
  tensor_model_parallel: ['tp'],
  pipeline_model_parallel: ['pp'],
  model_parallel: ['mp'],
};

const MAX_DEPTH = 8;

function normalisedHelper(name: string): string {
  return name
    .replace(/^_+/, '')
    .replace(/^get_/, '')
    .replace(/(_world_size|_group(_gloo|_dict)?)$/, '');
}

/** What a constructor argument may denote: a process group, a size, or a dict of process groups. */
export type DenotationKind = 'group' | 'size' | 'groupDict';

export class GroupSizes {
  /**
   * `constructorArgument` says what a constructor parameter denotes over the construction sites of the whole
   * program (class-summaries.ts), for objects whose creation this file does not show.
   */
  constructor(
    private readonly model: FileModel,
    private readonly constructorArgument?: ConstructorArgument,
  ) {}

  /** The dimensions of a process-group expression, per path; undefined when any path's group is not named. */
  group(node: PyNode | undefined, env: Env, depth = 0): SizeAlternative[] | undefined {
    if (!node || depth > MAX_DEPTH) return undefined;
    const s = this.model.syntax;
    const n = unparen(node);
    if (n.type === 'call') {
      const dims = this.helperDims(n, /_group(_gloo)?$/);
      return dims ? [{ dims, branches: new Map() }] : undefined;
    }
    if (n.type === 'conditional_expression') return this.conditional(n, (b) => this.group(b, env, depth + 1));
    if (n.type === 'identifier' || n.type === 'attribute')
      return this.name(n, s.text(n).replace(/\s+/g, ''), env, depth, 'group', (v, e) => this.group(v, e, depth + 1));
    // `groups_by_name[name]`: every group of a dict of groups has the dimensions the dict was built with.
    if (n.type === 'subscript') return this.groupDict(child(n, 'value') ?? undefined, env, depth + 1);
    return undefined;
  }

  /**
   * The dimensions every group of a dict of groups has (DeepSpeed's `_get_expert_data_parallel_group_dict()`, one
   * expert-data-parallel group per expert group name), per path. A `None` branch (`d if has_moe else None`) gives no
   * value: subscripting it fails, so a group read out of the dict never took that path.
   */
  groupDict(node: PyNode | undefined, env: Env, depth = 0): SizeAlternative[] | undefined {
    if (!node || depth > MAX_DEPTH) return undefined;
    const s = this.model.syntax;
    const n = unparen(node);
    if (n.type === 'call') {
      const dims = this.helperDims(n, /_group_dict$/);
      return dims ? [{ dims, branches: new Map() }] : undefined;
    }
    if (n.type === 'conditional_expression') {
      const parts = named(n);
      const out: SizeAlternative[] = [];
      for (const [i, branch] of [parts[0], parts[2]].entries()) {
        if (branch && unparen(branch).type === 'none') continue;
        const values = this.groupDict(branch, env, depth + 1);
        if (!values) return undefined;
        for (const v of values) out.push({ ...v, branches: merge(v.branches, new Map([[n, i]])) });
      }
      return out.length > 0 ? out : undefined;
    }
    if (n.type === 'identifier' || n.type === 'attribute')
      return this.name(n, s.text(n).replace(/\s+/g, ''), env, depth, 'groupDict', (v, e) =>
        this.groupDict(v, e, depth + 1),
      );
    return undefined;
  }

  /** The dimensions of a size expression (`dist.get_world_size(group=g) / float(sp)`), per path. */
  size(node: PyNode, env: Env, depth = 0): SizeAlternative[] | undefined {
    if (depth > MAX_DEPTH) return undefined;
    const s = this.model.syntax;
    const n = s.stripWrappers(node);
    if (s.numberValue(n) === 1) return [{ dims: new Map(), branches: new Map() }];
    if (n.type === 'binary_operator') {
      const factors = s.factors(n);
      if (factors.length < 2) return undefined;
      return combine(
        factors.map((f) => this.size(f.node, env, depth + 1)),
        factors.map((f) => f.sign),
      );
    }
    if (n.type === 'call') {
      const name = s.calleeName(n);
      if (name === 'get_world_size') {
        // The default group is the whole job, which the world-size rules already judge.
        const g = s.arg(n, 'group', 0);
        // The size is read here from the group: where the group was chosen did not choose this divisor.
        return g ? this.group(g, env, depth + 1)?.map(({ dims, branches }) => ({ dims, branches })) : undefined;
      }
      const dims = this.helperDims(n, /_world_size$/);
      return dims ? [{ dims, branches: new Map() }] : undefined;
    }
    if (n.type === 'conditional_expression') return this.conditional(n, (b) => this.size(b, env, depth + 1));
    if (n.type === 'identifier' || n.type === 'attribute')
      return this.name(n, s.text(n).replace(/\s+/g, ''), env, depth, 'size', (v, e) => this.size(v, e, depth + 1));
    return undefined;
  }

  /** `parallel_state.get_data_parallel_world_size(with_context_parallel=True)` → dp × cp. */
  private helperDims(call: PyNode, suffix: RegExp): Map<string, number> | undefined {
    const s = this.model.syntax;
    const name = s.calleeName(call);
    if (!suffix.test(name)) return undefined;
    const dims = GROUP_DIMS[normalisedHelper(name)];
    if (!dims) return undefined;
    const out = new Map(dims.map((d) => [d, 1] as [string, number]));
    const withCp = s.args(call).keywords.get('with_context_parallel')?.value;
    if (withCp && dims.includes('dp')) {
      if (withCp.type !== 'true' && withCp.type !== 'false') return undefined;
      if (withCp.type === 'true') out.set('cp', 1);
    }
    return out;
  }

  private conditional(
    n: PyNode,
    evaluate: (branch: PyNode) => SizeAlternative[] | undefined,
  ): SizeAlternative[] | undefined {
    const parts = named(n);
    const branches = [parts[0], parts[2]];
    const out: SizeAlternative[] = [];
    for (let i = 0; i < branches.length; i++) {
      const values = branches[i] ? evaluate(branches[i]) : undefined;
      if (!values) return undefined;
      for (const v of values) out.push({ ...v, branches: merge(v.branches, new Map([[n, i]])) });
    }
    return out;
  }

  /**
   * A name's values: the argument its caller gave (or the local assignments when the caller left the default
   * `None`, the `if x is None: x = ...` idiom), else the assignments before it in the function that can run on
   * the same path, else a `self.` attribute's assignments (through the constructor's arguments when known).
   */
  private name(
    n: PyNode,
    text: string,
    env: Env,
    depth: number,
    kind: DenotationKind,
    evaluate: (value: PyNode, env: Env) => SizeAlternative[] | undefined,
  ): SizeAlternative[] | undefined {
    const s = this.model.syntax;
    const at = branchesOf(n);
    if (n.type === 'identifier') {
      const binding = env.bindings?.get(text);
      if (binding && !this.bindsNone(binding)) return evaluate(binding.node, binding.env);
      const isParam = env.fn.params.some((p) => p.name === text);
      if (isParam && !binding) return undefined;
      const local = reachingAssignments(this.model, env.fn, text, n, at);
      if (local.length === 0) return undefined;
      return this.union(
        local.map((a) => {
          const where = branchesOf(a);
          const values = evaluate(child(a, 'right')!, env);
          if (!values) return undefined;
          const out: SizeAlternative[] = [];
          // The innermost assignment that decided the value is where it was chosen.
          for (const v of values)
            if (consistent(v.branches, where))
              out.push({ dims: v.dims, branches: merge(v.branches, where), origin: v.origin ?? { node: a } });
          return out;
        }),
      );
    }
    // `buffer.group` of `for buffer in buffers`, or `buffers[0].group`: what the buffers' one construction passed.
    const listed = listedElementArgument(this.model, n, env);
    if (listed) return evaluate(listed.node, listed.env);
    const element = elementRequest(this.model, n, env);
    if (element && 'bound' in element) {
      // The value was passed in the list this object was built with: it went through that construction.
      const at = element.callSite ? placeOf(this.model, element.callSite) : undefined;
      const values = evaluate(element.bound.node, element.bound.env);
      return at ? values?.map((a) => ({ ...a, origin: this.passedThrough(a, element.bound.node, at) })) : values;
    }
    if (element) return this.fromConstructionSites(element.init, element.request, kind);
    const values = this.model.valuesSeenBy(text, env.fn);
    if (values.length === 0) return undefined;
    return this.union(
      values.map((v) => {
        const value = unparen(v.value);
        // `self.group = group` in `__init__`: the argument the object was built with.
        if (value.type === 'identifier' && v.fn.name === '__init__') {
          const b = env.instance?.get(s.text(value));
          if (!b) return this.fromParameter(v.fn, s.text(value), kind);
          // An object built in view: a value chosen elsewhere was also passed through this construction.
          const at = b.callSite ? placeOf(this.model, b.callSite) : undefined;
          const passed = evaluate(b.node, b.env);
          // A construction in a top-level function that reads its list parameter names nothing here; its calls in
          // view name it per call (per-call-links.ts), each an object that is built.
          if (!passed) return this.fromParameter(v.fn, s.text(value), kind, true);
          return passed.map((a) => (at ? { ...a, origin: this.passedThrough(a, b.node, at) } : a));
        }
        const assignment = v.value.parent?.type === 'assignment' ? v.value.parent : v.value;
        return evaluate(v.value, { fn: v.fn })?.map((a) => (a.origin ? a : { ...a, origin: { node: assignment } }));
      }),
    );
  }

  /** The origin of a value passed to a constructor at `at`: chosen where it was, or in the argument itself. */
  private passedThrough(a: SizeAlternative, argument: PyNode, at: ProgramPlace): SizeOrigin {
    if (a.origin && 'passed' in a.origin)
      return { passed: { ...a.origin.passed, through: [...a.origin.passed.through, at] } };
    return { passed: { ...placeOf(this.model, a.origin?.node ?? argument), through: [at] } };
  }

  /** What every construction site of the class in the program passes for an `__init__` parameter. */
  private fromParameter(
    init: FunctionInfo,
    param: string,
    kind: DenotationKind,
    perCallOnly = false,
  ): SizeAlternative[] | undefined {
    if (!init.params.some((p) => p.name === param) || rebinds(this.model, init, param)) return undefined;
    const request = constructorRequest(this.model, init, param);
    return request ? this.fromConstructionSites(init, request, kind, perCallOnly) : undefined;
  }

  /** What every construction site of `init`'s class passes for a request, one value per site where they differ. */
  private fromConstructionSites(
    init: FunctionInfo,
    request: ConstructorRequest,
    kind: DenotationKind,
    perCallOnly = false,
  ): SizeAlternative[] | undefined {
    return answerAlternatives(this.constructorArgument?.(request), init.node, kind, perCallOnly);
  }

  /** The argument is `None`, given here or passed down unchanged from a caller's parameter that defaulted to it. */
  private bindsNone(binding: Binding, depth = 0): boolean {
    const v = unparen(binding.node);
    if (v.type === 'none') return true;
    if (v.type !== 'identifier' || depth > MAX_DEPTH) return false;
    const outer = binding.env.bindings?.get(this.model.syntax.text(v));
    return !!outer && this.bindsNone(outer, depth + 1);
  }

  private union(lists: (SizeAlternative[] | undefined)[]): SizeAlternative[] | undefined {
    if (lists.some((l) => !l || l.length === 0)) return undefined;
    const out = lists.flat() as SizeAlternative[];
    return out.length > MAX_ALTERNATIVES ? undefined : out;
  }
}

// Which ranks a reduction ran over. Only a reduction over the data-parallel replicas changes the gradient's scale:
// a sum over a tensor-, sequence-, context-, pipeline- (tied weights) or expert-parallel group adds disjoint
// contributions and is correct. So a group decides a finding only when the analysis can name it: written inline,
// held in a variable, a `self.` attribute or a parameter, or returned by a helper whose name says what it is.
// Anything else is `unknown`, and an unknown group keeps the checker silent.
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { Env } from './sizes';
import { constructorRequest, type ConstructorArgument } from './class-summaries';
import type { Dims } from './group-sizes';
import { meshDimensionSpan, type MeshSpan } from './mesh-shapes';

export type GroupKind = 'world' | 'data' | 'model' | 'unknown';

export interface GroupClass {
  readonly kind: GroupKind;
  /** How the group is written where its kind was decided (`get_data_parallel_group()`, `None`). */
  readonly evidence?: string;
  /**
   * For a named dimension of a device mesh (`mesh["dp"]`): whether its ranks are the whole job, a proven proper
   * sub-group, or not known (mesh-shapes.ts). Absent for groups that are not mesh dimensions.
   */
  readonly span?: MeshSpan;
}

const UNKNOWN: GroupClass = { kind: 'unknown' };
const MAX_DEPTH = 6;

/** Names of model-parallel groups and axes, and of partial (per-node, per-ring) groups of a hierarchical sum. */
const MODEL_NAME =
  /tensor|model|(^|[^a-z])(mp|tp|pp|cp|ep|sp|etp|mpu)([^a-z]|$)|pipe|stage|embd|embedding|tied|expert|moe|context|sequence|ulysses|intra|inter|node|local|row|col(umn)?s?([^a-z]|$)|head|ring|amax|position|shard/i;
/** Names of the data-parallel group (or axis): the replicas that hold copies of the same parameters. */
const DATA_NAME = /data_?parallel|(^|[^a-z])(dp|ddp|dpcp|dp_cp|data|batch|replica|replicas|replicate)([^a-z]|$)/i;
const WORLD_TEXT = /(^|\.)(WORLD|COMM_WORLD|_get_default_group\(\))$|^None$/;

export function groupKindOfName(name: string): GroupKind {
  const model = MODEL_NAME.test(name);
  const data = DATA_NAME.test(name);
  if (model && data) return 'unknown';
  if (model) return 'model';
  if (data) return 'data';
  return 'unknown';
}

export class GroupResolver {
  /** `constructorArgument`: what the program's construction sites pass for a constructor parameter. */
  constructor(
    private readonly model: FileModel,
    private readonly constructorArgument?: ConstructorArgument,
  ) {}

  private text(n: PyNode): string {
    return this.model.syntax.text(n).replace(/\s+/g, '');
  }

  /** The group of a reduction; `node` undefined means the argument was not written (the default group). */
  classify(node: PyNode | undefined, env: Env, depth = 0): GroupClass {
    if (!node) return { kind: 'world', evidence: 'the default group' };
    if (depth > MAX_DEPTH) return UNKNOWN;
    const n = unparen(node);
    const text = this.text(n);
    if (WORLD_TEXT.test(text)) return { kind: 'world', evidence: text };
    switch (n.type) {
      case 'none':
        return { kind: 'world', evidence: 'None' };
      case 'string':
        return this.named(this.model.syntax.stringValue(n) ?? '', text);
      case 'call':
        return this.classifyCall(n, env, depth);
      case 'identifier':
        return this.classifyIdentifier(n, text, env, depth);
      case 'attribute':
        return (
          this.fromValues(
            (this.model.assignedValues.get(text) ?? []).map((v) => ({ node: v.value, env: { fn: v.fn } })),
            depth,
          ) ?? this.named(text.split('.').pop() ?? text, text)
        );
      case 'subscript': {
        // `mesh["dp"]` names a mesh dimension; `comm["group"]` says nothing about which ranks are in it.
        const key = this.model.syntax.stringValue(child(n, 'subscript'));
        const mesh = child(n, 'value');
        return key !== undefined && mesh && /mesh/i.test(this.text(mesh))
          ? this.meshDimension(mesh, key, text, env)
          : UNKNOWN;
      }
      default:
        return UNKNOWN;
    }
  }

  private named(name: string, evidence: string): GroupClass {
    const kind = groupKindOfName(name);
    return kind === 'unknown' ? UNKNOWN : { kind, evidence };
  }

  /** A named dimension of a mesh: its kind from its name, and whether it spans the job from the mesh's shape. */
  private meshDimension(mesh: PyNode, dim: string, evidence: string, env: Env): GroupClass {
    const group = this.named(dim, evidence);
    return group.kind === 'unknown' ? group : { ...group, span: meshDimensionSpan(this.model, mesh, dim, env) };
  }

  private classifyCall(call: PyNode, env: Env, depth: number): GroupClass {
    const s = this.model.syntax;
    const name = s.calleeName(call);
    const callee = s.calleeText(call);
    // `device_mesh.get_group("dp")`, `mesh["dp"].get_group()`, `mesh.get_group(mesh_dim="tp")`.
    if (name === 'get_group') {
      const dim = s.stringValue(s.arg(call, 'mesh_dim', 0));
      const obj = s.calleeObject(call);
      if (dim !== undefined)
        return obj ? this.meshDimension(obj, dim, s.text(call), env) : this.named(dim, s.text(call));
      return obj ? this.classify(obj, env, depth + 1) : UNKNOWN;
    }
    if (name === '_get_default_group' || name === 'get_world_group') return { kind: 'world', evidence: `${callee}()` };
    // A helper of this file that returns a group: its kind is what it returns.
    const fn = this.model.resolveCall(call);
    if (fn) {
      const returned = this.returnedGroups(fn, depth);
      if (returned) return returned;
    }
    // `get_data_parallel_group(with_context_parallel=True)`, `mpu.get_tensor_model_parallel_group()`: the helper's
    // own name is the framework's word for the group it returns.
    if (/group|mesh|comm/i.test(name)) return this.named(name, `${callee}()`);
    return UNKNOWN;
  }

  private returnedGroups(fn: FunctionInfo, depth: number): GroupClass | undefined {
    const values: { node: PyNode; env: Env }[] = [];
    for (const n of fn.nodes) {
      if (n.type !== 'return_statement') continue;
      const value = named(n)[0];
      if (value) values.push({ node: value, env: { fn } });
    }
    return this.fromValues(values, depth);
  }

  private classifyIdentifier(n: PyNode, text: string, env: Env, depth: number): GroupClass {
    const binding = env.bindings?.get(text);
    if (binding) {
      const bound = this.classify(binding.node, binding.env, depth + 1);
      return bound.kind === 'unknown' ? this.named(text, text) : bound;
    }
    const isParam = env.fn.params.some((p) => p.name === text);
    if (isParam && env.fn.name === '__init__' && this.localValues(env.fn, text).length === 0) {
      const built = this.fromConstructionSites(env.fn, text);
      if (built) return built;
    }
    const local = isParam ? [] : this.localValues(env.fn, text);
    const fromLocal = this.fromValues(
      local.map((node) => ({ node, env })),
      depth,
    );
    if (fromLocal) return fromLocal;
    if (!isParam && local.length === 0) {
      const moduleFn = this.model.functions[0];
      const globals = this.localValues(moduleFn, text).map((node) => ({ node, env: { fn: moduleFn } as Env }));
      const fromGlobals = this.fromValues(globals, depth);
      if (fromGlobals) return fromGlobals;
    }
    // A loop variable or a parameter nobody binds here: only its name can still say which group it is.
    return this.named(text, text);
  }

  /**
   * An `__init__` parameter no call in this file binds: the group every construction site of the class passes,
   * when the parallel dimensions it names are only data-parallel ones, or only model-parallel ones.
   */
  private fromConstructionSites(init: FunctionInfo, param: string): GroupClass | undefined {
    const request = this.constructorArgument ? constructorRequest(this.model, init, param) : undefined;
    const dims = request ? this.constructorArgument!(request)?.group : undefined;
    if (!dims || dims.size === 0) return undefined;
    const kind = kindOfDims(dims);
    return kind === 'unknown' ? undefined : { kind, evidence: param };
  }

  /** The kind every assigned value agrees on; undefined when none is known or they disagree. */
  private fromValues(values: readonly { node: PyNode; env: Env }[], depth: number): GroupClass | undefined {
    const classes = values.map((v) => this.classify(v.node, v.env, depth + 1));
    if (classes.length === 0 || classes.some((c) => c.kind === 'unknown')) return undefined;
    return classes.every((c) => c.kind === classes[0].kind) ? classes[0] : undefined;
  }

  private localValues(fn: FunctionInfo, name: string): PyNode[] {
    const out: PyNode[] = [];
    for (const a of fn.assignments) {
      if (a.type !== 'assignment') continue;
      const left = child(a, 'left');
      const right = child(a, 'right');
      if (left && right && left.type === 'identifier' && this.model.syntax.text(left) === name) out.push(right);
    }
    return out;
  }
}

/** Data-parallel dimensions only (dp, and cp counted with it) are the replicas; none of them is a model group. */
function kindOfDims(dims: Dims): GroupKind {
  const names = [...dims.keys()];
  if (names.every((d) => d === 'dp')) return 'data';
  if (names.every((d) => d !== 'dp' && d !== 'cp' && d !== 'edp')) return 'model';
  return 'unknown';
}

/** True when a reduction over this group is a reduction over the data-parallel replicas. */
export function isDataParallel(group: GroupClass): boolean {
  return group.kind === 'world' || group.kind === 'data';
}

/**
 * True when the file's default process group is proven to use gloo: it calls `init_process_group` and every call
 * names the literal "gloo" backend. A backend chosen at run time (`"nccl" if cuda else "gloo"`), or the word gloo
 * elsewhere in the file, proves nothing about the group a reduction runs on.
 */
export function defaultBackendIsGloo(model: FileModel): boolean {
  const s = model.syntax;
  const inits = model.functions.flatMap((fn) => fn.calls.filter((c) => s.calleeName(c) === 'init_process_group'));
  return inits.length > 0 && inits.every((c) => s.stringValue(s.arg(c, 'backend', 0))?.toLowerCase() === 'gloo');
}

/** True when a group expression is proven to be a gloo group: `new_group(ranks, backend="gloo")`, held in a name. */
export function groupIsGloo(model: FileModel, groupNode: PyNode | undefined): boolean {
  const s = model.syntax;
  if (!groupNode) return defaultBackendIsGloo(model);
  const n = unparen(groupNode);
  const values =
    n.type === 'call'
      ? [n]
      : (model.assignedValues.get(s.text(n).replace(/\s+/g, '')) ?? []).map((v) => unparen(v.value));
  return (
    values.length > 0 &&
    values.every(
      (v) =>
        v.type === 'call' &&
        s.calleeName(v) === 'new_group' &&
        s.stringValue(s.arg(v, 'backend', 2))?.toLowerCase() === 'gloo',
    )
  );
}

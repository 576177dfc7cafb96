// Classifies the expressions gradients and losses are divided by: the world size (of which group), the local GPU
// count, a hard-coded number, the batch size, or a count that was itself summed over all ranks. Names are a last
// resort; the value a name was assigned (in the function, in `self.x = ...`, at the call site) wins.
import { child, named, unparen, visit, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import { isShardedGlobalBatch } from './sharded-loader';

export type SizeKind = 'world' | 'local' | 'const' | 'batch' | 'global-count' | 'neutral' | 'unknown';

export interface SizeClass {
  readonly kind: SizeKind;
  /** The process group or JAX axis whose size this is, when written (`group=dp_group`). */
  readonly group?: string;
  /** The group argument as written, for comparing two spellings of one group (mesh-shapes.ts `meshDimensionKey`). */
  readonly groupNode?: PyNode;
  readonly value?: number;
  /** True when only one branch of a conditional is the world size (`hvd.size() if x else 1`). */
  readonly conditional?: boolean;
}

export interface Binding {
  readonly node: PyNode;
  readonly env: Env;
  /** The call that supplied the value, or whose missing argument let the default apply. */
  readonly callSite?: PyNode;
  /** The value is the parameter's default, not an argument written at the call site. */
  readonly isDefault: boolean;
  readonly param: string;
}

export interface Env {
  readonly fn: FunctionInfo;
  readonly bindings?: ReadonlyMap<string, Binding>;
  /** For methods: the constructor arguments of the object (`__init__` parameters), when its creation is known. */
  readonly instance?: ReadonlyMap<string, Binding>;
}

const WORLD_NAME =
  /^(world_?size|world|ws|n_?world|num_?replicas|n_?replicas|replicas|num_?processes|n_?procs?|nprocs?|num_?procs|size|global_?size|dp_?size|dp_?world_?size|data_?parallel_?(world_?)?size|num_?workers|n_?workers|nworkers|workers|num_?ranks|n_?ranks|nranks|gpu_?count|n_?gpus?|num_?gpus?|ngpus?|gpu_?num|gpus|num_?devices|n_?devices|ndevices|device_?count|num_?shards|n_?shards|world_?sz|tot(al)?_?gpus?|ddp_?world_?size|n_?dev|ndev)$/i;
/** Names that always mean the whole job; evidence of a per-node count never overrides them. */
const STRONG_WORLD_NAME =
  /^(world_?size|world|ws|n_?world|num_?replicas|n_?replicas|num_?processes|global_?size|dp_?size|dp_?world_?size|data_?parallel_?(world_?)?size|num_?ranks|n_?ranks|nranks|ddp_?world_?size)$/i;
const LOCAL_NAME =
  /(per_?node|local_?(world_?)?size|local_?device|local_?gpus?|nproc_?per|gpus_?per|devices_?per|per_?host|n_?local)/i;
const GLOBAL_NAME = /(global|total_?(tokens|samples|examples|batch|count|num|weight)|all_?tokens|tokens_?all)/i;
const BATCH_NAME = /(batch|^bs$|^b$|n_?samples?|num_?samples?|n_?examples|num_?examples)/i;
const NEUTRAL_NAME =
  /(accum|grad_?acc|update_?freq|iters_?to_?accumulate|clip|temperature|^scale$|loss_?scale|norm|(^|_)lr$|learning_?rate|step_?size|momentum|weight_?decay|^wd$|^alpha$|^beta\d?$|^eps$|coef|predivide)/i;

function isStrongWorld(text: string): boolean {
  return STRONG_WORLD_NAME.test(text.split('.').pop() ?? text);
}

export class SizeClassifier {
  /** Texts the file shows to be a per-node count: `ngpus_per_node = args.gpu_count`, `spawn(nprocs=x)`. */
  readonly localTexts = new Set<string>();

  constructor(private readonly model: FileModel) {
    const s = model.syntax;
    for (const fn of model.functions) {
      for (const a of fn.assignments) {
        if (a.type !== 'assignment') continue;
        const left = child(a, 'left');
        const right = child(a, 'right');
        if (!left || !right) continue;
        const l = s.text(left).replace(/\s+/g, '');
        const r = s.text(unparen(right)).replace(/\s+/g, '');
        const rIsName = unparen(right).type === 'identifier' || unparen(right).type === 'attribute';
        if (LOCAL_NAME.test(l) && rIsName && !isStrongWorld(r)) this.localTexts.add(r);
        if (LOCAL_NAME.test(r) && rIsName && !isStrongWorld(l)) this.localTexts.add(l);
      }
      for (const call of fn.calls) {
        const kw = s.args(call).keywords;
        for (const key of ['nprocs', 'nproc_per_node', 'ngpus_per_node', 'gpus_per_node']) {
          const v = kw.get(key)?.value;
          const text = v ? s.text(v).replace(/\s+/g, '') : '';
          if (v && (v.type === 'identifier' || v.type === 'attribute') && !isStrongWorld(text))
            this.localTexts.add(text);
        }
      }
    }
  }

  classify(node: PyNode, env: Env, depth = 0): SizeClass {
    const s = this.model.syntax;
    const n = s.stripWrappers(node);
    if (depth > 6) return { kind: 'unknown' };
    const num = s.numberValue(n);
    if (num !== undefined) return num === 1 ? { kind: 'neutral', value: 1 } : { kind: 'const', value: num };
    const text = s.text(n).replace(/\s+/g, '');
    if (this.localTexts.has(text)) return { kind: 'local' };
    switch (n.type) {
      case 'call':
        return this.classifyCall(n, env, depth);
      case 'subscript':
        return this.classifyEnviron(text);
      case 'conditional_expression': {
        const branches = named(n)
          .filter((_, i) => i !== 1)
          .map((b) => this.classify(b, env, depth + 1));
        if (
          branches.some((b) => b.kind === 'world') &&
          branches.every((b) => b.kind === 'world' || b.kind === 'neutral')
        ) {
          return { kind: 'world', conditional: branches.some((b) => b.kind === 'neutral') };
        }
        return branches.every((b) => b.kind === branches[0]?.kind) && branches[0] ? branches[0] : { kind: 'unknown' };
      }
      case 'binary_operator': {
        if (isShardedGlobalBatch(this.model, n, env.fn)) return { kind: 'global-count' };
        const parts = s.factors(n).map((f) => ({ ...this.classify(f.node, env, depth + 1), sign: f.sign }));
        const meaningful = parts.filter((p) => p.kind !== 'neutral');
        if (meaningful.length === 1 && meaningful[0].sign === 1) return meaningful[0];
        return { kind: 'unknown' };
      }
      case 'identifier':
      case 'attribute':
        return this.classifyName(n, text, env, depth);
      default:
        return { kind: 'unknown' };
    }
  }

  private classifyEnviron(text: string): SizeClass {
    const m = /environ(?:\.get)?[[(]['"](\w+)['"]/.exec(text);
    if (!m) return { kind: 'unknown' };
    if (/LOCAL|PER_NODE/.test(m[1])) return { kind: 'local' };
    if (/WORLD_SIZE|NTASKS|COMM_WORLD_SIZE|^SIZE$/.test(m[1])) return { kind: 'world' };
    return { kind: 'unknown' };
  }

  private classifyCall(n: PyNode, env: Env, depth: number): SizeClass {
    const s = this.model.syntax;
    const name = s.calleeName(n);
    const callee = s.calleeText(n);
    const args = s.args(n);
    const groupArg = args.keywords.get('group')?.value ?? args.positional[0];
    const group = groupArg ? s.text(groupArg).replace(/\s+/g, '') : undefined;
    if (
      /^(get_(data_parallel_|dp_)?world_size|get_data_parallel_size|xrt_world_size|world_size|get_world_size_of_group)$/.test(
        name,
      )
    ) {
      return { kind: 'world', group, groupNode: groupArg };
    }
    if (name === 'Get_size' || (name === 'size' && /hvd|horovod|comm|COMM/.test(callee))) return { kind: 'world' };
    if (/^(local_size|get_local_world_size|local_device_count)$/.test(name)) return { kind: 'local' };
    if (name === 'device_count') return /cuda|torch|xpu|npu/.test(callee) ? { kind: 'local' } : { kind: 'world' };
    if (name === 'axis_size') return { kind: 'world', group };
    if (name === 'psum' || name === 'psum_scatter') {
      const value = args.positional[0];
      const axis = args.keywords.get('axis_name')?.value ?? args.positional[1];
      const axisText = axis ? s.text(axis) : undefined;
      return s.numberValue(value) === 1 ? { kind: 'world', group: axisText } : { kind: 'global-count' };
    }
    if (name === 'len') {
      const inner = args.positional[0] ? s.text(args.positional[0]) : '';
      if (/jax\.devices\(\)|all_gather|allgather/.test(inner)) return { kind: 'world' };
      if (/local_devices|gpu_ids|device_ids|gpus|devices/.test(inner)) return { kind: 'local' };
      if (/batch|data|input|target|label|sample|x\b|y\b|images|tokens/.test(inner)) return { kind: 'batch' };
      return { kind: 'unknown' };
    }
    if (name === 'get' && /environ/.test(callee)) return this.classifyEnviron(s.text(n).replace(/\s+/g, ''));
    if ((name === 'allreduce' || name === 'all_reduce') && /hvd|horovod/.test(callee)) {
      // Horovod averages unless told to sum.
      const op = args.keywords.get('op')?.value;
      const average = args.keywords.get('average')?.value;
      const sums = (op && /Sum/.test(s.text(op))) || (average && s.text(average) === 'False');
      if (!sums) return { kind: 'unknown' };
    }
    if (name === 'sum' || name === 'allreduce' || name === 'all_reduce' || /all_?gather/.test(name)) {
      let gathered = false;
      visit(n, (c) => {
        if (c.type === 'call' && /all_?gather|all_?reduce|allreduce|psum/.test(s.calleeName(c))) gathered = true;
        return !gathered;
      });
      if (gathered) return { kind: 'global-count' };
      if (name === 'sum') {
        const callee2 = args.positional[0];
        const resolved = callee2 && callee2.type === 'identifier' ? this.classify(callee2, env, depth + 1) : undefined;
        if (resolved?.kind === 'global-count') return resolved;
      }
    }
    if (name === 'compute_average_loss') return { kind: 'global-count' };
    return { kind: 'unknown' };
  }

  private classifyName(n: PyNode, text: string, env: Env, depth: number): SizeClass {
    const resolved = this.classifyNameValue(n, text, env, depth);
    // `WORLD_SIZE = 8` or `BATCH_SIZE_PER_REPLICA = 64` say what the number is: the name wins over the constant.
    if (resolved.kind !== 'const') return resolved;
    const named = this.byName(text.split('.').pop() ?? text);
    return named.kind === 'unknown' || named.kind === 'neutral' ? resolved : { ...named, value: resolved.value };
  }

  private classifyNameValue(n: PyNode, text: string, env: Env, depth: number): SizeClass {
    const s = this.model.syntax;
    const last = n.type === 'attribute' ? s.text(child(n, 'attribute') ?? n) : text;
    if (/^(num_replicas_in_sync|num_processes|world_size|process_count)$/.test(last) && n.type === 'attribute') {
      const obj = s.text(child(n, 'object') ?? n);
      if (/strategy|accelerator|state|dist|xm|hvd/.test(obj)) return { kind: 'world' };
    }
    if (n.type === 'identifier') {
      const binding = env.bindings?.get(text);
      if (binding) {
        const bound = this.classify(binding.node, binding.env, depth + 1);
        // An opaque argument (`self.Q_lr`) given to a parameter whose name says what it is (`stepsize`).
        return bound.kind === 'unknown' && this.byName(text).kind === 'neutral' ? { kind: 'neutral' } : bound;
      }
      if (this.summedInPlace(env.fn, text)) return { kind: 'global-count' };
      // `batch //= world_size` (opacus' fix, under `if distributed:`) rescales the value on some paths: what the
      // name was assigned no longer says what it holds.
      if (this.rescaledInPlace(env.fn, text)) return { kind: 'unknown' };
      const fromValues = this.fromAssignments(this.localValues(env.fn, text), env, depth);
      if (fromValues) return fromValues;
      const param = env.fn.params.find((p) => p.name === text);
      if (!param) {
        const moduleFn = this.model.functions[0];
        const globals = moduleFn === env.fn ? [] : this.localValues(moduleFn, text);
        const fromGlobals = this.fromAssignments(globals, { fn: moduleFn }, depth);
        if (fromGlobals) return fromGlobals;
      }
    } else {
      const values = (this.model.assignedValues.get(text) ?? []).map((v) => ({
        node: v.value,
        env: { fn: v.fn } as Env,
      }));
      const fromValues = this.fromAssignmentsWithEnv(values, depth);
      if (fromValues) return fromValues;
    }
    return this.byName(last);
  }

  byName(name: string): SizeClass {
    if (LOCAL_NAME.test(name)) return { kind: 'local' };
    if (GLOBAL_NAME.test(name)) return { kind: 'global-count' };
    if (WORLD_NAME.test(name)) return { kind: 'world' };
    if (BATCH_NAME.test(name)) return { kind: 'batch' };
    if (NEUTRAL_NAME.test(name)) return { kind: 'neutral' };
    return { kind: 'unknown' };
  }

  /** `dist.all_reduce(num_tokens)` in the same function: the name then holds a count summed over all ranks. */
  private summedInPlace(fn: FunctionInfo, name: string): boolean {
    const s = this.model.syntax;
    return fn.calls.some((call) => {
      if (!/^(all_reduce|allreduce_|Allreduce)$/.test(s.calleeName(call))) return false;
      const first = s.args(call).positional[0];
      if (!first || s.text(first) !== name) return false;
      const op = s.args(call).keywords.get('op')?.value;
      return !op || /SUM|Sum/.test(s.text(op));
    });
  }

  /** The name is multiplied or divided in place (`x /= n`, `x //= n`, `x *= n`) in the function that assigns it. */
  private rescaledInPlace(fn: FunctionInfo, name: string): boolean {
    const s = this.model.syntax;
    for (let f: FunctionInfo | undefined = fn; f; f = f.params.some((p) => p.name === name) ? undefined : f.enclosing) {
      const own = f.assignments.filter((a) => s.text(child(a, 'left') ?? a) === name);
      if (own.some((a) => a.type === 'augmented_assignment' && ['/=', '//=', '*='].includes(s.operator(a))))
        return true;
      if (own.length > 0) return false;
    }
    return false;
  }

  private localValues(fn: FunctionInfo, name: string): PyNode[] {
    const out: PyNode[] = [];
    for (let f: FunctionInfo | undefined = fn; f; f = f.params.some((p) => p.name === name) ? undefined : f.enclosing) {
      for (const a of f.assignments) {
        if (a.type !== 'assignment') continue;
        const left = child(a, 'left');
        const right = child(a, 'right');
        if (left && right && left.type === 'identifier' && this.model.syntax.text(left) === name) out.push(right);
      }
      if (out.length > 0) break;
    }
    return out;
  }

  private fromAssignments(values: PyNode[], env: Env, depth: number): SizeClass | undefined {
    return this.fromAssignmentsWithEnv(
      values.map((node) => ({ node, env })),
      depth,
    );
  }

  private fromAssignmentsWithEnv(values: { node: PyNode; env: Env }[], depth: number): SizeClass | undefined {
    const classes = values
      .map((v) => this.classify(v.node, v.env, depth + 1))
      .filter((c) => c.kind !== 'unknown' && c.kind !== 'neutral');
    if (classes.length === 0) return undefined;
    const world = classes.find((c) => c.kind === 'world');
    if (world && !classes.some((c) => c.kind === 'local')) return world;
    return classes.every((c) => c.kind === classes[0].kind) ? classes[0] : undefined;
  }
}

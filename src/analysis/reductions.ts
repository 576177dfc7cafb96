// Recognises the collective calls that reduce tensors across ranks, in every framework the rules cover, and
// reads which tensor they reduce, with which operation, over which group or axis.
import { child, unparen, type PyNode } from './tree';
import type { FileModel } from './scope';
import type { HelperSummary } from './helper-summary';
import { dtensorReduction } from './dtensor-reductions';

export type Framework = 'torch' | 'horovod' | 'jax' | 'tf' | 'mpi' | 'accelerate' | 'xla';
export type OpKind = 'sum' | 'avg' | 'other';

export interface OpSpec {
  readonly kind: OpKind | 'param';
  /** The parameter of the enclosing function that chooses the operation (`op=op`). */
  readonly param?: string;
  /** The written argument (value node) when there is one; absent for the framework default. */
  readonly valueNode?: PyNode;
  /** The whole argument (`op=hvd.Sum` keyword node, or the positional node). */
  readonly argNode?: PyNode;
}

export interface Reduction {
  readonly call: PyNode;
  readonly framework: Framework;
  readonly op: OpSpec;
  readonly tensor: PyNode;
  /** Where the result lands when it is not the input (`comm.Allreduce(send, recv)`). */
  readonly output?: PyNode;
  readonly group?: string;
  /** The group (or JAX axis) argument as written; absent for the default group. */
  readonly groupNode?: PyNode;
  readonly asyncOp: boolean;
  /** torch_xla's `scale=` factor, applied to the result. */
  readonly scale?: PyNode;
  /** The JAX reduction's name (psum/pmean), for CP004. */
  readonly jaxName?: string;
  /** A call to a helper of another file whose summary says it sums gradients (see summaries.ts). */
  readonly via?: HelperSummary;
}

/** A wrapper that reduces gradients for the user: DDP, FSDP, DeepSpeed and Accelerate, Horovod optimizers. */
export interface ImplicitReducer {
  readonly call: PyNode;
  readonly kind: 'ddp' | 'horovod' | 'strategy';
  readonly op: OpSpec;
}

export function opKindOfText(text: string): OpKind | undefined {
  const t = text.replace(/\s+/g, '');
  if (/Adasum|MAX|MIN|PROD|BAND|BOR|BXOR|PREMUL|['"](max|min|prod|product)['"]|hvd\.Min|hvd\.Max/.test(t))
    return 'other';
  if (/AVG|Average|AVERAGE|MEAN|['"](mean|avg|average)['"]/.test(t)) return 'avg';
  if (/SUM|Sum\b|['"]sum['"]/.test(t)) return 'sum';
  return undefined;
}

export class ReductionFinder {
  /** `external` turns a call into the reduction a helper of another file performs, when the program knows it. */
  constructor(
    private readonly model: FileModel,
    private readonly external?: (call: PyNode) => Reduction | undefined,
  ) {}

  private isHorovod(objText: string): boolean {
    const module = this.model.moduleOf(objText.split('.')[0]) ?? objText;
    return /horovod|^hvd$/.test(module) || /^hvd\b/.test(objText);
  }

  private isMpi(objText: string, call: PyNode): boolean {
    return /comm|COMM|MPI|mpi/.test(objText) || /MPI\./.test(this.model.syntax.text(call));
  }

  private isTorchDist(objText: string | undefined): boolean {
    if (objText === undefined) return true;
    const module = this.model.moduleOf(objText.split('.')[0]) ?? '';
    if (
      /^(functools|numpy|np|tf|tensorflow|jax|jnp|operator)\b/.test(objText) ||
      /functools|numpy|tensorflow/.test(module)
    )
      return false;
    return /dist|distributed|deepspeed|comm|torch/.test(objText) || /torch\.distributed|deepspeed/.test(module);
  }

  /** The operation written in an argument, resolving a parameter or a local conditional. */
  private opFrom(
    node: PyNode | undefined,
    argNode: PyNode | undefined,
    fallback: OpKind,
    paramNames: readonly string[],
  ): OpSpec {
    if (!node) return { kind: fallback };
    const s = this.model.syntax;
    const n = unparen(node);
    if (n.type === 'identifier' && paramNames.includes(s.text(n)))
      return { kind: 'param', param: s.text(n), valueNode: n, argNode };
    if (n.type === 'identifier' || n.type === 'attribute') {
      // `op = hvd.Sum` earlier in the file: the operation is what the name was set to, when that is unambiguous.
      const values = this.model.assignedValues.get(s.text(n).replace(/\s+/g, '')) ?? [];
      const kinds = new Set(values.map((v) => opKindOfText(s.text(v.value)) ?? 'other'));
      if (values.length > 0 && kinds.size === 1) {
        const kind = [...kinds][0];
        const inner = unparen(values[0].value);
        if (inner.type === 'conditional_expression') return this.opFrom(inner, argNode, fallback, paramNames);
        return { kind, valueNode: n, argNode };
      }
    }
    if (n.type === 'true') return { kind: 'avg', valueNode: n, argNode };
    if (n.type === 'false') return { kind: 'sum', valueNode: n, argNode };
    if (n.type === 'conditional_expression') {
      const kinds = [
        child(n, 'consequence') ?? n.children[0],
        child(n, 'alternative') ?? n.children[n.children.length - 1],
      ].map((b) => opKindOfText(s.text(b)));
      const kind = kinds.every((k) => k === 'sum') ? 'sum' : kinds.includes('sum') ? 'other' : 'avg';
      return { kind, valueNode: n, argNode };
    }
    return { kind: opKindOfText(s.text(n)) ?? 'other', valueNode: n, argNode };
  }

  find(call: PyNode, paramNames: readonly string[]): Reduction | undefined {
    return this.findWritten(call, paramNames) ?? this.meshReduction(call) ?? this.external?.(call);
  }

  /** A DTensor redistribution of a partial value, read as a torch reduction over the mesh it lives on. */
  private meshReduction(call: PyNode): Reduction | undefined {
    const r = dtensorReduction(this.model, call);
    return r && { call, framework: 'torch', op: r.op, tensor: r.tensor, ...this.groupOf(r.mesh), asyncOp: r.asyncOp };
  }

  private findWritten(call: PyNode, paramNames: readonly string[]): Reduction | undefined {
    const s = this.model.syntax;
    const name = s.calleeName(call);
    const obj = s.calleeObject(call);
    const objText = obj ? s.text(obj).replace(/\s+/g, '') : undefined;
    const args = s.args(call);
    const kw = args.keywords;
    const pos = args.positional;
    const argOf = (key: string, index: number): { value?: PyNode; node?: PyNode } => {
      const k = kw.get(key);
      if (k) return { value: k.value, node: k.node };
      const p = index >= 0 ? pos[index] : undefined;
      return { value: p, node: p };
    };
    const groupText = (g: PyNode | undefined) => (g ? s.text(g).replace(/\s+/g, '') : undefined);
    const asyncOp = /^(True)$/.test(kw.get('async_op') ? s.text(kw.get('async_op')!.value) : '') || /async/.test(name);

    if (name === 'all_sum' && objText && /nccl/.test(this.model.moduleOf(objText.split('.')[0]) ?? objText)) {
      // TF's `nccl.all_sum(tower_grads)`: every tower receives the sum over the towers, the replicas of one step.
      const tensor = argOf('tensors', 0).value;
      return tensor ? { call, framework: 'tf', op: { kind: 'sum' }, tensor, asyncOp: false } : undefined;
    }
    if (name === 'psum' || name === 'pmean' || name === 'psum_scatter') {
      const tensor = argOf('x', 0).value;
      if (!tensor) return undefined;
      const axis = argOf('axis_name', 1).value;
      return {
        call,
        framework: 'jax',
        op: { kind: name === 'pmean' ? 'avg' : 'sum' },
        tensor,
        group: groupText(axis),
        groupNode: axis,
        asyncOp: false,
        jaxName: name,
      };
    }
    if (
      /^(all_reduce|all_reduce_coalesced|all_reduce_multigpu|reduce|reduce_multigpu|all_reduce_base|reduce_scatter|reduce_scatter_tensor|reduce_scatter_coalesced|_reduce_scatter_base)$/.test(
        name,
      )
    ) {
      if (objText && /strategy/i.test(objText) && name === 'reduce') {
        const op = argOf('reduce_op', 0);
        const tensor = argOf('value', 1).value;
        if (!tensor) return undefined;
        return { call, framework: 'tf', op: this.opFrom(op.value, op.node, 'sum', paramNames), tensor, asyncOp: false };
      }
      if (objText && /accelerat/i.test(objText) && name === 'reduce') {
        const tensor = argOf('tensor', 0).value;
        if (!tensor) return undefined;
        const op = argOf('reduction', 1);
        return {
          call,
          framework: 'accelerate',
          op: this.opFrom(op.value, op.node, 'sum', paramNames),
          tensor,
          asyncOp: false,
        };
      }
      const first = pos[0];
      const firstText = first ? s.text(first) : '';
      if (
        pos.length >= 2 &&
        (/REDUCE_|ReduceOp|^['"]/.test(firstText) || (objText !== undefined && /xm|xla/.test(objText)))
      ) {
        const framework = objText !== undefined && /xm|xla/.test(objText) ? 'xla' : 'tf';
        return {
          call,
          framework,
          op: this.opFrom(first, first, 'sum', paramNames),
          tensor: pos[1],
          asyncOp: false,
          scale: kw.get('scale')?.value,
        };
      }
      if (name.startsWith('reduce') && (!objText || !this.isTorchDist(objText) || /functools/.test(objText)))
        return undefined;
      if (name.startsWith('reduce_scatter') || name === '_reduce_scatter_base') {
        // reduce_scatter(output, input): each rank receives its shard of the sum.
        const output = argOf('output', 0).value;
        const input = argOf('input', 1).value ?? argOf('input_list', 1).value;
        if (!output || !input) return undefined;
        const op = argOf('op', 2);
        return {
          call,
          framework: 'torch',
          op: this.opFrom(op.value, op.node, 'sum', paramNames),
          tensor: input,
          output,
          group: groupText(argOf('group', 3).value),
          groupNode: argOf('group', 3).value,
          asyncOp,
        };
      }
      if (!this.isTorchDist(objText)) return undefined;
      const tensor = argOf('tensor', 0).value ?? argOf('tensor_list', 0).value;
      if (!tensor) return undefined;
      const op = argOf('op', name.startsWith('reduce') ? 2 : 1);
      return {
        call,
        framework: 'torch',
        op: this.opFrom(op.value, op.node, 'sum', paramNames),
        tensor,
        ...this.groupOf(argOf('group', name.startsWith('reduce') ? 3 : 2).value),
        asyncOp,
      };
    }
    if (
      /^(push_pull|push_pull_async|push_pull_inplace|push_pull_async_inplace)$/.test(name) &&
      objText &&
      /bps|byteps/.test(this.model.moduleOf(objText) ?? objText)
    ) {
      // BytePS follows Horovod's API: average=True by default.
      const tensor = argOf('tensor', 0).value;
      if (!tensor) return undefined;
      const average = kw.get('average');
      return {
        call,
        framework: 'horovod',
        op: average ? this.opFrom(average.value, average.node, 'avg', paramNames) : { kind: 'avg' },
        tensor,
        asyncOp: /async/.test(name),
      };
    }
    if (
      /^(allreduce|allreduce_|allreduce_async|allreduce_async_|grouped_allreduce|grouped_allreduce_|Allreduce|Reduce|Iallreduce)$/.test(
        name,
      )
    ) {
      if (objText && this.isHorovod(objText) && name !== 'Allreduce' && name !== 'Reduce') {
        const tensor = argOf('tensor', 0).value ?? argOf('tensors', 0).value;
        if (!tensor) return undefined;
        const average = kw.get('average');
        const op = kw.get('op');
        const spec = op
          ? this.opFrom(op.value, op.node, 'avg', paramNames)
          : average
            ? this.opFrom(average.value, average.node, 'avg', paramNames)
            : { kind: 'avg' as const };
        return { call, framework: 'horovod', op: spec, tensor, asyncOp: /async/.test(name) };
      }
      if (objText && this.isMpi(objText, call)) {
        const tensor = pos[0] ?? kw.get('sendbuf')?.value ?? kw.get('sendobj')?.value;
        if (!tensor) return undefined;
        const upper = name === 'Allreduce' || name === 'Reduce' || name === 'Iallreduce';
        const op = argOf('op', upper ? 2 : 1);
        return {
          call,
          framework: 'mpi',
          op: this.opFrom(op.value, op.node, 'sum', paramNames),
          tensor,
          output: upper ? (pos[1] ?? kw.get('recvbuf')?.value) : undefined,
          asyncOp: name === 'Iallreduce',
        };
      }
    }
    return undefined;
  }

  private groupOf(node: PyNode | undefined): { group?: string; groupNode?: PyNode } {
    return node ? { group: this.model.syntax.text(node).replace(/\s+/g, ''), groupNode: node } : {};
  }

  implicit(call: PyNode, paramNames: readonly string[]): ImplicitReducer | undefined {
    const s = this.model.syntax;
    const name = s.calleeName(call);
    const callee = s.calleeText(call);
    if (/^(DistributedDataParallel|DDP|FullyShardedDataParallel|FSDP|fully_shard)$/.test(name))
      return { call, kind: 'ddp', op: { kind: 'avg' } };
    if (callee === 'deepspeed.initialize' || (name === 'prepare' && /accelerat/i.test(callee)))
      return { call, kind: 'ddp', op: { kind: 'avg' } };
    if (
      (name === 'DistributedOptimizer' || name === 'DistributedGradientTape') &&
      this.isHorovod(callee.split('.').slice(0, -1).join('.') || 'hvd')
    ) {
      const kw = s.args(call).keywords;
      const op = kw.get('op');
      const average = kw.get('average');
      const spec = op
        ? this.opFrom(op.value, op.node, 'avg', paramNames)
        : average
          ? this.opFrom(average.value, average.node, 'avg', paramNames)
          : { kind: 'avg' as const };
      return { call, kind: 'horovod', op: spec };
    }
    return undefined;
  }
}

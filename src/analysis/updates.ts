// Where summed gradients are consumed. A gradient sum only changes the training when it reaches a parameter update:
// gradients reduced to be compared in a test, logged, or gathered from disjoint fragments are not a scaling bug. So
// an error needs the update in view: an optimizer step (or an optax / Keras / manual update) in the function that
// reduced or in one of its callers, a function whose own name says it synchronises gradients for the step, or a
// hook the framework runs as the gradient synchronisation.
import { child, named, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';

/** Calls that apply gradients whatever object they are called on. */
const APPLY_CALL = /^(apply_gradients?|apply_updates|minimize|opt_update|apply_grads?)$/;
/** `step()` and `update()` apply gradients when called on an optimizer-like object. */
const OPTIMIZER_OBJECT = /opt|optim|solver|adam|sgd|tx\b|trainer|scaler|updater|lamb|lars|rmsprop|adagrad/i;
/** Functions whose name says they synchronise gradients for the step (`average_gradients`, `allreduce_grads`). */
const SYNC_HELPER = /(grad|gradient)/i;
const SYNC_VERB = /sync|averag|avg|reduce|mean|aggregat|all_?gather|combine|mpi|hvd|horovod/i;
/** Functions that are themselves the update (`MpiAdam.update`, a JAX `train_step`). */
const UPDATE_FUNCTION =
  /^(update|step|train_step|training_step|update_step|apply_gradients?|optimizer_step|_?update_params?|do_update|sgd_step)$|train_?step|update_fn|update_model/i;
/** Registration calls whose callback the framework runs as the gradient synchronisation. */
const HOOK_REGISTRATION =
  /^(register_comm_hook|register_hook|register_post_accumulate_grad_hook|register_full_backward_hook|register_backward_hook|_register_comm_hook)$/;
/** Manual updates: `p -= lr * g`, `p.data.add_(-lr, g)`, `params - 0.01 * grads`. */
const STEP_SIZE = /\blr\b|learning_?rate|step_?size|\beta\b|stepsize|\b\d*\.\d+\b|\d+e-\d+/i;

export interface UpdateEvidence {
  readonly node: PyNode;
  readonly what: string;
}

export class UpdateFinder {
  private readonly hooks = new Set<string>();
  private readonly cache = new Map<FunctionInfo, UpdateEvidence | null>();

  constructor(private readonly model: FileModel) {
    const s = model.syntax;
    for (const fn of model.functions) {
      for (const call of fn.calls) {
        if (!HOOK_REGISTRATION.test(s.calleeName(call))) continue;
        for (const arg of s.args(call).positional) {
          // `register_comm_hook(state, allreduce_hook)` or `param.register_hook(self._make_hook(p))`.
          const callee = arg.type === 'call' ? child(arg, 'function') : arg;
          const last = callee?.type === 'attribute' ? child(callee, 'attribute') : callee;
          if (last?.type === 'identifier') this.hooks.add(s.text(last));
        }
      }
    }
  }

  /** The first update among the functions, innermost first; undefined when none of them reaches one. */
  find(fns: readonly FunctionInfo[]): UpdateEvidence | undefined {
    for (const fn of fns) {
      const found = this.inFunction(fn);
      if (found) return found;
    }
    return undefined;
  }

  private inFunction(fn: FunctionInfo): UpdateEvidence | undefined {
    const cached = this.cache.get(fn);
    if (cached !== undefined) return cached ?? undefined;
    const found = this.compute(fn);
    this.cache.set(fn, found ?? null);
    return found;
  }

  private compute(fn: FunctionInfo): UpdateEvidence | undefined {
    const s = this.model.syntax;
    if (fn.node.type === 'function_definition') {
      const nameNode = child(fn.node, 'name') ?? fn.node;
      if (UPDATE_FUNCTION.test(fn.name)) return { node: nameNode, what: `\`${fn.name}\` applies the update` };
      if (SYNC_HELPER.test(fn.name) && SYNC_VERB.test(fn.name))
        return { node: nameNode, what: `\`${fn.name}\` synchronises the gradients for the optimizer` };
      if (this.hooks.has(fn.name)) return { node: nameNode, what: `\`${fn.name}\` is registered as a gradient hook` };
    }
    for (const call of fn.calls) {
      const name = s.calleeName(call);
      const obj = s.calleeObject(call);
      if (APPLY_CALL.test(name)) return { node: call, what: `\`${s.calleeText(call)}\` applies the gradients` };
      if (
        (name === 'step' || name === 'update') &&
        obj &&
        OPTIMIZER_OBJECT.test(s.text(obj)) &&
        !/sched/i.test(s.text(obj))
      ) {
        return { node: call, what: `\`${s.calleeText(call)}\` applies the gradients` };
      }
      if ((name === 'add_' || name === 'sub_') && /\blr\b|learning_?rate|step_?size|alpha\s*=\s*-/i.test(s.text(call)))
        return { node: call, what: 'the parameters are updated here' };
    }
    for (const n of fn.nodes) {
      if (
        n.type === 'augmented_assignment' &&
        /-=/.test(s.text(n).slice(0, 400)) &&
        STEP_SIZE.test(s.text(child(n, 'right') ?? n))
      ) {
        return { node: n, what: 'the parameters are updated here' };
      }
      if (n.type === 'binary_operator' && s.operator(n) === '-') {
        const right = named(n)[1];
        if (right?.type === 'binary_operator' && s.operator(right) === '*' && STEP_SIZE.test(s.text(right)))
          return { node: n, what: 'the parameters are updated here' };
      }
    }
    return undefined;
  }
}

// Gradients reduced for the user: DDP/FSDP/DeepSpeed/Accelerate and Horovod's DistributedOptimizer average (or,
// with op=hvd.Sum, sum); a TF distribution strategy sums the replicas' gradients in apply_gradients. Here the
// loss scaling and any division of `.grad` decide the verdict.
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel } from './scope';
import type { LossTracer, BackwardSite } from './losses';
import type { ImplicitReducer } from './reductions';
import type { FactBuilder } from './facts';
import type { Judge } from './judge';
import type { Verdict } from './judge-verdict';

export interface ImplicitVerdict extends Verdict {
  readonly reducer?: ImplicitReducer;
  /** The per-replica mean loss a TF strategy sums (the fix divides it by the replica count). */
  readonly meanNode?: PyNode;
  readonly strategyName?: string;
}

export function implicitVerdicts(
  model: FileModel,
  judge: Judge,
  losses: LossTracer,
  facts: FactBuilder,
  hasExplicitGradients: boolean,
  hints: boolean,
): ImplicitVerdict[] {
  const out: ImplicitVerdict[] = [];
  const reducers = model.functions.flatMap((fn) => facts.flowOf(fn).implicit);
  const allSites = model.functions.flatMap((fn) => losses.backwardSites(fn));
  for (const reducer of reducers) {
    if (reducer.kind === 'ddp') {
      if (hasExplicitGradients) continue;
      const why = /deepspeed/.test(model.syntax.calleeText(reducer.call))
        ? 'the DeepSpeed engine already averages the gradients'
        : /prepare/.test(model.syntax.calleeText(reducer.call))
          ? 'Accelerate wraps the model in DDP, which already averages the gradients'
          : `${model.syntax.calleeName(reducer.call)} already averages the gradients`;
      const wrapped = wrappedNames(model, reducer.call);
      for (const site of allSites.filter((s) => s.kind === 'backward' && lossComesFrom(model, s, wrapped))) {
        const v = judgeSite(judge, losses, site, 0, reducer, why);
        if (v?.code === 'CP002' && !out.some((o) => o.location === v.location)) out.push({ ...v, reducer });
      }
      continue;
    }
    if (reducer.kind === 'horovod') {
      if (reducer.op.kind === 'param' || reducer.op.kind === 'other') continue;
      const opExponent = reducer.op.kind === 'sum' ? 1 : 0;
      const fn = model.enclosingFunction(reducer.call);
      const sameFn = allSites.filter((s) => s.fn === fn && s.kind !== 'jax');
      const sites = sameFn.length > 0 ? sameFn : allSites.filter((s) => s.kind === 'backward' || s.kind === 'tape');
      const verdicts =
        sites.length === 0
          ? [
              judge.decide(
                opExponent,
                [],
                { exponent: 0, terms: [], deliberate: false },
                ctx(reducer, 'Horovod already averages the gradients'),
              ),
            ]
          : sites.map((s) =>
              judgeSite(judge, losses, s, opExponent, reducer, 'Horovod already averages the gradients'),
            );
      if (verdicts.length > 0 && verdicts.every((v) => v && v.code === verdicts[0]?.code))
        out.push({ ...verdicts[0]!, reducer });
    }
  }
  if (!hasExplicitGradients) out.push(...strategyVerdicts(model, judge, losses));
  if (!hasExplicitGradients && reducers.length === 0 && hints)
    out.push(...inferredWrapperVerdicts(model, judge, losses, allSites));
  return out;
}

const DISTRIBUTED_TORCH =
  /DistributedSampler|init_process_group|\.no_sync\(|\blocal_rank\b|LOCAL_RANK|get_world_size|torch\.distributed/;
const OTHER_FRAMEWORK = /horovod|\bhvd\.|jax|tensorflow|mpi4py|strategy/;
const SYNC_HELPER =
  /(average|reduce|all_?reduce|sync|allreduce)_?(gradients|grads)|grad(ient)?s?_(sync|allreduce|average)/i;

/**
 * A hint, not a proof (only with the `hints` option): a torch script that runs distributed (DistributedSampler, init_process_group, local_rank) and reduces no
 * gradient itself must be wrapped in DDP/FSDP elsewhere, and those average: a loss divided by the world size
 * before backward is then averaged twice. Silent when a gradient-sync helper from another file is called.
 */
function inferredWrapperVerdicts(
  model: FileModel,
  judge: Judge,
  losses: LossTracer,
  sites: readonly BackwardSite[],
): ImplicitVerdict[] {
  const text = model.syntax.source.text;
  if (!DISTRIBUTED_TORCH.test(text) || OTHER_FRAMEWORK.test(text)) return [];
  if (model.functions.some((fn) => fn.calls.some((c) => SYNC_HELPER.test(model.syntax.calleeName(c))))) return [];
  const out: ImplicitVerdict[] = [];
  for (const site of sites.filter((s) => s.kind === 'backward')) {
    const reducer: ImplicitReducer = { call: site.call, kind: 'ddp', op: { kind: 'avg' } };
    const v = judgeSite(
      judge,
      losses,
      site,
      0,
      reducer,
      'a distributed torch model is wrapped in DDP or FSDP, which already averages the gradients',
    );
    if (v?.code === 'CP002' && v.term?.fromLoss && !out.some((o) => o.location === v.location))
      out.push({ ...v, reducer });
  }
  return out;
}

/**
 * The names the wrapped model is held under: the target of `ddp_model = DDP(model)` and the model given to it.
 * `deepspeed.initialize` and `accelerator.prepare` return the wrapped model (first of the tuple).
 */
function wrappedNames(model: FileModel, call: PyNode): string[] {
  const s = model.syntax;
  const names: string[] = [];
  const assignment = call.parent?.type === 'assignment' ? call.parent : undefined;
  const left = assignment ? child(assignment, 'left') : undefined;
  if (left) {
    const target =
      unparen(left).type === 'pattern_list' || unparen(left).type === 'tuple' ? named(unparen(left))[0] : left;
    if (target) names.push(s.text(target).replace(/\s+/g, ''));
  }
  const first =
    s.args(call).positional[0] ??
    s.args(call).keywords.get('model')?.value ??
    s.args(call).keywords.get('module')?.value;
  if (first && (first.type === 'identifier' || first.type === 'attribute'))
    names.push(s.text(first).replace(/\s+/g, ''));
  return names;
}

/**
 * True when the loss given to backward is computed from one of the wrapped model's names (called, or passed to the
 * helper that runs it), directly or through the values it was assigned from (three steps back). A second, unwrapped model in the same file (a reference model in
 * a test) is not averaged by the wrapper, so its loss decides nothing.
 */
function lossComesFrom(model: FileModel, site: BackwardSite, names: readonly string[]): boolean {
  if (names.length === 0 || !site.loss) return false;
  const s = model.syntax;
  const calls = new RegExp(`(^|[^\\w.])(${names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})\\b`);
  const seen = new Set<string>();
  const texts: string[] = [s.text(site.loss)];
  for (let round = 0; round < 3; round++) {
    const idents = new Set(texts.flatMap((t) => t.match(/\b[A-Za-z_]\w*\b/g) ?? []).filter((id) => !seen.has(id)));
    for (const id of idents) seen.add(id);
    for (const a of site.fn.assignments) {
      if (a.start >= site.call.start || a.type !== 'assignment') continue;
      const left = child(a, 'left');
      const right = child(a, 'right');
      if (!left || !right) continue;
      const targets = s.text(left).match(/\b[A-Za-z_]\w*\b/g) ?? [];
      if (targets.some((t) => idents.has(t))) texts.push(s.text(right));
    }
  }
  return texts.some((t) => calls.test(t));
}

function ctx(reducer: ImplicitReducer, doubleWhy: string) {
  return { sumCode: 'CP001' as const, sumLocation: reducer.op.argNode ?? reducer.call, doubleWhy };
}

function judgeSite(
  judge: Judge,
  losses: LossTracer,
  site: BackwardSite,
  opExponent: number,
  reducer: ImplicitReducer,
  why: string,
): Verdict | undefined {
  const loss = losses.lossInfo(site);
  if (loss.deliberate) return undefined;
  return judge.decide(opExponent, judge.gradDivisions({ fn: site.fn }), loss, ctx(reducer, why));
}

/** `strategy.run(step_fn, ...)`: apply_gradients inside step_fn sums the replicas' gradients. */
function strategyVerdicts(model: FileModel, judge: Judge, losses: LossTracer): ImplicitVerdict[] {
  const s = model.syntax;
  const out: ImplicitVerdict[] = [];
  for (const fn of model.functions) {
    for (const call of fn.calls) {
      const name = s.calleeName(call);
      const obj = s.calleeObject(call);
      if (!obj || !/^(run|experimental_run_v2|experimental_run)$/.test(name) || !/strategy/i.test(s.text(obj)))
        continue;
      const target = s.args(call).positional[0];
      if (!target || unparen(target).type !== 'identifier') continue;
      const stepFns = model.byName.get(s.text(unparen(target))) ?? [];
      for (const step of stepFns) {
        if (!step.calls.some((c) => s.calleeName(c) === 'apply_gradients')) continue;
        for (const site of losses.backwardSites(step).filter((x) => x.kind === 'tape')) {
          const loss = losses.lossInfo(site);
          if (loss.deliberate) continue;
          const exponent = 1 + loss.exponent;
          const strategyName = s.text(obj).replace(/\s+/g, '');
          if (exponent > 0 && loss.meanNode) {
            out.push({
              code: 'CP001',
              exponent,
              location: loss.meanNode,
              meanNode: loss.meanNode,
              strategyName,
              why: 'sum',
            });
          } else if (exponent < 0) {
            const v = judge.decide(1, [], loss, {
              sumCode: 'CP001',
              sumLocation: site.call,
              doubleWhy: 'the strategy sums per-replica gradients of a loss already divided by the global batch',
            });
            if (v) out.push({ ...v, strategyName });
          }
        }
      }
    }
  }
  return out;
}

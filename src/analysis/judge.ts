// Decides, for each gradient reduction, the power of N the update carries: +1 for a sum, -1 for every division
// by the world size (of the gradients or of the loss before backward), -1 for a loss normalised by a count summed
// over all ranks. 0 is correct; > 0 is CP001/CP004, < 0 is CP002; a division by something else is CP003.
// Anything the analysis cannot name (an unknown divisor) makes it stay silent: precision first.
import { child, unparen, type PyNode } from './tree';
import type { FileModel } from './scope';
import type { Binding, Env, SizeClassifier } from './sizes';
import type { ConditionEvaluator, Decision } from './conditions';
import type { LossInfo, LossTracer } from './losses';
import { opKindOfText, type OpKind, type Reduction } from './reductions';
import type { Fact, FactBuilder } from './facts';
import type { ScaleOp } from './flow';
import type { UpdateFinder } from './updates';
import { onSamePath } from './paths';
import { GroupSizes } from './group-sizes';
import { chosenFactor, groupDivisorMessage, groupDivisorMismatch, type ScalingTerm } from './group-divisor';
import { eitherOpNote, mismatchUnderBothOps, sumOrAverage } from './either-op';
import { averagingFlag, flagLinkedMessage, mismatchUnderFlag } from './flag-choice';
import { clip } from './messages';
import { groupKindOfName, isDataParallel, type GroupClass, type GroupResolver } from './groups';
import type { Term, Verdict } from './judge-verdict';
import { decideScale, type ScaleDecisionContext } from './scale-decision';
import { meshDimensionKey } from './mesh-shapes';
import { enclosingChain, isGradientFact, writesParameterGradients } from './judged-gradients';
import { SummedLosses } from './summed-loss';

export class Judge {
  constructor(
    private readonly model: FileModel,
    private readonly sizes: SizeClassifier,
    private readonly conditions: ConditionEvaluator,
    private readonly losses: LossTracer,
    private readonly facts: FactBuilder,
    private readonly groups: GroupResolver,
    private readonly updates: UpdateFinder,
    private readonly worldSize: number | undefined,
    private readonly calledElsewhere: ReadonlySet<string> = new Set(),
    private readonly groupSizes: GroupSizes = new GroupSizes(model),
    private readonly definesFunction: (name: string) => boolean = () => false,
  ) {}

  private text(n: PyNode): string {
    return this.model.syntax.text(n).replace(/\s+/g, '');
  }

  /** The operation a reduction performs in this chain of calls. */
  resolveOp(r: Reduction, env: Env): { kind: OpKind | undefined; binding?: Binding } {
    if (r.op.kind !== 'param') return { kind: r.op.kind };
    const binding = env.bindings?.get(r.op.param!);
    if (!binding) return { kind: undefined };
    const v = unparen(binding.node);
    if (v.type === 'true') return { kind: 'avg', binding };
    if (v.type === 'false') return { kind: 'sum', binding };
    if (v.type === 'identifier' && binding.env.bindings?.has(this.model.syntax.text(v))) {
      const inner = this.resolveOp({ ...r, op: { kind: 'param', param: this.model.syntax.text(v) } }, binding.env);
      return { kind: inner.kind, binding: inner.binding ?? binding };
    }
    return { kind: opKindOfText(this.model.syntax.text(v)), binding };
  }

  isGradientFact(fact: Fact): boolean {
    return isGradientFact(this.model.syntax, fact);
  }

  /** The scaling terms applied to the reduced tensors in every frame, with guards decided per call site. */
  private termsOf(fact: Fact): { terms: Term[]; defeated: Decision[] } {
    const terms: Term[] = [];
    const defeated: Decision[] = [];
    fact.frames.forEach((frame, i) => {
      if (frame.key === undefined) return;
      // The place this frame's tensors pass through: the reduction itself, or the call that leads to it.
      const anchor = i === 0 ? fact.reduction.call : fact.frames[i - 1].callSite;
      for (const op of frame.flow.scaleOps) {
        if (!frame.flow.same(op.key, frame.key)) continue;
        if (anchor && !onSamePath(anchor, op.node)) continue;
        const fail = this.conditions.failingGuard(op.node, frame.env);
        if (fail) {
          defeated.push(fail);
          continue;
        }
        for (const f of op.factors) terms.push(this.term(f.node, f.sign, frame.env, op, false));
      }
    });
    // An asynchronous reduction is usually finished in a callback (`fut.then(...)`) that names the same tensor:
    // its scaling counts too.
    const first = fact.frames[0];
    if (fact.reduction.asyncOp && first.key !== undefined) {
      const outerNames = new Set(first.flow.members(first.key));
      for (const nested of this.model.functions.filter((f) => f.enclosing === first.fn)) {
        const flow = this.facts.flowOf(nested);
        for (const op of flow.scaleOps) {
          const names = flow.members(op.key);
          if (!names.some((m) => outerNames.has(m) && !m.startsWith('#'))) continue;
          for (const f of op.factors) terms.push(this.term(f.node, f.sign, { fn: nested }, op, false));
        }
      }
    }
    const scale = fact.reduction.scale;
    if (scale)
      for (const f of this.model.syntax.factors(scale))
        terms.push(this.term(f.node, f.sign, fact.frames[0].env, undefined, false));
    return { terms, defeated };
  }

  private term(node: PyNode, sign: 1 | -1, env: Env, op: ScaleOp | undefined, fromLoss: boolean): Term {
    const size = this.sizes.classify(node, env);
    const stripped = this.model.syntax.stripWrappers(node);
    let binding: Binding | undefined;
    if (stripped.type === 'identifier') {
      // A divisor passed in by the caller is reported at the call site when the parameter's own name does not
      // say what it is (`rescale_denom`) or says something else than the value (`ngpus` given the local count).
      const b = env.bindings?.get(this.model.syntax.text(stripped));
      if (b && !b.isDefault && this.sizes.byName(b.param).kind !== size.kind) binding = b;
    }
    return { size, sign, node: binding ? binding.node : node, op, binding, fromLoss, written: { node, env } };
  }

  /** How the loss behind these gradients was scaled; undefined when backward sites disagree. */
  lossFor(fact: Fact | undefined, framework: string): LossInfo | undefined {
    const sites = this.losses.sitesBehind(fact?.frames ?? [], framework);
    if (sites.length === 0) return { exponent: 0, terms: [], deliberate: false };
    const infos = sites.map((s) => this.losses.lossInfo(s));
    if (infos.some((i) => i.deliberate)) return undefined;
    return infos.every((i) => i.exponent === infos[0].exponent) ? infos[0] : undefined;
  }

  judgeFact(fact: Fact): Verdict | undefined {
    const r = fact.reduction;
    const env0 = fact.frames[0].env;
    // `backward(ctx, grad_output)` of an autograd Function is the transpose of a collective (all_gather's is a
    // reduce-scatter SUM): summing there is exact, not a training-step scale.
    const fn0 = fact.frames[0].fn;
    if (fn0.name === 'backward' && fn0.params[0]?.name === 'ctx') return undefined;
    // A helper that other files call is judged at those calls, with the callers' divisions and updates.
    if (
      fact.frames.length === 1 &&
      this.calledElsewhere.has(fn0.name) &&
      fn0.enclosing?.node.type === 'module' &&
      !fn0.className
    )
      return undefined;
    const symbolic = this.groupDivisorVerdict(fact);
    if (symbolic && symbolic !== 'agrees') return symbolic;
    // Only a reduction over the data-parallel replicas changes the scale; any other group, or one the analysis
    // cannot name, decides nothing.
    const group = this.groupOf(r, env0);
    if (!isDataParallel(group)) return undefined;
    if (this.conditions.failingGuard(r.call, env0)) return undefined;
    const op = this.resolveOp(r, env0);
    if (op.kind === undefined || op.kind === 'other') return undefined;
    if (!this.isGradientFact(fact)) return undefined;
    const { terms, defeated } = this.termsOf(fact);
    const loss = this.lossFor(fact, r.framework);
    if (!loss) return undefined;
    const verdict = this.decide(op.kind === 'sum' ? 1 : 0, terms, loss, {
      fact,
      sumCode: r.framework === 'jax' && r.jaxName === 'psum' ? 'CP004' : 'CP001',
      sumLocation:
        defeated[0]?.binding?.callSite ??
        (op.binding ? (op.binding.isDefault ? op.binding.callSite : op.binding.node) : undefined) ??
        r.op.argNode ??
        r.call,
      defeated: defeated.find((d) => d.binding),
      opBinding: op.binding,
      group: r.group,
      groupSpan: group.span,
      sameGroup: (divisor) => {
        const key = meshDimensionKey(this.model, r.groupNode);
        return key !== undefined && key === meshDimensionKey(this.model, divisor);
      },
      doubleWhy: 'the reduction already averages',
    });
    if (!verdict) return undefined;
    // The gradients of a loss summed over its examples are summed over the ranks on purpose: the result is the
    // global batch's sum, the same whatever the number of ranks.
    if (verdict.code === 'CP001' && r.framework === 'torch') {
      const sites = this.losses.sitesBehind(fact.frames, r.framework);
      if (new SummedLosses(this.model).allSummed(sites)) return undefined;
    }
    // A divisor of another group than the one reduced is right when the named sizes show it counts the same
    // replicas (expert gradients reduced over the expert-data-parallel group and divided by the data-parallel size).
    if (verdict.code === 'CP003' && symbolic === 'agrees') return undefined;
    // A scale is a bug only where it reaches the parameters: the parameters' own `.grad` (which the optimizer
    // reads), an update in view, or a gradient-sync helper. Gradients reduced into a copy that nothing applies
    // (compared in a test, gathered from fragments) are not a training-step scale.
    const update = this.updates.find(enclosingChain(fact));
    if (update) return { ...verdict, update, group };
    return writesParameterGradients(fact) ? { ...verdict, group } : undefined;
  }

  /**
   * CP003 over a model-parallel framework's named group (group-sizes.ts): the sum counts the group's replicas, and
   * the named divisors on one path through the branches do not divide that count out.
   */
  groupDivisorVerdict(fact: Fact): Verdict | 'agrees' | undefined {
    const r = fact.reduction;
    const env0 = fact.frames[0].env;
    if (r.framework !== 'torch' || !r.groupNode || this.conditions.failingGuard(r.call, env0)) return undefined;
    const resolved = this.resolveOp(r, env0).kind;
    const either = resolved === 'other' && sumOrAverage(this.model, r, fact.frames[0].fn);
    const op = either ? 'sum' : resolved;
    if (op !== 'sum' && op !== 'avg') return undefined;
    if (!this.isGradientFact(fact)) return undefined;
    const { terms } = this.termsOf(fact);
    const scaling = terms
      .filter((t) => !t.fromLoss)
      .map((t) => ({ ...t, node: t.written?.node ?? t.node, env: t.written?.env ?? env0, term: t }));
    const mismatch = either
      ? mismatchUnderBothOps(this.groupSizes, r.groupNode, env0, scaling, (n) => this.text(n))
      : groupDivisorMismatch(this.groupSizes, r.groupNode, env0, op === 'avg', scaling, (n) => this.text(n));
    if (either && !mismatch) return this.flagLinkedVerdict(fact, scaling);
    if (!mismatch || mismatch === 'agrees') return mismatch;
    const loss = this.lossFor(fact, r.framework);
    if (!loss || loss.exponent !== 0 || loss.terms.length > 0) return undefined;
    const s = this.model.syntax;
    const term = mismatch.term.term;
    const message =
      groupDivisorMessage(
        mismatch,
        clip(s.text(r.call)),
        clip(s.text(r.groupNode), 50),
        clip(s.text(term.node), 50),
        op === 'avg',
      ) + (either ? eitherOpNote(mismatch) : '');
    // The divisor is pointed at where it divides, not where a caller passed it on.
    const verdict: Verdict = {
      code: 'CP003',
      exponent: 0,
      location: mismatch.term.node,
      fact,
      term,
      why: 'wrong divisor for the group',
      message,
      ...(mismatch.origin ? { origin: mismatch.origin, chosenFactor: chosenFactor(mismatch) } : {}),
    };
    const update = this.updates.find(enclosingChain(fact));
    if (update) return { ...verdict, update };
    return writesParameterGradients(fact) ? verdict : undefined;
  }

  /**
   * CP003 (a warning) over an expert-data-parallel group whose operation a configuration flag chooses, when the
   * factor was chosen under the same flag (flag-choice.ts): the factor left is etp/tp.
   */
  private flagLinkedVerdict(fact: Fact, scaling: readonly (ScalingTerm & { term: Term })[]): Verdict | undefined {
    const r = fact.reduction;
    const flag = averagingFlag(this.model, r, fact.frames[0].fn);
    const m =
      flag && mismatchUnderFlag(this.groupSizes, r.groupNode, fact.frames[0].env, scaling, (n) => this.text(n), flag);
    // etp/tp is 1 unless the framework has an expert tensor-parallel size of its own (Megatron since it folded the
    // expert groups): without its size helper in the program the quotient proves nothing.
    if (!m || !m.origin || !this.definesFunction('get_expert_tensor_parallel_world_size')) return undefined;
    const loss = this.lossFor(fact, r.framework);
    if (!loss || loss.exponent !== 0 || loss.terms.length > 0) return undefined;
    const s = this.model.syntax;
    const verdict: Verdict = {
      code: 'CP003',
      exponent: 0,
      location: m.term.node,
      fact,
      term: m.term.term,
      why: 'wrong factor for the expert tensor-parallel size',
      message: flagLinkedMessage(
        m,
        clip(s.text(r.call)),
        clip(s.text(r.groupNode!), 50),
        clip(s.text(m.term.node), 50),
      ),
      severity: 'warning',
      origin: m.origin,
      chosenFactor: chosenFactor(m),
    };
    const update = this.updates.find(enclosingChain(fact));
    if (update) return { ...verdict, update };
    return writesParameterGradients(fact) ? verdict : undefined;
  }

  /** True when the reduction's group is a product of dimensions the framework helpers name (group-sizes.ts). */
  namesGroupSize(fact: Fact): boolean {
    const r = fact.reduction;
    return (
      r.framework === 'torch' && !!r.groupNode && this.groupSizes.group(r.groupNode, fact.frames[0].env) !== undefined
    );
  }

  /**
   * The group a reduction ran over. MPI communicators and Horovod process sets are the whole job unless their name
   * says otherwise. A string JAX axis that names no model-parallel dimension is the data axis when the file maps a
   * function with `pmap`, whose axis is the devices' batch dimension.
   */
  groupOf(r: Reduction, env: Env): GroupClass {
    if (r.framework === 'mpi' || r.framework === 'horovod') {
      const comm = r.framework === 'mpi' ? this.model.syntax.calleeObject(r.call) : undefined;
      return comm && groupKindOfName(this.text(comm)) === 'model' ? { kind: 'model' } : { kind: 'world' };
    }
    if (r.framework === 'tf' && !r.groupNode) return { kind: 'world', evidence: 'all replicas (towers)' };
    const group = this.groups.classify(r.groupNode, env);
    if (group.kind !== 'unknown' || r.framework !== 'jax' || !r.groupNode) return group;
    const axis = this.model.syntax.stringValue(r.groupNode);
    return axis !== undefined && this.usesPmap() ? { kind: 'data', evidence: `the pmap axis '${axis}'` } : group;
  }

  private pmapSeen: boolean | undefined;

  private usesPmap(): boolean {
    this.pmapSeen ??= /\bpmap\b/.test(this.model.syntax.source.text);
    return this.pmapSeen;
  }

  decide(opExponent: number, gradTerms: Term[], loss: LossInfo, ctx: ScaleDecisionContext): Verdict | undefined {
    return decideScale(this.model.syntax, this.worldSize, opExponent, gradTerms, loss, ctx);
  }

  /** Divisions of `.grad` tensors in a function, for gradients reduced by a wrapper (DDP) rather than by hand. */
  gradDivisions(fnEnvFact: { fn: Env['fn'] }): Term[] {
    const flow = this.facts.flowOf(fnEnvFact.fn);
    const out: Term[] = [];
    for (const op of flow.scaleOps) {
      if (!flow.find(op.key).endsWith('.grad') && !/\.grad$/.test(op.key)) continue;
      for (const f of op.factors) out.push(this.term(f.node, f.sign, { fn: fnEnvFact.fn }, op, false));
    }
    return out;
  }

  /** The loss term nodes as `Term`s, so CP002 can point at a pre-divided loss. */
  lossTerms(loss: LossInfo): Term[] {
    return loss.terms.map((t) => ({ size: t.size, sign: t.sign, node: t.node, fromLoss: true }));
  }

  argumentsOf(call: PyNode): PyNode | undefined {
    return child(call, 'arguments');
  }
}

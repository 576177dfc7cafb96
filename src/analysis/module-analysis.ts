// One parsed file through the rules. The program (program.ts) calls it twice for the files that share helpers: once
// alone, to learn what their top-level helpers do to the gradients they are given, and once more with what the
// other files' helpers do, so a call into another file is judged like a reduction written in place.
import type { PyNode, Source } from './tree';
import { Syntax } from './syntax';
import { FileModel } from './scope';
import { SizeClassifier } from './sizes';
import { ConditionEvaluator } from './conditions';
import { LossTracer } from './losses';
import { ReductionFinder, type Reduction } from './reductions';
import { FunctionFlow } from './flow';
import { FactBuilder } from './facts';
import { Judge } from './judge';
import { GroupResolver } from './groups';
import { UpdateFinder } from './updates';
import { AccumulationRule } from './accumulation';
import { implicitVerdicts } from './implicit';
import { tokenWeightingVerdicts } from './token-weighting';
import { ZeroGradWindows } from './zero-grad-window';
import { bucketDoubleDivideVerdicts } from './bucket-double-divide';
import { bucketGroupDivisorVerdicts } from './bucket-group-divisor';
import { summedLossPmeanVerdicts } from './summed-loss-pmean';
import { unreducedWorldMultiplierVerdicts } from './unreduced-world-multiplier';
import { FindingWriter } from './findings';
import { summarise, type HelperSummary } from './summaries';
import { GroupSizes } from './group-sizes';
import type { ConstructorArgument } from './class-summaries';
import { normaliserSummaries, type FileNormalisers } from './local-normaliser';
import { localNormaliserVerdicts, type NormaliserIndex } from './local-normaliser-rule';
import type { AnalysisOptions, Finding } from './types';
import { reducedAttributes, type AttributeScaling } from './scaled-attributes';
import type { Fact } from './facts';
import type { CallbackLoss } from './contracts/callback-arguments';

/** What the rest of the program says about one file. */
export interface ProgramContext {
  /** The file's name in the program (for summaries and related locations in other files). */
  readonly path: string;
  /** A call of this file to a summarised helper of another file, as the reduction that helper performs. */
  readonly external?: (call: PyNode, model: FileModel) => Reduction | undefined;
  /** Top-level functions of this file that other files call: their caller-less verdicts are left to the callers. */
  readonly calledElsewhere?: ReadonlySet<string>;
  /** What a constructor parameter denotes over the program's construction sites of its class (class-summaries.ts). */
  readonly constructorArgument?: ConstructorArgument;
  /** The program's rescaling reductions and loss normalisers (local-normaliser.ts), for the files that call them. */
  readonly normalisers?: NormaliserIndex;
  /** True when a file of the program defines a top-level function of this name (flag-choice.ts). */
  readonly definesFunction?: (name: string) => boolean;
  /** True when a program function or class of this name wraps in DDP/FSDP (unreduced-world-multiplier.ts). */
  readonly wrapsDataParallel?: (name: string) => boolean;
  /** True when every program definition of a function of this name only returns a combination of its arguments. */
  readonly countPreserving?: (name: string) => boolean;
  /** What the program passes to a callable parameter of one of this file's top-level functions (accumulation.ts). */
  readonly callbackLoss?: (fn: string, param: string, counts: ReadonlySet<string>) => CallbackLoss;
  /** The step path of a class of this file reduces in `method` and divides by a constructed batch (module-analysis). */
  readonly stepDividesByConstructedBatch?: (cls: string, method: string) => boolean;
  /** A rescaling, elsewhere in the program, of an object attribute of this name (scaled-attributes.ts). */
  readonly attributeScaling?: (attribute: string) => AttributeScaling | undefined;
}

export interface ModuleAnalysis {
  readonly findings: Finding[];
  readonly model: FileModel;
  /** Top-level helpers that sum a parameter's gradients and never divide (see summaries.ts). */
  readonly summaries: HelperSummary[];
  /** Helpers that sum and rescale by a parameter, and losses divided by a parameter before backward. */
  readonly normalisers: FileNormalisers;
  /** Findings that belong in another file of the program (a factor chosen there, chosen-place.ts). */
  readonly elsewhere: readonly { readonly file: string; readonly finding: Finding }[];
}

export function analyzeParsedModule(
  module: PyNode,
  source: Source,
  options: AnalysisOptions,
  context?: ProgramContext,
): ModuleAnalysis {
  const syntax = new Syntax(source);
  const model = new FileModel(module, syntax);
  const sizes = new SizeClassifier(model);
  const conditions = new ConditionEvaluator(model);
  const losses = new LossTracer(model, sizes);
  const external = context?.external;
  const finder = new ReductionFinder(model, external ? (call) => external(call, model) : undefined);
  const facts = new FactBuilder(model, (fn, helperReturnArg) => new FunctionFlow(fn, model, finder, helperReturnArg));
  const judge = new Judge(
    model,
    sizes,
    conditions,
    losses,
    facts,
    new GroupResolver(model, context?.constructorArgument),
    new UpdateFinder(model),
    options.worldSize,
    context?.calledElsewhere,
    new GroupSizes(model, context?.constructorArgument),
    context?.definesFunction,
  );
  const allFacts = facts.facts();
  const writer = new FindingWriter(model, source, sizes, options.worldSize, context?.path);
  const summaries: HelperSummary[] = [];
  const gradientFacts = allFacts.filter((f) => judge.isGradientFact(f));
  for (const fact of allFacts) {
    const verdict = judge.judgeFact(fact);
    if (!verdict) continue;
    // A sum into an object's attribute that the program rescales elsewhere proves no missing division.
    if ((verdict.code === 'CP001' || verdict.code === 'CP004') && scaledElsewhere(fact, model, context)) continue;
    if (verdict.code === 'CP001' && dividedOnStepPath(fact, model, context)) continue;
    if (context && !fact.reduction.via) {
      const summary = summarise(context.path, model, fact, verdict, source.range(fact.reduction.call));
      if (summary && !summaries.some((s) => s.name === summary.name)) summaries.push(summary);
    }
    if (!verdict.hint || options.hints) writer.addVerdict(verdict);
  }
  // The model-parallel divisor rule also follows gradients through the buckets (lists) they are gathered in; that
  // second view of the flows is built only for files that reduce over a group the framework helpers name.
  if (allFacts.some((f) => judge.namesGroupSize(f))) {
    const bucketFacts = new FactBuilder(
      model,
      (fn, helperReturnArg) => new FunctionFlow(fn, model, finder, helperReturnArg, true),
    );
    for (const fact of bucketFacts.facts()) {
      const verdict = judge.groupDivisorVerdict(fact);
      if (verdict && verdict !== 'agrees') writer.addVerdict(verdict);
    }
  }
  for (const v of implicitVerdicts(model, judge, losses, facts, gradientFacts.length > 0, options.hints === true))
    writer.addVerdict(v);
  const accumulation = new AccumulationRule(model, losses, context?.callbackLoss);
  // A window that `zero_grad` cuts short sums nothing: its steps apply one micro-batch's gradient (CP003 where the
  // loss is divided by K), never the K-fold sum CP008 is about.
  const zeroGrad = new ZeroGradWindows(model, losses, accumulation);
  for (const v of accumulation.verdicts()) if (!zeroGrad.cuts(v.site)) writer.addAccumulation(v);
  for (const v of tokenWeightingVerdicts(model, losses, accumulation, options.hints === true))
    writer.addTokenWeighting(v);
  for (const v of zeroGrad.verdicts()) writer.addExplained('CP003', v);
  for (const v of bucketDoubleDivideVerdicts(model)) writer.addExplained('CP002', v);
  for (const v of bucketGroupDivisorVerdicts(model, new GroupSizes(model, context?.constructorArgument)))
    writer.addExplained('CP003', v);
  for (const v of summedLossPmeanVerdicts(model)) writer.addExplained('CP003', v);
  for (const v of unreducedWorldMultiplierVerdicts(model, sizes, context ?? {})) writer.addExplained('CP003', v);
  if (context?.normalisers)
    for (const v of localNormaliserVerdicts(model, new UpdateFinder(model), context.normalisers, options.worldSize))
      writer.addExplained('CP001', v);
  writer.addLearningRateFindings();
  writer.addGlooFindings(allFacts.map((f) => f.reduction));
  const normalisers = context ? normaliserSummaries(context.path, model, (n) => source.range(n)) : undefined;
  return {
    findings: writer.findings(),
    model,
    summaries,
    normalisers: normalisers ?? { rescale: [], losses: [] },
    elsewhere: writer.elsewhere,
  };
}

/**
 * True when the sum runs in a method of an optimizer wrapper whose step path, through the class's bases in any file,
 * also divides each gradient by a batch size given at construction (contracts/optimizer-wrappers.ts): the applied
 * gradient's scale is then set by the batch the construction passes, so the sum alone proves no N× factor.
 */
function dividedOnStepPath(fact: Fact, model: FileModel, context: ProgramContext | undefined): boolean {
  const ask = context?.stepDividesByConstructedBatch;
  const fn = model.enclosingFunction(fact.reduction.call);
  return !!ask && !!fn?.className && ask(fn.className, fn.name);
}

/** True when the reduced tensor is an object attribute that some referenced function of the program rescales. */
function scaledElsewhere(fact: Fact, model: FileModel, context: ProgramContext | undefined): boolean {
  const lookup = context?.attributeScaling;
  if (!lookup) return false;
  const s = model.syntax;
  const r = fact.reduction;
  const texts = [r.tensor, r.output, ...s.args(r.call).positional].flatMap((n) => (n ? [s.text(n)] : []));
  const first = fact.frames[0];
  if (first.key !== undefined) texts.push(...first.flow.members(first.key));
  return reducedAttributes(texts).some((a) => lookup(a) !== undefined);
}

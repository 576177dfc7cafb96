// The entry point: Python source text in, findings out. The web-tree-sitter Parser (with the Python language
// set) is passed in, so this layer stays pure and runs in the CLI and the extension alike.
import type { Parser } from 'web-tree-sitter';
import type { Source, PyNode } from './tree';
import { Syntax } from './syntax';
import { FileModel } from './scope';
import { SizeClassifier } from './sizes';
import { ConditionEvaluator } from './conditions';
import { LossTracer } from './losses';
import { ReductionFinder } from './reductions';
import { FunctionFlow } from './flow';
import { FactBuilder } from './facts';
import { Judge } from './judge';
import { GroupResolver } from './groups';
import { UpdateFinder } from './updates';
import { implicitVerdicts } from './implicit';
import { mayHaveFindings } from './select';
import { parseModule, SPLIT_ABOVE_CHARS } from './parse';
import { FindingWriter } from './findings';
import { applyIgnoreComments } from './ignore';
import type { AnalysisOptions, AnalysisResult, Finding, Unanalysed } from './types';

export const DEFAULT_MAX_CHARS = 8_000_000;
export const DEFAULT_PARSE_BUDGET_MS = 5_000;
export { SPLIT_ABOVE_CHARS };

export function analyzePython(parser: Parser, text: string, options: AnalysisOptions = {}): AnalysisResult {
  try {
    if (text.trim() === '') return { findings: [], notes: [] };
    const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
    if (text.length > maxChars) {
      return notAnalysed({ reason: 'too-large', whole: true, message: `file has ${text.length.toLocaleString('en-US')} characters, over the ${maxChars.toLocaleString('en-US')} analysed; skipped` });
    }
    // Most files of a code base (models, data, tests) name no reduction, wrapper or backward pass: no parse.
    if (options.prefilter !== false && !mayHaveFindings(text)) return { findings: [], notes: [] };
    const parsed = parseModule(parser, text, options.parseBudgetMs ?? DEFAULT_PARSE_BUDGET_MS, options.splitAboveChars ?? SPLIT_ABOVE_CHARS);
    if (!('module' in parsed)) return notAnalysed(parsed);
    const findings = applyIgnoreComments(analyzeModule(parsed.module, parsed.source, options), text);
    const notes = parsed.unanalysed.map((u) => u.message);
    return parsed.unanalysed.length > 0 ? { findings, notes, unanalysed: parsed.unanalysed } : { findings, notes };
  } catch (error) {
    return notAnalysed({ reason: 'failed', whole: true, message: `analysis stopped early: ${error instanceof Error ? error.message : String(error)}` });
  }
}

function notAnalysed(why: Unanalysed): AnalysisResult {
  return { findings: [], notes: [why.message], unanalysed: [why] };
}

function analyzeModule(module: PyNode, source: Source, options: AnalysisOptions): Finding[] {
  const syntax = new Syntax(source);
  const model = new FileModel(module, syntax);
  const sizes = new SizeClassifier(model);
  const conditions = new ConditionEvaluator(model);
  const losses = new LossTracer(model, sizes);
  const finder = new ReductionFinder(model);
  const facts = new FactBuilder(model, (fn, helperReturnArg) => new FunctionFlow(fn, model, finder, helperReturnArg));
  const judge = new Judge(model, sizes, conditions, losses, facts, new GroupResolver(model), new UpdateFinder(model), options.worldSize);
  const allFacts = facts.facts();
  const writer = new FindingWriter(model, source, sizes, options.worldSize);
  const gradientFacts = allFacts.filter((f) => judge.isGradientFact(f));
  for (const fact of allFacts) {
    const verdict = judge.judgeFact(fact);
    if (verdict && (!verdict.hint || options.hints)) writer.addVerdict(verdict);
  }
  for (const v of implicitVerdicts(model, judge, losses, facts, gradientFacts.length > 0, options.hints === true)) writer.addVerdict(v);
  writer.addLearningRateFindings();
  writer.addGlooFindings(allFacts.map((f) => f.reduction));
  return writer.findings();
}

// The entry point: Python source text in, findings out. The web-tree-sitter Parser (with the Python language
// set) is passed in, so this layer stays pure and runs in the CLI and the extension alike.
import type { Parser, Range } from 'web-tree-sitter';
import { copySubtree, Source, type PyNode } from './tree';
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
import { selectUnits, splitTopLevel } from './select';
import { FindingWriter } from './findings';
import { applyIgnoreComments } from './ignore';
import type { AnalysisOptions, AnalysisResult, Finding } from './types';

export const DEFAULT_MAX_CHARS = 8_000_000;
export const DEFAULT_PARSE_BUDGET_MS = 5_000;

export function analyzePython(parser: Parser, text: string, options: AnalysisOptions = {}): AnalysisResult {
  const notes: string[] = [];
  try {
    if (text.trim() === '') return { findings: [], notes };
    const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
    if (text.length > maxChars) {
      notes.push(`file has ${text.length.toLocaleString('en-US')} characters, over the ${maxChars.toLocaleString('en-US')} analysed; skipped`);
      return { findings: [], notes };
    }
    const parsed = parseModule(parser, text, options.parseBudgetMs ?? DEFAULT_PARSE_BUDGET_MS, notes, options.splitAboveChars ?? SPLIT_ABOVE_CHARS);
    if (!parsed) return { findings: [], notes };
    const findings = analyzeModule(parsed.module, parsed.source, options);
    return { findings: applyIgnoreComments(findings, text), notes };
  } catch (error) {
    notes.push(`analysis stopped early: ${error instanceof Error ? error.message : String(error)}`);
    return { findings: [], notes };
  }
}

/** Above this size only the relevant top-level statements are parsed (tree-sitter's included ranges). */
export const SPLIT_ABOVE_CHARS = 20_000;

function parseModule(parser: Parser, text: string, budgetMs: number, notes: string[], splitAbove: number): { module: PyNode; source: Source } | undefined {
  const deadline = Date.now() + budgetMs;
  const source = new Source(text);
  const module: PyNode = { type: 'module', named: true, field: null, start: 0, end: text.length, children: [], parent: null };
  let includedRanges: Range[] | undefined;
  if (text.length > splitAbove) {
    const units = splitTopLevel(text);
    const keep = selectUnits(text, units);
    const kept = units.filter((_, i) => keep[i]);
    if (kept.length === 0) return { module, source };
    includedRanges = kept.map((u) => {
      const a = source.position(u.start);
      const b = source.position(u.end);
      return { startIndex: u.start, endIndex: u.end, startPosition: { row: a.line, column: a.column }, endPosition: { row: b.line, column: b.column } };
    });
  }
  // A cancelled parse is resumed by the next parse() call unless the parser is reset, so always start fresh.
  parser.reset();
  const tree = parser.parse(text, null, { includedRanges, progressCallback: () => Date.now() > deadline });
  if (!tree) {
    parser.reset();
    notes.push(`parsing took longer than ${budgetMs} ms; skipped`);
    return undefined;
  }
  try {
    const root = tree.rootNode;
    if (root.hasError) {
      const error = root.descendantsOfType('ERROR')[0] ?? undefined;
      const where = error ? ` (first at line ${error.startPosition.row + 1})` : '';
      notes.push(`the file has syntax errors${where}; findings come from the parts that parse`);
    }
    const language = parser.language!;
    const tops = root.children.filter((c): c is NonNullable<typeof c> => c !== null);
    // Small files are copied whole; large ones were already cut down to their relevant statements.
    let truncated = false;
    tops.forEach((top) => {
      const cursor = top.walk();
      const copy = copySubtree(cursor, language);
      cursor.delete();
      copy.node.parent = module;
      module.children.push(copy.node);
      truncated ||= copy.truncated;
    });
    if (truncated) notes.push('some expressions are nested too deeply to analyse; they were skipped');
    return { module, source };
  } finally {
    tree.delete();
  }
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

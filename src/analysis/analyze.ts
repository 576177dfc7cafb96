// The entry point: Python source text in, findings out. The web-tree-sitter Parser (with the Python language
// set) is passed in, so this layer stays pure and runs in the CLI and the extension alike.
import type { Parser } from 'web-tree-sitter';
import { mayHaveFindings } from './select';
import { parseModule, SPLIT_ABOVE_CHARS } from './parse';
import { applyIgnoreComments } from './ignore';
import { analyzeParsedModule, type ModuleAnalysis, type ProgramContext } from './module-analysis';
import type { AnalysisOptions, AnalysisResult, Unanalysed } from './types';

export const DEFAULT_MAX_CHARS = 8_000_000;
export const DEFAULT_PARSE_BUDGET_MS = 5_000;
export { SPLIT_ABOVE_CHARS };

/** One file on its own: what the CLI's single-file checks, the tests and the corpus use. */
export function analyzePython(parser: Parser, text: string, options: AnalysisOptions = {}): AnalysisResult {
  return analyzeSource(parser, text, options).result;
}

/**
 * One file, with what the rest of the program says about it (program.ts); `analysis` is the parsed file's model
 * and helper summaries, absent when the file was not parsed.
 */
export function analyzeSource(
  parser: Parser,
  text: string,
  options: AnalysisOptions,
  context?: ProgramContext,
): { result: AnalysisResult; analysis?: ModuleAnalysis; elsewhere?: ModuleAnalysis['elsewhere'] } {
  try {
    if (text.trim() === '') return { result: { findings: [], notes: [] } };
    const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
    if (text.length > maxChars) {
      return notAnalysed({
        reason: 'too-large',
        whole: true,
        message: `file has ${text.length.toLocaleString('en-US')} characters, over the ${maxChars.toLocaleString('en-US')} analysed; skipped`,
      });
    }
    // Most files of a code base (models, data, tests) name no reduction, wrapper or backward pass: no parse.
    if (options.prefilter !== false && !mayHaveFindings(text)) return { result: { findings: [], notes: [] } };
    const parsed = parseModule(
      parser,
      text,
      options.parseBudgetMs ?? DEFAULT_PARSE_BUDGET_MS,
      options.splitAboveChars ?? SPLIT_ABOVE_CHARS,
    );
    if (!('module' in parsed)) return notAnalysed(parsed);
    const analysis = analyzeParsedModule(parsed.module, parsed.source, options, context);
    // Test code reduces gradients to compare them, fixes a world size, or sums on purpose: it trains nothing, so
    // what the rules find there is a hint, shown only on request.
    const testCode = isTestCode(options.path ?? context?.path) && !options.hints;
    const findings = testCode ? [] : applyIgnoreComments(analysis.findings, text);
    const notes = parsed.unanalysed.map((u) => u.message);
    const result =
      parsed.unanalysed.length > 0 ? { findings, notes, unanalysed: parsed.unanalysed } : { findings, notes };
    return { result, analysis, elsewhere: testCode ? [] : analysis.elsewhere };
  } catch (error) {
    return notAnalysed({
      reason: 'failed',
      whole: true,
      message: `analysis stopped early: ${error instanceof Error ? error.message : String(error)}`,
    });
  }
}

/** `test_*.py`, `*_test.py`, `conftest.py`, and files under a `test`, `tests` or `testing` folder. */
export function isTestCode(path: string | undefined): boolean {
  if (!path) return false;
  const parts = path.split(/[\\/]/);
  const file = parts[parts.length - 1];
  return (
    /^test_.*\.py$|_test\.py$|^conftest\.py$/.test(file) ||
    parts.slice(0, -1).some((d) => /^(test|tests|testing)$/.test(d))
  );
}

function notAnalysed(why: Unanalysed): { result: AnalysisResult } {
  return { result: { findings: [], notes: [why.message], unanalysed: [why] } };
}

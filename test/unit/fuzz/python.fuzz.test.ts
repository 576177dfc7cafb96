// Fuzzes the gradient-scaling analysis with Python that is broken in every way an editor buffer can be: the
// labelled corpus mutated byte by byte (half-typed code, stray brackets, odd encodings) and files recombined from
// the corpus's own lines. The analysis must never throw, never swallow an internal error as a note, stay within
// the time bound, and give findings and fixes whose ranges lie inside the file. Parsing is the slowest step of all
// the formats, so this target gets fewer inputs.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { loadPythonParser } from '../../../src/cli/python-parser';
import { analyzePython, applyEdits, type AnalysisResult, type SourceRange } from '../../../src/analysis/index';
import { checkInput, fuzz, reportCounts } from './harness';
import { editsArbitrary, mutateText, recombinedLines } from './mutate';
import { pythonSeeds } from './seeds';
import { FUZZ_PLAN } from './plan';

after(() => reportCounts('python'));

function rangeProblem(range: SourceRange, lines: string[]): string | undefined {
  const { startLine, startColumn, endLine, endColumn } = range;
  const inside = (line: number, column: number): boolean =>
    Number.isInteger(line) &&
    line >= 0 &&
    line < lines.length &&
    Number.isInteger(column) &&
    column >= 0 &&
    column <= lines[line].length;
  if (!inside(startLine, startColumn) || !inside(endLine, endColumn))
    return `range ${startLine}:${startColumn}-${endLine}:${endColumn} lies outside the file`;
  if (endLine < startLine || (endLine === startLine && endColumn < startColumn))
    return `range ${startLine}:${startColumn}-${endLine}:${endColumn} ends before it starts`;
  return undefined;
}

function analysisProblem(text: string, result: AnalysisResult): string | undefined {
  const swallowed = result.notes.find((n) => /stopped early/.test(n));
  if (swallowed) return `an internal error was turned into a note: ${swallowed}`;
  const lines = text.split(/\r\n|\r|\n/);
  for (const f of result.findings) {
    const problem = rangeProblem(f.range, lines) ?? f.related.map((r) => rangeProblem(r.range, lines)).find(Boolean);
    if (problem) return `${f.code}: ${problem}`;
    for (const fix of f.fixes) {
      const edit = fix.edits.map((e) => rangeProblem(e.range, lines)).find(Boolean);
      if (edit) return `${f.code} fix '${fix.title}': ${edit}`;
      applyEdits(text, fix.edits);
    }
  }
  return undefined;
}

test('Python analysis: mutated corpus files and recombined lines', async () => {
  const parser = await loadPythonParser();
  const seeds = pythonSeeds();
  assert.ok(
    seeds.length >= 30,
    'the labelled corpus (../shared/corpus/scaling and test/fixtures/scaling-extra) seeds the fuzzing',
  );
  const run =
    (format: string) =>
    (text: string): void => {
      checkInput(
        format,
        text,
        () => analyzePython(parser, text, { worldSize: 8 }),
        (r) => analysisProblem(text, r),
      );
    };
  fuzz(
    fc
      .record({ index: fc.nat(), edits: editsArbitrary })
      .map(({ index, edits }) => mutateText(seeds[index % seeds.length].text, edits)),
    FUZZ_PLAN.pythonMutated,
    run('Python (mutated)'),
  );
  fuzz(recombinedLines(seeds, 30), FUZZ_PLAN.pythonGenerated, run('Python (recombined)'));
});

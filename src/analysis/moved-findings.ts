// Findings one file's analysis places in another file of the program: a wrong factor is shown where it was chosen
// (chosen-place.ts), and the file it is shown in decides what silences it (its ignore comments) and sorts it among
// its own findings.
import { applyIgnoreComments } from './ignore';
import type { AnalysisResult, Finding } from './types';

export interface MovedFinding {
  /** The file the finding belongs in. */
  readonly file: string;
  readonly finding: Finding;
  /** The file whose analysis found it. */
  readonly from?: string;
}

/** `result` with the moved findings that belong in `path`, once each, honouring its ignore comments. */
export function withMoved(
  path: string,
  result: AnalysisResult,
  moved: readonly MovedFinding[],
  text: string,
): AnalysisResult {
  const mine = moved.filter((m) => m.file === path).map((m) => m.finding);
  if (mine.length === 0) return result;
  const findings = [...result.findings];
  for (const f of applyIgnoreComments(mine, text)) {
    const key = findingKey(f);
    if (!findings.some((g) => findingKey(g) === key)) findings.push(f);
  }
  findings.sort(
    (a, b) =>
      a.range.startLine - b.range.startLine ||
      a.range.startColumn - b.range.startColumn ||
      a.code.localeCompare(b.code),
  );
  return { ...result, findings };
}

function findingKey(f: Finding): string {
  return `${f.code}:${f.range.startLine}:${f.range.startColumn}`;
}

// The analysis layer's public data shapes: findings with 0-based ranges, related locations and quick fixes as
// plain text edits, so the CLI and the extension can both print or apply them without knowing the parser.

export type RuleCode = 'CP001' | 'CP002' | 'CP003' | 'CP004' | 'CP005' | 'CP006' | 'CP007' | 'CP008';
export type Severity = 'error' | 'warning' | 'info';

/** 0-based lines and UTF-16 columns, end exclusive (the editor's convention). */
export interface SourceRange {
  readonly startLine: number;
  readonly startColumn: number;
  readonly endLine: number;
  readonly endColumn: number;
}

export interface TextEdit {
  readonly range: SourceRange;
  readonly newText: string;
}

export interface Fix {
  readonly title: string;
  readonly edits: readonly TextEdit[];
}

export interface RelatedLocation {
  readonly range: SourceRange;
  readonly message: string;
  /** Another file of the program (as the program names it); absent for the finding's own file. */
  readonly file?: string;
}

export interface Finding {
  readonly code: RuleCode;
  readonly severity: Severity;
  readonly range: SourceRange;
  readonly message: string;
  readonly related: readonly RelatedLocation[];
  readonly fixes: readonly Fix[];
}

export interface AnalysisOptions {
  /** The number of ranks, when known (a setting or `--world-size`); messages then show numbers instead of N. */
  readonly worldSize?: number;
  /** Files longer than this many characters are not analysed (the parse alone would take too long). */
  readonly maxChars?: number;
  /** Stops parsing after this many milliseconds and reports what was found so far (nothing, for a parse). */
  readonly parseBudgetMs?: number;
  /** Above this many characters only the relevant top-level statements are parsed (default 20,000). */
  readonly splitAboveChars?: number;
  /**
   * Also report what the analysis suspects but cannot prove (off by default): for example a loss divided by the
   * world size in a distributed script whose DDP wrapper is not in view.
   */
  readonly hints?: boolean;
  /**
   * The file's path, when there is one. Findings in test code (`test_*.py`, `*_test.py`, `conftest.py`, files under
   * `test/`, `tests/` or `testing/`) are hints: tests reduce gradients to compare them, not to train.
   */
  readonly path?: string;
  /**
   * Skip files whose text names no call a rule starts from (select.ts, mayHaveFindings). On by default; off only
   * to check that the filter changes no finding.
   */
  readonly prefilter?: boolean;
}

export interface AnalysisResult {
  readonly findings: readonly Finding[];
  /** Why the analysis was partial or skipped: syntax errors, size limits, undecodable bytes. */
  readonly notes: readonly string[];
  /** Present when part or all of the file was not analysed: such a file is never reported as clean. */
  readonly unanalysed?: readonly Unanalysed[];
}

/** What was not analysed, and why (its message is also one of the notes). */
export interface Unanalysed {
  readonly reason: UnanalysedReason;
  /** True when nothing of the file was analysed, false when only parts were. */
  readonly whole: boolean;
  /** The first line concerned (0-based), when there is one. */
  readonly line?: number;
  readonly message: string;
}

/**
 * syntax-error: statements that do not parse; unparsed: the same, where Python itself accepts them (only the CLI
 * can ask it); too-large, parse-budget: size and time limits; too-deep: nesting past what the rules walk;
 * not-utf8: bytes replaced while decoding; unreadable: the file could not be read; failed: the analysis threw.
 */
export type UnanalysedReason =
  'syntax-error' | 'unparsed' | 'too-large' | 'parse-budget' | 'too-deep' | 'not-utf8' | 'unreadable' | 'failed';

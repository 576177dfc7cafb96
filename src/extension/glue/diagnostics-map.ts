// Maps the analysis layer's findings onto plain diagnostic data: severity overrides and disabled rules from the
// settings, 0-based ranges, and the rule code that links to its docs page. The VS Code adapter turns this data
// into vscode.Diagnostic objects one to one, so everything decided here is unit-tested.
import type { RuleSeverity } from '../settings';
import type { Finding, SourceRange } from '../../analysis/types';

export type Severity = 'error' | 'warning' | 'information' | 'hint';

/** The analysis layer's findings: 0-based, end-exclusive ranges, already in the editor's convention. */
export type FindingInput = Pick<Finding, 'code' | 'severity' | 'message' | 'range' | 'related' | 'fixes'>;

/** 0-based, end-exclusive, as editors count. */
export interface RangeData {
  readonly startLine: number;
  readonly startCharacter: number;
  readonly endLine: number;
  readonly endCharacter: number;
}

export interface DiagnosticData {
  readonly range: RangeData;
  readonly severity: Severity;
  readonly message: string;
  readonly source: 'Collective Profiler';
  readonly code: { readonly value: string; readonly target: string };
  /** `file`: another file of the program (its path), for evidence that lies outside this document. */
  readonly related: readonly { readonly range: RangeData; readonly message: string; readonly file?: string }[];
  /** Index into the findings array, so code actions can find the fixes again. */
  readonly findingIndex: number;
}

const SEVERITIES: readonly Severity[] = ['error', 'warning', 'information', 'hint'];

/** Normalises the analysis layer's severity words ("info", "warn") to the editor's four. */
export function normaliseSeverity(severity: string): Severity {
  const s = severity.toLowerCase();
  if (s === 'warn') return 'warning';
  if (s === 'info' || s === 'note') return 'information';
  return (SEVERITIES as readonly string[]).includes(s) ? (s as Severity) : 'warning';
}

/** Copies an analysis range, clamping nonsense (negative or reversed) instead of throwing. */
export function toRange(range: SourceRange): RangeData {
  const l = Math.max(0, Math.floor(range.startLine));
  const c = Math.max(0, Math.floor(range.startColumn));
  let el = Math.max(0, Math.floor(range.endLine));
  let ec = Math.max(0, Math.floor(range.endColumn));
  if (el < l || (el === l && ec < c)) {
    el = l;
    ec = c;
  }
  return { startLine: l, startCharacter: c, endLine: el, endCharacter: ec };
}

/**
 * Turns findings into diagnostics: rules switched `off` disappear, overridden severities replace the rule's own,
 * and every diagnostic's code links to the rule's page.
 */
export function findingsToDiagnostics(
  findings: readonly FindingInput[],
  rules: Readonly<Record<string, RuleSeverity>>,
  docsTarget: (code: string) => string,
): DiagnosticData[] {
  const out: DiagnosticData[] = [];
  findings.forEach((finding, findingIndex) => {
    const override = rules[finding.code] ?? 'default';
    if (override === 'off') return;
    out.push({
      range: toRange(finding.range),
      severity: override === 'default' ? normaliseSeverity(finding.severity) : override,
      message: finding.message,
      source: 'Collective Profiler',
      code: { value: finding.code, target: docsTarget(finding.code) },
      related: (finding.related ?? []).map((r) => ({
        range: toRange(r.range),
        message: r.message,
        ...(r.file ? { file: r.file } : {}),
      })),
      findingIndex,
    });
  });
  return out;
}

export interface CodeActionData {
  readonly title: string;
  readonly preferred: boolean;
  readonly edits: readonly { readonly range: RangeData; readonly newText: string }[];
  readonly diagnostic: DiagnosticData;
}

function overlaps(a: RangeData, b: RangeData): boolean {
  const before = (l1: number, c1: number, l2: number, c2: number) => l1 < l2 || (l1 === l2 && c1 <= c2);
  return (
    before(a.startLine, a.startCharacter, b.endLine, b.endCharacter) &&
    before(b.startLine, b.startCharacter, a.endLine, a.endCharacter)
  );
}

/**
 * The quick fixes for the diagnostics that touch `range` (the cursor or selection), one code action per fix. The
 * first fix of a finding is preferred (the analysis lists its best fix first), so Ctrl+. applies it directly.
 */
export function quickFixesAt(
  findings: readonly FindingInput[],
  diagnostics: readonly DiagnosticData[],
  range: RangeData,
): CodeActionData[] {
  const actions: CodeActionData[] = [];
  for (const diagnostic of diagnostics) {
    if (!overlaps(diagnostic.range, range)) continue;
    const fixes = findings[diagnostic.findingIndex]?.fixes ?? [];
    fixes.forEach((fix, i) => {
      actions.push({
        title: fix.title,
        preferred: i === 0,
        edits: fix.edits.map((e) => ({ range: toRange(e.range), newText: e.newText })),
        diagnostic,
      });
    });
  }
  return actions;
}

/** The docs page of a rule inside the installed extension (docs/rules/CP001.md). */
export function ruleDocsPath(code: string): string {
  return /^CP\d{3}$/.test(code) ? `docs/rules/${code}.md` : 'docs/rules/README.md';
}

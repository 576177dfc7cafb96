// Output formats of `check`: linter lines, JSON (1-based positions, the shape the extension reads) and SARIF 2.1.0
// for code-scanning tools.
import { RULES, type Finding, type SourceRange } from '../analysis/index';

export interface FileFindings {
  readonly file: string;
  readonly findings: readonly Finding[];
}

function oneBased(r: SourceRange): { line: number; column: number; endLine: number; endColumn: number } {
  return { line: r.startLine + 1, column: r.startColumn + 1, endLine: r.endLine + 1, endColumn: r.endColumn + 1 };
}

export function humanLines(results: readonly FileFindings[]): string[] {
  return results.flatMap((r) => r.findings.map((f) => `${r.file}:${f.range.startLine + 1}:${f.range.startColumn + 1} ${f.code} ${f.message}`));
}

export function toJson(results: readonly FileFindings[]): object[] {
  return results.flatMap((r) =>
    r.findings.map((f) => ({
      file: r.file,
      ...oneBased(f.range),
      code: f.code,
      severity: f.severity,
      message: f.message,
      related: f.related.map((x) => ({ ...oneBased(x.range), message: x.message })),
      fixes: f.fixes.map((fix) => ({ title: fix.title, edits: fix.edits.map((e) => ({ ...oneBased(e.range), newText: e.newText })) })),
    })),
  );
}

const LEVEL = { error: 'error', warning: 'warning', info: 'note' } as const;

export function toSarif(results: readonly FileFindings[], version: string): object {
  const uri = (file: string) => file.split('\\').join('/');
  const region = (r: SourceRange) => ({ startLine: r.startLine + 1, startColumn: r.startColumn + 1, endLine: r.endLine + 1, endColumn: r.endColumn + 1 });
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'collective-profiler',
            version,
            rules: RULES.map((rule) => ({
              id: rule.code,
              name: rule.name,
              shortDescription: { text: rule.title },
              fullDescription: { text: rule.summary },
              help: { text: `${rule.summary} See docs/rules/${rule.code}.md.`, markdown: `${rule.summary} See [docs/rules/${rule.code}.md](docs/rules/${rule.code}.md).` },
              defaultConfiguration: { level: LEVEL[rule.severity] },
            })),
          },
        },
        results: results.flatMap((r) =>
          r.findings.map((f) => ({
            ruleId: f.code,
            ruleIndex: RULES.findIndex((rule) => rule.code === f.code),
            level: LEVEL[f.severity],
            message: { text: f.message },
            locations: [{ physicalLocation: { artifactLocation: { uri: uri(r.file) }, region: region(f.range) } }],
            relatedLocations: f.related.map((x, i) => ({ id: i, message: { text: x.message }, physicalLocation: { artifactLocation: { uri: uri(r.file) }, region: region(x.range) } })),
            fixes: f.fixes.map((fix) => ({
              description: { text: fix.title },
              artifactChanges: [{ artifactLocation: { uri: uri(r.file) }, replacements: fix.edits.map((e) => ({ deletedRegion: region(e.range), insertedContent: { text: e.newText } })) }],
            })),
          })),
        ),
      },
    ],
  };
}

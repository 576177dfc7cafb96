// Output formats of `check`: linter lines, JSON (1-based positions, the shape the extension reads) and SARIF 2.1.0
// for code-scanning tools. A file that was not fully analysed is named in each: a line of its own, a JSON entry
// with `notAnalysed` instead of `code`, and a SARIF tool execution notification.
import { RULES, type Finding, type SourceRange, type Unanalysed } from '../analysis/index';
import { terminalInline } from './terminal-text';

export interface FileFindings {
  readonly file: string;
  readonly findings: readonly Finding[];
  /** What of the file was not analysed (absent or empty when all of it was). */
  readonly unanalysed?: readonly Unanalysed[];
}

/** The formats `--output-format` takes; `--json` and `--sarif` are short for two of them. */
export const OUTPUT_FORMATS = ['text', 'json', 'sarif', 'github'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** `bad.py:8:1: partly analysed: syntax error at line 8: ...` or `big.py: not analysed: ...`. */
export function unanalysedLine(file: string, u: Unanalysed): string {
  // File names and messages quote the checked files: one line each, whatever they contain.
  return `${terminalInline(file)}${u.line === undefined ? ':' : `:${u.line + 1}:1:`} ${u.whole ? 'not analysed' : 'partly analysed'}: ${terminalInline(u.message)}`;
}

function oneBased(r: SourceRange): { line: number; column: number; endLine: number; endColumn: number } {
  return { line: r.startLine + 1, column: r.startColumn + 1, endLine: r.endLine + 1, endColumn: r.endColumn + 1 };
}

/**
 * One line per finding, then its evidence (the reduction, the update, a helper in another file) indented below it,
 * so the first line keeps the `path:line:col: CODE message` shape of ruff and flake8 that editors and scripts match.
 */
export function humanLines(results: readonly FileFindings[]): string[] {
  const findings = results.flatMap((r) =>
    r.findings.flatMap((f) => [
      `${terminalInline(r.file)}:${f.range.startLine + 1}:${f.range.startColumn + 1}: ${f.code} ${terminalInline(f.message)}`,
      ...f.related.map(
        (x) =>
          `    ${terminalInline(x.file ?? r.file)}:${x.range.startLine + 1}:${x.range.startColumn + 1}: ${terminalInline(x.message)}`,
      ),
    ]),
  );
  return [...findings, ...results.flatMap((r) => (r.unanalysed ?? []).map((u) => unanalysedLine(r.file, u)))];
}

export function toJson(results: readonly FileFindings[]): object[] {
  const findings: object[] = results.flatMap((r) =>
    r.findings.map((f) => ({
      file: r.file,
      ...oneBased(f.range),
      code: f.code,
      severity: f.severity,
      message: f.message,
      related: f.related.map((x) => ({
        ...(x.file ? { file: x.file } : {}),
        ...oneBased(x.range),
        message: x.message,
      })),
      fixes: f.fixes.map((fix) => ({
        title: fix.title,
        edits: fix.edits.map((e) => ({ ...oneBased(e.range), newText: e.newText })),
      })),
    })),
  );
  // After every finding, so readers that take the first entries as findings keep working.
  const unanalysed = results.flatMap((r) =>
    (r.unanalysed ?? []).map((u) => ({
      file: r.file,
      ...(u.line === undefined ? {} : { line: u.line + 1, column: 1 }),
      notAnalysed: u.reason,
      partial: !u.whole,
      message: u.message,
    })),
  );
  return [...findings, ...unanalysed];
}

/** GitHub Actions escapes a workflow command's message (`%`, CR, LF) and, in properties, also `:` and `,`. */
function githubData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
function githubProperty(text: string): string {
  return githubData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

const GITHUB_LEVEL = { error: 'error', warning: 'warning', info: 'notice' } as const;

/**
 * GitHub Actions workflow commands (`::error file=...,line=...,col=...::message`), which annotate the lines of a
 * pull request; a file not fully analysed is a warning on that file.
 */
export function githubLines(results: readonly FileFindings[]): string[] {
  const findings = results.flatMap((r) =>
    r.findings.map((f) => {
      const { line, column, endLine, endColumn } = oneBased(f.range);
      const where = `file=${githubProperty(r.file)},line=${line},col=${column},endLine=${endLine},endColumn=${endColumn}`;
      return `::${GITHUB_LEVEL[f.severity]} ${where},title=${githubProperty(f.code)}::${githubData(`${f.code} ${f.message}`)}`;
    }),
  );
  const unanalysed = results.flatMap((r) =>
    (r.unanalysed ?? []).map((u) => {
      const where = `file=${githubProperty(r.file)}${u.line === undefined ? '' : `,line=${u.line + 1}`}`;
      return `::warning ${where},title=${u.whole ? 'not analysed' : 'partly analysed'}::${githubData(u.message)}`;
    }),
  );
  return [...findings, ...unanalysed];
}

const LEVEL = { error: 'error', warning: 'warning', info: 'note' } as const;

export function toSarif(results: readonly FileFindings[], version: string): object {
  const uri = (file: string) => file.split('\\').join('/');
  const region = (r: SourceRange) => ({
    startLine: r.startLine + 1,
    startColumn: r.startColumn + 1,
    endLine: r.endLine + 1,
    endColumn: r.endColumn + 1,
  });
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
              help: {
                text: `${rule.summary} See docs/rules/${rule.code}.md.`,
                markdown: `${rule.summary} See [docs/rules/${rule.code}.md](docs/rules/${rule.code}.md).`,
              },
              defaultConfiguration: { level: LEVEL[rule.severity] },
            })),
          },
        },
        invocations: [
          {
            executionSuccessful: true,
            toolExecutionNotifications: results.flatMap((r) =>
              (r.unanalysed ?? []).map((u) => ({
                level: 'warning',
                descriptor: { id: u.reason },
                message: { text: `${u.whole ? 'Not analysed' : 'Partly analysed'}: ${u.message}` },
                locations: [
                  {
                    physicalLocation: {
                      artifactLocation: { uri: uri(r.file) },
                      ...(u.line === undefined ? {} : { region: { startLine: u.line + 1 } }),
                    },
                  },
                ],
              })),
            ),
          },
        ],
        results: results.flatMap((r) =>
          r.findings.map((f) => ({
            ruleId: f.code,
            ruleIndex: RULES.findIndex((rule) => rule.code === f.code),
            level: LEVEL[f.severity],
            message: { text: f.message },
            locations: [{ physicalLocation: { artifactLocation: { uri: uri(r.file) }, region: region(f.range) } }],
            relatedLocations: f.related.map((x, i) => ({
              id: i,
              message: { text: x.message },
              physicalLocation: { artifactLocation: { uri: uri(x.file ?? r.file) }, region: region(x.range) },
            })),
            // The evidence as a path, source to sink: the finding, then each related place in the order it was found.
            ...(f.related.length > 0
              ? {
                  codeFlows: [
                    {
                      threadFlows: [
                        {
                          locations: [
                            {
                              location: {
                                message: { text: f.code },
                                physicalLocation: { artifactLocation: { uri: uri(r.file) }, region: region(f.range) },
                              },
                            },
                            ...f.related.map((x) => ({
                              location: {
                                message: { text: x.message },
                                physicalLocation: {
                                  artifactLocation: { uri: uri(x.file ?? r.file) },
                                  region: region(x.range),
                                },
                              },
                            })),
                          ],
                        },
                      ],
                    },
                  ],
                }
              : {}),
            fixes: f.fixes.map((fix) => ({
              description: { text: fix.title },
              artifactChanges: [
                {
                  artifactLocation: { uri: uri(r.file) },
                  replacements: fix.edits.map((e) => ({
                    deletedRegion: region(e.range),
                    insertedContent: { text: e.newText },
                  })),
                },
              ],
            })),
          })),
        ),
      },
    ],
  };
}

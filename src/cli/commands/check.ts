// `check <files or folders>`: the gradient-scaling linter (CP001-CP008) on Python files and DeepSpeed JSON
// configs, with linter, JSON and SARIF output, rule selection, and a corpus mode that scores labelled examples.
import { basename, relative, resolve, sep } from 'node:path';
import {
  isRuleCode,
  Program,
  type AnalysisOptions,
  parseCorpusHeader,
  confusionTable,
  formatConfusionTable,
  RULES,
  type AnalysisResult,
  type CorpusOutcome,
  type Finding,
  type RuleCode,
} from '../../analysis/index';
import { terminalInline } from '../terminal-text';
import { UsageError, defineCommand, type CliCommand, type CliIo } from '../command';
import { loadPythonParser } from '../python-parser';
import {
  githubLines,
  humanLines,
  OUTPUT_FORMATS,
  toJson,
  toSarif,
  type FileFindings,
  type OutputFormat,
} from '../check-format';
import { choiceFlag, flagValue, positiveIntegerFlag } from '../flag-values';
import { globMatcher } from '../glob';
import { startProgress, type Progress } from '../progress';
import { TOOL_VERSION } from '../version';
import { pythonAccepts, rewordAsUnparsed } from '../python-ast';
import { checkFile, collectFiles, readChecked, readSource, withReadNotes } from '../check-files';

/**
 * The Python files checked together, as one program: a summing helper in one file is judged at its callers in the
 * others (see analysis/program.ts). Files are named by their path relative to the working folder, as printed.
 */
async function checkProgram(
  files: readonly string[],
  roots: readonly string[],
  options: AnalysisOptions,
  progress: Progress,
  manifests: readonly string[] = [],
): Promise<Map<string, AnalysisResult>> {
  const program = new Program(await loadPythonParser(), options);
  const reads = new Map<string, { text: string; notes: string[] }>();
  const shownOf = (file: string) => relative(process.cwd(), file) || file;
  for (const manifest of manifests) {
    const read = readChecked(manifest);
    if (!('result' in read)) program.setManifest(shownOf(manifest), read.text);
  }
  const python = files.filter((f) => f.endsWith('.py'));
  for (const [index, file] of python.entries()) {
    progress.update(index, python.length, shownOf(file));
    const read = readChecked(file);
    if ('result' in read) continue;
    reads.set(file, read);
    // Whether a file is test code is read from its path inside the folder the user named, not above it.
    const abs = resolve(file);
    const root = roots.find((r) => abs.startsWith(`${r}${sep}`));
    program.setFile(shownOf(file), read.text, root ? relative(root, abs) : basename(abs));
  }
  const analysed = program.analyzeAll();
  const out = new Map<string, AnalysisResult>();
  for (const [file, read] of reads) {
    const result = analysed.get(shownOf(file));
    if (result) out.set(file, withReadNotes(result, read.text, read.notes));
  }
  return out;
}

/** Files whose syntax errors Python itself accepts: their skipped statements are what tree-sitter cannot read. */
function confirmSyntaxErrors(results: FileFindings[], paths: readonly string[]): void {
  const asked = results
    .map((r, i) => ({ i, path: paths[i] }))
    .filter(({ i, path }) => path.endsWith('.py') && results[i].unanalysed?.some((u) => u.reason === 'syntax-error'));
  const answer = pythonAccepts(asked.map((a) => a.path));
  if (!answer) return;
  asked.forEach(({ i }, k) => {
    if (!answer.valid[k]) return;
    const r = results[i];
    results[i] = {
      ...r,
      unanalysed: r.unanalysed!.map((u) =>
        u.reason === 'syntax-error'
          ? { ...u, reason: 'unparsed', message: rewordAsUnparsed(u.message, answer.version) }
          : u,
      ),
    };
  });
}

function selectRules(flags: Map<string, string[]>): (f: Finding) => boolean {
  // Every bad code of --rule and --ignore is reported at once, so one run shows all there is to fix.
  const problems: string[] = [];
  const parse = (name: string): RuleCode[] =>
    (flags.get(name) ?? [])
      .flatMap((v) => v.split(','))
      .map((v) => v.trim().toUpperCase())
      .filter((v) => v !== '')
      .filter((v): v is RuleCode => {
        if (!isRuleCode(v)) problems.push(`--${name} ${v}: not a rule code (${RULES.map((r) => r.code).join(', ')})`);
        return isRuleCode(v);
      });
  const only = parse('rule');
  const ignored = parse('ignore');
  if (problems.length > 0) throw new UsageError(problems[0], problems.slice(1));
  return (f) => (only.length === 0 || only.includes(f.code)) && !ignored.includes(f.code);
}

/** --output-format, or its short forms --json and --sarif; two that disagree are a usage error. */
function outputFormat(flags: Map<string, string[]>): OutputFormat {
  const named = flagValue(flags, 'output-format');
  const chosen = [
    ...(named === undefined ? [] : [choiceFlag('output-format', named, OUTPUT_FORMATS)]),
    ...(flags.has('json') ? (['json'] as const) : []),
    ...(flags.has('sarif') ? (['sarif'] as const) : []),
  ];
  const distinct = [...new Set(chosen)];
  if (distinct.length > 1) throw new UsageError(`choose one output format, not ${distinct.join(' and ')}`);
  return distinct[0] ?? 'text';
}

async function runCorpus(
  dirs: readonly string[],
  keep: (f: Finding) => boolean,
  io: CliIo,
  json: boolean,
): Promise<number> {
  const outcomes: CorpusOutcome[] = [];
  const misses: string[] = [];
  for (const file of collectFiles(dirs).filter((f) => f.endsWith('.py'))) {
    const { text } = readSource(file);
    const expected = parseCorpusHeader(text);
    if (!expected) continue;
    const result = await checkFile(file, { worldSize: expected.worldSize });
    const found = result.findings.filter(keep).map((f) => ({ code: f.code, line: f.range.startLine + 1 }));
    const outcome = { file, expected, found };
    outcomes.push(outcome);
    const ok =
      expected.code === 'none'
        ? found.length === 0
        : found.length === 1 && found[0].code === expected.code && found[0].line === expected.line;
    if (!ok)
      misses.push(
        `${file}: expected ${expected.code}${expected.line ? `@${expected.line}` : ''}, found ${found.map((f) => `${f.code}@${f.line}`).join(' ') || 'nothing'}`,
      );
  }
  if (outcomes.length === 0) throw new UsageError(`no labelled files (# expect: headers) under ${dirs.join(', ')}`);
  const rows = confusionTable(outcomes);
  if (json) io.stdout(JSON.stringify({ files: outcomes.length, rows, misses }, null, 2));
  else
    io.stdout(
      [
        `${outcomes.length} labelled files`,
        formatConfusionTable(rows),
        ...(misses.length ? ['', 'Mismatches:', ...misses] : []),
      ].join('\n'),
    );
  return misses.length === 0 ? 0 : 1;
}

export const checkCommand: CliCommand = defineCommand({
  name: 'check',
  summary: 'Find sum-vs-average gradient scaling bugs in Python training code and DeepSpeed configs (CP001-CP008)',
  positionals: '<files or folders...>',
  otherForms: ['--corpus <folder> [--json]'],
  description: [
    'Reports gradients summed and not averaged (CP001), averaged twice (CP002), divided by the wrong count (CP003),',
    'psum where pmean was meant (CP004), a linear-scaled learning rate on a sum (CP005), ReduceOp.AVG on gloo (CP006),',
    'DeepSpeed pre-divide settings (CP007) and accumulated micro-batch gradients not averaged (CP008). Folders are',
    'searched for *.py and DeepSpeed *.json configs. A line with `# collective-profiler: ignore[CP001]` silences',
    'that finding. Text output is one `path:line:col: CODE message` line per finding, as ruff and flake8 print.',
  ],
  options: [
    {
      name: 'output-format',
      value: 'format',
      help: OUTPUT_FORMATS.join(' | ') + ' (github: GitHub Actions annotations)',
      default: 'text',
    },
    {
      name: 'json',
      help: 'Short for --output-format json: {file, line, column, endLine, endColumn, code, severity, message, fixes} per finding, then {file, line?, notAnalysed, partial, message} per file not fully analysed',
    },
    { name: 'sarif', help: 'Short for --output-format sarif: SARIF 2.1.0 for code-scanning tools' },
    { name: 'rule', value: 'code', help: 'Report only these rules (or comma-separated)', repeatable: true },
    { name: 'ignore', value: 'code', help: 'Do not report these rules (or comma-separated)', repeatable: true },
    {
      name: 'exclude',
      value: 'glob',
      help: 'Leave out files and folders found under the named folders (a name such as tests, or a path glob such as src/**/legacy_*.py)',
      repeatable: true,
    },
    { name: 'world-size', value: 'n', help: 'Say "8×" instead of "N× (world size)" in messages' },
    {
      name: 'corpus',
      value: 'dir',
      help: 'Score labelled examples (# expect: / # line: headers) and print the confusion table',
      repeatable: true,
    },
    { name: 'exit-zero', help: 'Exit 0 even with findings or files not fully analysed' },
    {
      name: 'hints',
      help: 'Also report what is suspected but not proven (a hard-coded divisor, findings in test code)',
    },
  ],
  epilog: () =>
    [
      'A file that is not fully analysed (a syntax error, too large, too slow to parse, unreadable, not UTF-8) is',
      'named with what was skipped, and never counts as clean. A file that calls no reduction, DDP-style wrapper or',
      'backward pass cannot have a finding and is not parsed. When a file has syntax errors, python3 (or',
      '$COLLECTIVE_PROFILER_PYTHON; "off" for none) is asked once whether Python accepts it.',
      '',
      'Exit status: 0 no findings, 1 findings or files not fully analysed (or corpus mismatches), 2 usage error.',
    ].join('\n'),
  async execute({ flags, positional }, io) {
    const keep = selectRules(flags);
    const format = outputFormat(flags);
    const json = format === 'json';
    const corpus = flags.get('corpus');
    if (corpus) return runCorpus([...corpus, ...positional], keep, io, json);
    if (positional.length === 0) throw new UsageError('check needs at least one file or folder');
    const ws = flags.get('world-size')?.[0];
    // A world size is a rank count: held to the same limit as every other (docs/limits.md).
    const worldSize = ws === undefined ? undefined : positiveIntegerFlag('world-size', ws, 'ranks');
    const excluded = flags.get('exclude');
    const manifests: string[] = [];
    const files = collectFiles(positional, excluded ? globMatcher(excluded) : undefined, manifests);
    const options = { worldSize, hints: flags.has('hints') };
    const progress = startProgress(io, 'check', format === 'text');
    const program = await checkProgram(
      files,
      positional.map((p) => resolve(p)),
      options,
      progress,
      manifests,
    );
    progress.finish();
    const results: FileFindings[] = [];
    for (const file of files) {
      const shown = relative(process.cwd(), file) || file;
      const result = program.get(file) ?? (await checkFile(file, options));
      // What was not analysed is reported with the findings (below); other notes go to stderr now.
      const skipped = new Set((result.unanalysed ?? []).map((u) => u.message));
      for (const note of result.notes)
        if (!skipped.has(note)) io.stderr(`${terminalInline(shown)}: note: ${terminalInline(note)}`);
      results.push({ file: shown, findings: result.findings.filter(keep), unanalysed: result.unanalysed });
    }
    confirmSyntaxErrors(results, files);
    const count = results.reduce((n, r) => n + r.findings.length, 0);
    const partial = results.filter((r) => (r.unanalysed ?? []).length > 0).length;
    const notFully = partial === 0 ? '' : `${partial} file${partial === 1 ? '' : 's'} not fully analysed`;
    if (format === 'json') io.stdout(JSON.stringify(toJson(results), null, 2));
    else if (format === 'sarif') io.stdout(JSON.stringify(toSarif(results, TOOL_VERSION), null, 2));
    else for (const line of format === 'github' ? githubLines(results) : humanLines(results)) io.stdout(line);
    if (format === 'text' || format === 'github')
      io.stderr(
        `${count} finding${count === 1 ? '' : 's'} in ${results.length} file${results.length === 1 ? '' : 's'}${notFully ? `; ${notFully}` : ''}`,
      );
    else if (notFully) io.stderr(notFully);
    return (count > 0 || partial > 0) && !flags.has('exit-zero') ? 1 : 0;
  },
});

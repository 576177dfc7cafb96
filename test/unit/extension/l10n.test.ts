// The extension's user-facing strings go through vscode.l10n.t, so a translation bundle can replace them: every
// notification, quick pick, input box, dialog label, progress title, lens and status bar text in the files that
// talk to VS Code, and the text the pure glue builds (lens titles and tooltips, chart notes, advice, problems),
// which calls the same translator through glue/l10n.ts. Log lines stay English.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { l10n } from './fixtures/fake-vscode';
import { untranslated } from '../l10n-scan';
import { englishL10n, l10n as glueL10n, useL10n } from '../../../src/extension/glue/l10n';
import { bucketTitle, profileTitle } from '../../../src/extension/glue/lens-label';
import { statusBarText } from '../../../src/extension/glue/system-choice';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const EXTENSION = join(ROOT, 'src', 'extension');

/** The text with every `vscode.l10n.t(…)` call removed (balanced parentheses, strings skipped). */
function withoutL10nCalls(text: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const start = text.indexOf('l10n.t(', at);
    if (start < 0) return out + text.slice(at);
    out += text.slice(at, start);
    let depth = 0;
    let i = start + 'l10n.t'.length;
    let quote: string | undefined;
    for (; i < text.length; i++) {
      const c = text[i];
      if (quote) {
        if (c === '\\') i++;
        else if (c === quote) quote = undefined;
      } else if (c === "'" || c === '"' || c === '`') quote = c;
      else if (c === '(') depth++;
      else if (c === ')' && --depth === 0) break;
    }
    at = i + 1;
  }
}

/** The argument text of each call to `name(` in `text`, up to its closing parenthesis. */
function callArguments(text: string, name: RegExp): { index: number; name: string; args: string }[] {
  const calls: { index: number; name: string; args: string }[] = [];
  for (const match of text.matchAll(name)) {
    const open = match.index + match[0].length - 1;
    let depth = 0;
    let i = open;
    for (; i < text.length; i++) {
      if (text[i] === '(') depth++;
      else if (text[i] === ')' && --depth === 0) break;
    }
    calls.push({ index: match.index, name: match[1], args: text.slice(open + 1, i) });
  }
  return calls;
}

/** The first argument of an argument list: up to the first comma outside brackets and strings. */
function firstArgument(args: string): string {
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const c = args[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth--;
    else if (c === ',' && depth === 0) return args.slice(0, i);
  }
  return args;
}

const LITERAL = /['"`]/;
/** Properties and assignments whose value VS Code shows to the user. */
const TEXT_PROPERTY =
  /\b(title|tooltip|prompt|placeHolder|placeholder|openLabel|saveLabel|detail|description)\s*:\s*['"`]|\.(text|tooltip|name)\s*=\s*['"`]|filters:\s*\{\s*['"]/g;
/** Calls whose string arguments VS Code shows: notifications, progress titles and progress messages. */
const TEXT_CALL = /\b(show(?:Information|Warning|Error)Message|withCancellableProgress|report)\(/g;

/** `file:line: what` for every user-facing literal outside vscode.l10n.t in one source text. */
export function unlocalized(file: string, source: string): string[] {
  // Comments say why, not what the user reads.
  const text = source
    .replace(/^\s*\/\/.*$/gm, (line) => ' '.repeat(line.length))
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '));
  const lineOf = (index: number): number => text.slice(0, index).split('\n').length;
  const problems: string[] = [];
  const stripped = withoutL10nCalls(text);
  for (const match of stripped.matchAll(TEXT_PROPERTY)) {
    // The stripped text is shorter: find the same snippet in the original for its line.
    const snippet = stripped.slice(match.index, stripped.indexOf('\n', match.index));
    problems.push(`${file}:${lineOf(text.indexOf(snippet))}: ${snippet.trim()}`);
  }
  for (const call of callArguments(text, TEXT_CALL)) {
    // A notification's buttons are shown too; a progress shows only its title or message, not the work after it.
    const shown = /^show/.test(call.name) ? call.args : firstArgument(call.args);
    if (LITERAL.test(withoutL10nCalls(shown)))
      problems.push(`${file}:${lineOf(call.index)}: ${text.slice(call.index, text.indexOf('\n', call.index)).trim()}`);
  }
  return problems;
}

test('every user-facing string of the files that import vscode goes through vscode.l10n.t', () => {
  const files = sourceFiles(EXTENSION).filter((f) =>
    /^import \* as vscode from 'vscode';$/m.test(readFileSync(f, 'utf8')),
  );
  assert.ok(files.length >= 15, `${files.length} files import vscode`);
  const problems = files.flatMap((f) => unlocalized(relative(ROOT, f), readFileSync(f, 'utf8')));
  assert.deepEqual(problems, []);
  const calls = files.reduce((n, f) => n + (readFileSync(f, 'utf8').match(/l10n\.t\(/g) ?? []).length, 0);
  assert.ok(calls >= 60, `${calls} l10n.t calls`);
});

test('the scan finds literals in notifications, pickers, dialogs, progress and status bar texts', () => {
  const source = [
    "void vscode.window.showInformationMessage('Done.');",
    'void vscode.window.showWarningMessage(vscode.l10n.t("{0} exists", f), { modal: true }, "Replace");',
    'await withCancellableProgress(`Opening ${name}`, work);',
    "report('reading');",
    "const pick = await vscode.window.showQuickPick(items, { title: 'Pick one' });",
    "item.tooltip = 'Click';",
    "filters: { 'All files': ['*'] },",
    // These are fine: translated, or not shown.
    "void vscode.window.showInformationMessage(vscode.l10n.t('Done {0}.', 'x'));",
    "const box = { title: vscode.l10n.t('Nodes of {0}', name), command: 'collectiveProfiler.showLog' };",
    "ctx.log.info('not shown in the UI');",
    "await withCancellableProgress(vscode.l10n.t('Work'), async () => ctx.log.info('inside the work'));",
  ].join('\n');
  assert.deepEqual(
    unlocalized('a.ts', source).map((p) => p.split(':')[1]),
    ['5', '6', '7', '1', '2', '3', '4'],
  );
});

test('the test double of vscode.l10n.t fills positional and named arguments as VS Code does', () => {
  assert.equal(l10n.t('{0} ranks on {1}…', 8, 'nccl'), '8 ranks on nccl…');
  assert.equal(l10n.t('Hello {name}', { name: 'world' }), 'Hello world');
  assert.equal(l10n.t('no arguments {0}'), 'no arguments {0}');
});

/**
 * Literals in src/extension that are not UI text, each with the reason it stays as it is: `path: text` (the text as
 * the scan prints it, or its start), with the path relative to src/extension.
 */
const NOT_UI: Readonly<Record<string, string>> = {
  "core.ts: 'Collective Profiler'": "the output channel's name is the product's name",
  "glue/diagnostics-map.ts: 'Collective Profiler'": "a diagnostic's source is the product's name",
  "handlers/measurements.ts: 'Collective Profiler'": "a diagnostic's source is the product's name",
  'glue/diagnostics-map.ts: `docs/rules/${code}.md`': 'a path in the documentation',
  'glue/example-copy.ts: `${indent}preset: ${name}': "a YAML comment written into the user's copy of the example",
  'glue/example-copy.ts: `# An untitled copy': "a YAML comment written into the user's copy of the example",
  "glue/training-assumptions.ts: 'the Assumptions card of the charts panel":
    "the source named in the run assembler's errors, which stay English like every thrown config error",
  'glue/trace-file.ts: `${skipped} events were not complete spans': 'a warning that goes to the log only',
  'handlers/workspace-check.ts: `cannot read: ':
    'why a file was not analysed: written to the log only (the notification counts such files and offers Show Log)',
  'handlers/workspace-check.ts: `${(sizeBytes / 1e6).toFixed(1)} MB is past':
    'why a file was not analysed: written to the log only (the notification counts such files and offers Show Log)',
  "handlers/workspace-check.ts: 'the file is not valid UTF-8":
    'why a file was not analysed: written to the log only (the notification counts such files and offers Show Log)',
  'panels/html.ts: "default-src': 'a Content-Security-Policy directive',
  'panels/html.ts: `script-src': 'a Content-Security-Policy directive',
  'panels/html.ts: `style-src': 'a Content-Security-Policy directive',
  'panels/html.ts: `img-src': 'a Content-Security-Policy directive',
  'panels/html.ts: "base-uri': 'a Content-Security-Policy directive',
  'panels/html.ts: "form-action': 'a Content-Security-Policy directive',
  'panels/html.ts: `\\n  <link rel="stylesheet"': "the page's markup; its text comes from the localised table",
  'panels/html.ts: `<!DOCTYPE html>': "the page's markup; its text comes from the localised table",
  "panels/html.ts: 'the nonce must be": 'an invariant of what VS Code hands the page builder: a bug report, not advice',
  'panels/html.ts: `invalid CSP source':
    'an invariant of what VS Code hands the page builder: a bug report, not advice',
  'panels/html.ts: `invalid resource URI':
    'an invariant of what VS Code hands the page builder: a bug report, not advice',
  'panels/panel-styles.ts: `\n': 'a style sheet',
  'settings.ts: `expected ${what}, got': "a setting's problem, written to the log only (core.ts)",
  "settings.ts: 'a preset name or a file path'": "a setting's problem, written to the log only (core.ts)",
  "settings.ts: 'true or false'": "a setting's problem, written to the log only (core.ts)",
  "settings.ts: 'expected an object such as": "a setting's problem, written to the log only (core.ts)",
  'settings.ts: `"${code}" is not a rule code': "a setting's problem, written to the log only (core.ts)",
  'settings.ts: `severity must be one of': "a setting's problem, written to the log only (core.ts)",
  "settings.ts: 'a positive number of MB'": "a setting's problem, written to the log only (core.ts)",
  "settings.ts: 'an integer from ": "a setting's problem, written to the log only (core.ts)",
  "settings.ts: 'an NCCL release such as": "a setting's problem, written to the log only (core.ts)",
  'settings.ts: \'"direct" or "torchrun"\'': "a setting's problem, written to the log only (core.ts)",
  'settings.ts: `one of ${TRACE_DETAILS': "a setting's problem, written to the log only (core.ts)",
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

test('every literal of src/extension that reaches the user goes through l10n.t: panel messages, errors, prose', () => {
  // The command wrapper shows every error's message in a notification, so errors are text here (errorsAreText).
  const found = sourceFiles(EXTENSION).flatMap((f) =>
    untranslated(relative(EXTENSION, f).split('\\').join('/'), readFileSync(f, 'utf8'), { errorsAreText: true }),
  );
  const listed = (problem: string, key: string): boolean => {
    const [file, , text] = problem.split(/:(\d+): /);
    return `${file}: ${text}`.startsWith(key);
  };
  const problems = found.filter((p) => !Object.keys(NOT_UI).some((key) => listed(p, key)));
  assert.deepEqual(problems, []);
  // A listed literal that is gone takes its entry with it, so the list cannot hide a new text under an old key.
  const stale = Object.keys(NOT_UI).filter((key) => !found.some((p) => listed(p, key)));
  assert.deepEqual(stale, []);
  const glue = join(EXTENSION, 'glue');
  const calls = readdirSync(glue).reduce(
    (n, f) => n + (readFileSync(join(glue, f), 'utf8').match(/\bl10n\.t\(/g) ?? []).length,
    0,
  );
  assert.ok(calls >= 200, `${calls} l10n.t calls in the glue`);
});

test('the host scan finds messages posted to a panel, shown errors and English filled into a template', () => {
  const source = [
    "wired.post({ type: 'error', message: 'Nothing to restore: run a profile again.' });",
    'throw new Error(`cannot reload a trace from ${scheme}:`);',
    "throw new MeasurementParseError('a lane needs an id', 1, 1, fileName);",
    "const m = vscode.l10n.t('cannot read {0}', kind === 'model' ? 'model config' : 'system file');",
    'const label = `${system.label} (from the log)`;',
    // These are fine: translated, the log, identifiers, an error's position arguments.
    "wired.post({ type: 'error', message: vscode.l10n.t('Nothing to restore.') });",
    "ctx.log.trace(`Analysed ${path} in ${ms} ms: ${trusted ? 'fully trusted' : 'not trusted'}`);",
    "throw new MeasurementParseError(l10n.t('a lane needs an id'), 1, 1, 'trace file.json');",
    "const e = vscode.l10n.t('{0} of {1}', count, name);",
  ].join('\n');
  assert.deepEqual(
    untranslated('a.ts', source, { errorsAreText: true }).map((p) => p.split(':')[1]),
    ['1', '2', '3', '4', '4', '5'],
  );
  // In the panels an error goes to the log: only the message and the prose are text there.
  assert.deepEqual(
    untranslated('a.ts', source).map((p) => p.split(':')[1]),
    ['1', '4', '4', '5'],
  );
});

test('activation hands the glue vscode.l10n: lens and status bar texts follow the display language', () => {
  try {
    useL10n({ t: (message, ...args) => englishL10n.t(`«${message}»`, ...args) });
    assert.equal(statusBarText('', false), '«$(warning) No system»');
    assert.match(profileTitle({ stepTimeUs: 412_000, exposedCommUs: 38_000 }), /^«\$\(pulse\) Profile · step ≈ 412 ms/);
    assert.match(
      bucketTitle({ currentBytes: 25 * 2 ** 20, currentFraction: 0.5, peakBusbwGBps: 400 }),
      /^«bucket_cap_mb/,
    );
    assert.equal(glueL10n.t('{1} of {0}', 'a', 2), '«2 of a»');
  } finally {
    useL10n(englishL10n);
  }
  assert.equal(statusBarText('', false), '$(warning) No system');
});

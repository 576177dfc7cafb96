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

function extensionFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return extensionFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

test('every user-facing string of the files that import vscode goes through vscode.l10n.t', () => {
  const files = extensionFiles(EXTENSION).filter((f) =>
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

/** Glue literals that are not UI text, each with the reason it stays as it is. */
const GLUE_NOT_UI: Readonly<Record<string, string>> = {
  "diagnostics-map.ts: 'Collective Profiler'": "a diagnostic's source is the product's name",
  'diagnostics-map.ts: `docs/rules/${code}.md`': 'a path in the documentation',
  'example-copy.ts: `${indent}preset: ${name}': "a YAML comment written into the user's copy of the example",
  'example-copy.ts: `# An untitled copy': "a YAML comment written into the user's copy of the example",
  "simulated-trace.ts: 'launch and base latency": 'a span name: trace data, exported with the trace',
  "simulated-trace.ts: 'host launch pacing": 'a span name: trace data, exported with the trace',
  'simulated-trace.ts: `the first ${trace.spans.length} spans': 'a trace fact: trace data, exported with the trace',
  'simulated-trace.ts: `${mirrored.mirroredRanks} ranks drawn': 'a trace fact: trace data, exported with the trace',
  "training-assumptions.ts: 'the Assumptions card of the charts panel":
    "the source named in the run assembler's errors, which stay English like every thrown config error",
  'trace-file.ts: `${skipped} events were not complete spans': 'a warning that goes to the log only',
};

test('the text the pure glue builds for the user goes through the glue translator', () => {
  const dir = join(EXTENSION, 'glue');
  const problems = readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .flatMap((f) => untranslated(f, readFileSync(join(dir, f), 'utf8')))
    .filter((p) => {
      const [file, , text] = p.split(/:(\d+): /);
      return !Object.keys(GLUE_NOT_UI).some((key) => key === `${file}: ${text}` || `${file}: ${text}`.startsWith(key));
    });
  assert.deepEqual(problems, []);
  const calls = readdirSync(dir).reduce(
    (n, f) => n + (readFileSync(join(dir, f), 'utf8').match(/\bl10n\.t\(/g) ?? []).length,
    0,
  );
  assert.ok(calls >= 200, `${calls} l10n.t calls in the glue`);
});

test('activation hands the glue vscode.l10n: lens and status bar texts follow the display language', () => {
  try {
    useL10n({ t: (message, ...args) => englishL10n.t(`«${message}»`, ...args) });
    assert.equal(statusBarText('8× H100', 2, true), '«$(server) 8× H100 × 2 nodes»');
    assert.match(profileTitle({ stepTimeUs: 412_000, exposedCommUs: 38_000 }), /^«\$\(pulse\) Profile · step ≈ 412 ms/);
    assert.match(
      bucketTitle({ currentBytes: 25 * 2 ** 20, currentFraction: 0.5, peakBusbwGBps: 400 }),
      /^«bucket_cap_mb/,
    );
    assert.equal(glueL10n.t('{1} of {0}', 'a', 2), '«2 of a»');
  } finally {
    useL10n(englishL10n);
  }
  assert.equal(statusBarText('8× H100', 2, true), '$(server) 8× H100 × 2 nodes');
});

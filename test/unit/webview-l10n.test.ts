// The panels' labels are translated: every user-facing string in webview/ goes through `t` (webview/shared/strings.ts),
// which reads the table the host localised with vscode.l10n. The scan walks each file's syntax tree and reports a
// literal where the user reads it: an element's text, a title, aria-label, placeholder or chart label, a textContent,
// a label/value pair, or any prose (two words or more) outside the log, errors and the `t` calls themselves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { untranslated } from './l10n-scan';
import { WEBVIEW_STRINGS, readWebviewStrings, formatWebviewString, webviewStringsJson } from '../../src/protocol';
import { englishL10n } from '../../src/extension/glue/l10n';
import { webviewStrings } from '../../src/extension/glue/webview-strings';

const ROOT = join(import.meta.dirname, '..', '..');

function webviewFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return webviewFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

test('every user-facing string in webview/ goes through t, the table the host localises', () => {
  const files = webviewFiles(join(ROOT, 'webview'));
  assert.ok(files.length >= 25, `${files.length} webview files`);
  const problems = files.flatMap((f) => untranslated(relative(ROOT, f), readFileSync(f, 'utf8')));
  assert.deepEqual(problems, []);
  const calls = files.reduce((n, f) => n + (readFileSync(f, 'utf8').match(/\bt\(/g) ?? []).length, 0);
  assert.ok(calls >= 100, `${calls} t() calls`);
});

test('the scan finds literals in element text, attributes, chart labels, assignments, pairs and prose', () => {
  const source = [
    "const a = el('span', { class: 'title' }, 'Trace timeline');",
    "const b = el('vscode-textfield', { placeholder: 'Search spans', 'aria-label': 'Search' });",
    "const c = { title: { display: true, text: 'nodes' } };",
    "title.textContent = data.title || 'Collective charts';",
    "facts.push(['phase', value]);",
    'message = `Receiving ${n} spans…`;',
    'ctx.fillText(`peak ${peak} GB/s`, 0, 0);',
    "const hint = line.folded ? 'Unfold lane' : 'Fold lane';",
    // These are fine: translated, markup, styling, identifiers, the log and errors.
    "const d = el('span', { class: 'title muted', 'data-key': 'exchange' }, t('Trace timeline'));",
    "ctx.font = '11px sans-serif';",
    "log('error', `chart ${id} failed to draw`);",
    'throw new Error(`span ${i} is on unknown lane`);',
    "if (msg.type === 'trace case') return;",
    "const svgRoot = svg('svg', { preserveAspectRatio: 'xMidYMid meet' });",
    "import '@vscode-elements/elements/dist/vscode-button/index.js';",
    "const colours = [['--vscode-charts-blue', '#3794ff'], ['style', 'class']];",
  ].join('\n');
  assert.deepEqual(
    untranslated('a.ts', source).map((p) => p.split(':')[1]),
    ['1', '2', '2', '3', '4', '5', '6', '7', '8', '8'],
  );
});

test('the host table has every template the panels use, each translated from its own English key', () => {
  const english = webviewStrings(englishL10n);
  assert.deepEqual(Object.keys(english).sort(), [...WEBVIEW_STRINGS].sort());
  for (const [key, value] of Object.entries(english)) assert.equal(value, key, `the entry for "${key}"`);
  // A translator sees each template once: the host calls l10n.t with it, and nothing else.
  const seen: string[] = [];
  webviewStrings({ t: (message) => (seen.push(message), `«${message}»`) });
  assert.deepEqual(seen.sort(), [...WEBVIEW_STRINGS].sort());
  // Every template is used by a panel: a label removed from the panels leaves the table too.
  const sources = webviewFiles(join(ROOT, 'webview'))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  const unused = WEBVIEW_STRINGS.filter(
    (key) =>
      !sources.includes(`t(${JSON.stringify(key)}`) &&
      !sources.includes(`t('${key}'`) &&
      !new RegExp(`t\\(\\s*'${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}'`).test(sources),
  );
  assert.deepEqual(unused, []);
});

test('the page table is read defensively and filled like vscode.l10n.t', () => {
  const json = webviewStringsJson({ ...webviewStrings(englishL10n), 'Reset zoom': 'Zoom </script> zurücksetzen' });
  assert.ok(!json.includes('</'), json.slice(0, 80));
  assert.equal(readWebviewStrings(json)['Reset zoom'], 'Zoom </script> zurücksetzen');
  assert.deepEqual(readWebviewStrings('{"not a template": "x", "Reset zoom": 3}'), {});
  assert.deepEqual(readWebviewStrings('[1]'), {});
  assert.deepEqual(readWebviewStrings('{'), {});
  assert.deepEqual(readWebviewStrings(undefined), {});
  assert.equal(formatWebviewString('{1} of {0}, {2}', ['a', 5]), '5 of a, {2}');
  assert.equal(formatWebviewString('{0} %', []), '{0} %');
});

// The package manifest is code: these tests hold it to the command table, the settings reader, the files it
// names, and VS Code's habits (lazy activation, categories, machine-scoped executables, limited trust).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SETTING_KEYS } from '../../../src/extension/settings';
import { RULES, RULE_CODES } from '../../../src/analysis/rules';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const contributes = pkg.contributes;
const commandIds: string[] = contributes.commands.map((c: { command: string }) => c.command);

/** The ids in the COMMANDS table of commands.ts (read as text: the module imports vscode). */
function tableIds(): string[] {
  const text = readFileSync(join(ROOT, 'src', 'extension', 'commands.ts'), 'utf8');
  const table = text.slice(text.indexOf('export const COMMANDS'), text.indexOf('} satisfies'));
  return [...table.matchAll(/'(collectiveProfiler\.\w+)':/g)].map((m) => m[1]);
}

test('every contributed command has a handler in the command table, and every handler a contribution', () => {
  const ids = tableIds();
  assert.ok(ids.length >= 12);
  assert.deepEqual([...ids].sort(), [...commandIds].sort());
  assert.equal(new Set(commandIds).size, commandIds.length, 'no duplicate command ids');
});

test('the twelve commands of the issue are there, each with the category, a title and a codicon', () => {
  const titles = contributes.commands.map((c: { title: string }) => c.title);
  for (const title of [
    'Profile Training Config',
    'Profile AllReduce at Cursor',
    'Sweep Message Sizes',
    'Compare Algorithms',
    'Sweep Bucket Size',
    'Select System',
    'Open Trace…',
    'Import Measurements…',
    'Export Trace',
    'Run on This Machine',
    'Check Gradient Scaling in Workspace',
    'Show Log',
  ]) {
    assert.ok(titles.includes(title), `missing command "${title}"`);
  }
  for (const c of contributes.commands) {
    assert.equal(c.category, 'Collective Profiler', c.command);
    assert.match(c.icon ?? '', /^\$\([a-z-]+\)$/, `${c.command} has a codicon`);
  }
});

test('menus name only contributed commands, and when-clauses are non-empty', () => {
  for (const [menu, items] of Object.entries(contributes.menus) as [string, { command: string; when?: string }[]][]) {
    for (const item of items) {
      assert.ok(commandIds.includes(item.command), `${menu} names unknown ${item.command}`);
      if (item.when !== undefined) assert.ok(item.when.trim().length > 0, `${menu}/${item.command} has an empty when`);
    }
  }
  assert.ok(contributes.menus['editor/title'].length > 0 && contributes.menus['explorer/context'].length > 0);
});

test('settings match the settings reader, all have descriptions and scopes, and executables are machine-scoped', () => {
  const properties = contributes.configuration.properties as Record<
    string,
    { scope?: string; description?: string; markdownDescription?: string }
  >;
  const declared = Object.keys(properties)
    .map((k) => k.replace(/^collectiveProfiler\./, ''))
    .sort();
  assert.deepEqual(declared, [...SETTING_KEYS].sort());
  for (const [key, p] of Object.entries(properties)) {
    assert.ok((p.markdownDescription ?? p.description ?? '').length > 20, `${key} needs a description`);
    assert.ok(p.scope, `${key} needs a scope`);
  }
  for (const key of ['native.pythonPath', 'native.torchrunPath', 'native.launcher'])
    assert.equal(properties[`collectiveProfiler.${key}`].scope, 'machine', key);
});

test('activation is lazy: no "*", no startup event, only the events that need it', () => {
  const events: string[] = pkg.activationEvents;
  assert.ok(!events.includes('*') && !events.includes('onStartupFinished'));
  for (const e of events) assert.match(e, /^(onLanguage:|workspaceContains:|onWebviewPanel:|onCustomEditor:)/, e);
  for (const panel of ['timeline', 'charts', 'topology'])
    assert.ok(events.includes(`onWebviewPanel:collectiveProfiler.${panel}`));
  for (const editor of contributes.customEditors) assert.ok(events.includes(`onCustomEditor:${editor.viewType}`));
  assert.ok(events.includes('onLanguage:python'));
});

test('untrusted workspaces get limited support, with the executables restricted', () => {
  const trust = pkg.capabilities.untrustedWorkspaces;
  assert.equal(trust.supported, 'limited');
  assert.match(trust.description, /native engine/);
  for (const key of ['collectiveProfiler.native.pythonPath', 'collectiveProfiler.native.torchrunPath'])
    assert.ok(trust.restrictedConfigurations.includes(key));
});

test('languages have grammars, and every file the manifest names exists', () => {
  const languages = contributes.languages.map((l: { id: string }) => l.id);
  for (const g of contributes.grammars) {
    assert.ok(languages.includes(g.language));
    const grammar = JSON.parse(readFileSync(join(ROOT, g.path), 'utf8'));
    assert.equal(grammar.scopeName, g.scopeName);
  }
  for (const l of contributes.languages)
    if (l.configuration) assert.ok(existsSync(join(ROOT, l.configuration)), l.configuration);
  for (const v of [...contributes.jsonValidation, ...contributes.yamlValidation])
    assert.ok(existsSync(join(ROOT, v.url)), `${v.url} (schema) exists`);
  assert.ok(existsSync(join(ROOT, pkg.icon)));
  for (const step of contributes.walkthroughs[0].steps) {
    assert.ok(existsSync(join(ROOT, step.media.markdown)), step.media.markdown);
    for (const m of step.description.matchAll(/command:([\w.]+)/g))
      assert.ok(commandIds.includes(m[1]), `walkthrough links ${m[1]}`);
    for (const e of step.completionEvents) assert.ok(commandIds.includes(e.replace(/^onCommand:/, '')), e);
  }
});

test('the icon is a 128×128 PNG', () => {
  const png = readFileSync(join(ROOT, pkg.icon));
  assert.equal(png.subarray(1, 4).toString(), 'PNG');
  assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [128, 128]);
});

test('the per-rule severity setting lists exactly the rules of analysis/rules.ts, each described by its summary', () => {
  type RuleSetting = { enum: string[]; default: string; description: string };
  const setting = contributes.configuration.properties['collectiveProfiler.diagnostics.rules'] as {
    properties: Record<string, RuleSetting>;
  };
  assert.ok(setting, 'the rules setting is contributed');
  assert.deepEqual(Object.keys(setting.properties), [...RULE_CODES]);
  for (const rule of RULES) {
    const property = setting.properties[rule.code];
    assert.equal(property.description, rule.summary, `${rule.code}: package.json must repeat rules.ts`);
    assert.equal(property.default, 'default');
    assert.deepEqual(property.enum, ['default', 'error', 'warning', 'information', 'hint', 'off']);
  }
});

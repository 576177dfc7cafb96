// The package manifest is code: these tests hold it to the command table, the settings reader, the files it
// names, and VS Code's habits (lazy activation, categories, machine-scoped executables, limited trust).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { SETTING_KEYS } from '../../../src/extension/settings';
import { RULES, RULE_CODES } from '../../../src/analysis/rules';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const rawPkg: unknown = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const nls = JSON.parse(readFileSync(join(ROOT, 'package.nls.json'), 'utf8')) as Record<string, string>;
/** VS Code's own rule: a string value that is exactly `%key%` is replaced by package.nls.json's entry. */
const NLS_PLACEHOLDER = /^%([\w.-]+)%$/;

/** Every `%key%` of a manifest value, depth first. */
function placeholders(value: unknown): string[] {
  if (typeof value === 'string') {
    const match = NLS_PLACEHOLDER.exec(value);
    return match ? [match[1]] : [];
  }
  if (Array.isArray(value)) return value.flatMap(placeholders);
  if (value && typeof value === 'object') return Object.values(value).flatMap(placeholders);
  return [];
}

/** The manifest as VS Code shows it in English: every `%key%` replaced. */
function localized(value: unknown): unknown {
  if (typeof value === 'string') {
    const match = NLS_PLACEHOLDER.exec(value);
    return match ? (nls[match[1]] ?? value) : value;
  }
  if (Array.isArray(value)) return value.map(localized);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, localized(v)]));
  return value;
}

const pkg = localized(rawPkg) as any;
const contributes = pkg.contributes;

test('every %key% of package.json is in package.nls.json, and every entry there is used', () => {
  const used = placeholders(rawPkg);
  assert.ok(used.length >= 50, `${used.length} placeholders`);
  const missing = used.filter((k) => typeof nls[k] !== 'string' || nls[k].trim() === '');
  assert.deepEqual(missing, [], 'placeholders without an English text');
  const unused = Object.keys(nls).filter((k) => !used.includes(k));
  assert.deepEqual(unused, [], 'package.nls.json entries no placeholder names');
});

test('command titles, setting descriptions, the walkthrough and the custom editor are localizable', () => {
  const raw = rawPkg as any;
  const texts: [string, unknown][] = [
    ...raw.contributes.commands.flatMap((c: { command: string; title: unknown; category: unknown }) => [
      [`${c.command} title`, c.title],
      [`${c.command} category`, c.category],
    ]),
    ...Object.entries(raw.contributes.configuration.properties).map(([k, p]) => [
      `${k} description`,
      (p as { markdownDescription?: unknown; description?: unknown }).markdownDescription ??
        (p as { description?: unknown }).description,
    ]),
    ['configuration title', raw.contributes.configuration.title],
    ...raw.contributes.customEditors.map((e: { viewType: string; displayName: unknown }) => [
      e.viewType,
      e.displayName,
    ]),
    ...raw.contributes.walkthroughs.flatMap((w: { title: unknown; steps: { id: string; title: unknown }[] }) => [
      ['walkthrough', w.title],
      ...w.steps.map((s) => [`walkthrough step ${s.id}`, s.title]),
    ]),
  ];
  for (const [what, text] of texts) assert.match(String(text), NLS_PLACEHOLDER, `${what} is a %key% placeholder`);
});
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

test('the Marketplace page: keywords, a banner in the icon colour, categories the Marketplace knows', () => {
  const keywords: string[] = pkg.keywords;
  // The Marketplace keeps at most 30 keywords (vsce refuses more).
  assert.ok(keywords.length >= 5 && keywords.length <= 30, `${keywords.length} keywords`);
  assert.equal(new Set(keywords).size, keywords.length, 'no duplicate keyword');
  for (const k of ['nccl', 'allreduce', 'pytorch']) assert.ok(keywords.includes(k), k);
  assert.match(pkg.galleryBanner.color, /^#[0-9a-f]{6}$/i);
  assert.ok(['dark', 'light'].includes(pkg.galleryBanner.theme));
  // The banner is the icon's own background, so the page reads as one piece.
  const png = readFileSync(join(ROOT, pkg.icon));
  assert.equal(pkg.galleryBanner.color.toLowerCase(), `#${iconBackgroundRgb(png)}`);
  const known = ['Machine Learning', 'Linters', 'Visualization', 'Programming Languages', 'Data Science', 'Other'];
  for (const c of pkg.categories) assert.ok(known.includes(c), `category ${c}`);
});

test('the package script asks vsce to allow a missing repository only while package.json names none', () => {
  // There is no public repository for this project yet: when one exists, its URL goes into `repository`, `bugs`
  // and `homepage`, and the flag must go.
  const allows = / --allow-missing-repository\b/.test(pkg.scripts.package);
  assert.equal(allows, pkg.repository === undefined, 'the flag and the repository field disagree');
  assert.equal(pkg.bugs === undefined, pkg.repository === undefined, 'bugs comes with the repository');
});

/** The hex RGB of the pixel at (10, 10) of an 8-bit RGBA PNG whose row 10 is stored unfiltered (the icon is). */
function iconBackgroundRgb(png: Buffer): string {
  const chunks: Buffer[] = [];
  let width = 0;
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    if (type === 'IHDR') width = png.readUInt32BE(at + 8);
    if (type === 'IDAT') chunks.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  const pixels = inflateSync(Buffer.concat(chunks));
  const stride = 1 + width * 4;
  assert.equal(pixels[10 * stride], 0, 'row 10 of the icon is unfiltered');
  return pixels.subarray(10 * stride + 1 + 10 * 4, 10 * stride + 1 + 10 * 4 + 3).toString('hex');
}

// Enforces the layer rules of ARCHITECTURE.md: which layer may import which, and where node and vscode may appear.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, dirname, resolve, relative, sep } from 'node:path';
import { builtinModules } from 'node:module';

type Layer = 'engine' | 'protocol' | 'config' | 'analysis' | 'native' | 'cli' | 'extension' | 'webview';

interface Rule {
  readonly mayImport: readonly Layer[];
  readonly node: boolean;
  readonly vscode: boolean;
  /** npm packages this layer may use besides the layers above. */
  readonly packages: readonly string[];
  readonly why: string;
}

const RULES: Record<Layer, Rule> = {
  engine: {
    mayImport: ['engine'],
    node: false,
    vscode: false,
    packages: [],
    why: 'the engine is pure so the CLI, the extension and the webview all run it',
  },
  protocol: {
    mayImport: ['engine', 'protocol'],
    node: false,
    vscode: false,
    packages: [],
    why: 'the protocol is shared by the host and the browser bundle',
  },
  config: {
    mayImport: ['engine', 'config'],
    node: false,
    vscode: false,
    packages: ['yaml', 'ajv'],
    why: 'config parsing is text in, model out, so it runs anywhere',
  },
  analysis: {
    mayImport: ['engine', 'config', 'analysis'],
    node: false,
    vscode: false,
    packages: ['web-tree-sitter'],
    why: 'analysis must run in the CLI and the extension alike; the parser is passed in',
  },
  native: {
    mayImport: ['engine', 'config', 'native'],
    node: true,
    vscode: false,
    packages: [],
    why: 'the native runner spawns processes but must not depend on VS Code',
  },
  cli: {
    mayImport: ['engine', 'config', 'analysis', 'native', 'cli'],
    node: true,
    vscode: false,
    packages: [],
    why: 'the CLI runs headless in CI',
  },
  extension: {
    mayImport: ['engine', 'protocol', 'config', 'analysis', 'native', 'extension'],
    node: true,
    vscode: true,
    packages: [],
    why: 'only the extension talks to VS Code',
  },
  webview: {
    mayImport: ['engine', 'protocol', 'webview'],
    node: false,
    vscode: false,
    packages: ['chart.js', '@vscode-elements/elements'],
    why: 'the webview is a browser bundle',
  },
};

/** Known exceptions, each with a reason. Keep this empty; a new entry needs a note in ARCHITECTURE.md. */
const KNOWN_DEBT: readonly string[] = [];

const ROOT = resolve(import.meta.dirname, '..', '..');

function layerOf(file: string): Layer | undefined {
  const rel = relative(ROOT, file).split(sep).join('/');
  if (rel.startsWith('webview/')) return 'webview';
  if (rel === 'src/protocol.ts' || rel === 'src/protocol-strings.ts') return 'protocol';
  const match = /^src\/([^/]+)\//.exec(rel);
  return match ? (match[1] as Layer) : undefined;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|mts|tsx)$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function importsOf(text: string): string[] {
  const specifiers: string[] = [];
  const pattern =
    /(?:^|\s)(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm;
  for (const m of text.matchAll(pattern)) specifiers.push(m[1] ?? m[2] ?? m[3] ?? m[4]);
  return specifiers;
}

/** The layer rules' violations of one file; `text` lets the self-test check a file that does not exist. */
function violations(file: string, text = readFileSync(file, 'utf8')): string[] {
  const layer = layerOf(file);
  if (!layer) return [];
  const rule = RULES[layer];
  const found: string[] = [];
  const rel = relative(ROOT, file);
  for (const spec of importsOf(text)) {
    const where = `${rel} imports '${spec}'`;
    if (spec === 'vscode') {
      if (!rule.vscode) found.push(`${where}: ${layer} must not import vscode (${rule.why})`);
    } else if (spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0])) {
      if (!rule.node) found.push(`${where}: ${layer} must not use Node built-ins (${rule.why})`);
    } else if (spec.startsWith('.')) {
      const target = resolve(dirname(file), spec);
      const targetLayer =
        layerOf(target.endsWith('.ts') ? target : `${target}.ts`) ?? layerOf(join(target, 'index.ts'));
      if (!targetLayer) continue;
      if (!rule.mayImport.includes(targetLayer))
        found.push(`${where}: ${layer} may import only ${rule.mayImport.join(', ')} (${rule.why})`);
      const targetRel = relative(ROOT, target).split(sep).join('/');
      if (
        targetLayer === 'engine' &&
        layer !== 'engine' &&
        targetRel !== 'src/engine' &&
        targetRel !== 'src/engine/index'
      ) {
        found.push(`${where}: outside the engine, import only src/engine/index.ts`);
      }
    } else if (
      !rule.packages.some((p) => spec === p || spec.startsWith(`${p}/`)) &&
      layer !== 'extension' &&
      layer !== 'cli' &&
      layer !== 'native'
    ) {
      found.push(`${where}: ${layer} may use only the packages ${rule.packages.join(', ') || '(none)'} (${rule.why})`);
    }
  }
  return found.filter((v) => !KNOWN_DEBT.includes(v));
}

test('every layer imports only what ARCHITECTURE.md allows', () => {
  const files = [...sourceFiles(join(ROOT, 'src')), ...sourceFiles(join(ROOT, 'webview'))];
  assert.ok(files.length > 5, 'the walk found the sources');
  const all = files.flatMap((file) => violations(file));
  assert.deepEqual(all, []);
});

test('the engine uses no DOM or Node globals', () => {
  const offenders = sourceFiles(join(ROOT, 'src', 'engine')).filter((f) =>
    // Comments are prose ("a single process. Undefined ..."), so both kinds are removed before looking for globals.
    /\b(document|window|process|Buffer|require)\s*[.(]/.test(
      readFileSync(f, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/\/\/.*$/gm, ''),
    ),
  );
  assert.deepEqual(
    offenders.map((f) => relative(ROOT, f)),
    [],
  );
});

test('the checker catches a forbidden import (self-test)', () => {
  // Each case is a file that breaks one rule; the checker must name that rule, or the real check above proves nothing.
  const cases: Array<[string, string, RegExp]> = [
    ['src/engine/fake.ts', "import * as fs from 'node:fs';", /engine must not use Node built-ins/],
    ['src/engine/fake.ts', "import * as vscode from 'vscode';", /engine must not import vscode/],
    ['src/engine/fake.ts', "import { x } from '../analysis/types';", /engine may import only engine/],
    ['src/cli/fake.ts', "import { simulate } from '../engine/simulate';", /import only src\/engine\/index\.ts/],
    ['src/analysis/fake.ts', "import chalk from 'chalk';", /analysis may use only the packages/],
    ['webview/fake.ts', "import { x } from '../src/native/runner';", /webview may import only/],
  ];
  for (const [path, text, expected] of cases) {
    const found = violations(join(ROOT, path), text);
    assert.equal(found.length, 1, `${path}: ${text} -> ${found.join('; ')}`);
    assert.match(found[0], expected);
  }
  assert.deepEqual(violations(join(ROOT, 'src/cli/fake.ts'), "import { simulate } from '../engine/index';"), []);
});

/** Files reachable from `roots` through relative imports, with the file that first reached each. */
function reachable(roots: readonly string[]): Map<string, string> {
  const seen = new Map<string, string>(roots.map((r) => [r, r]));
  const queue = [...roots];
  while (queue.length > 0) {
    const file = queue.pop()!;
    for (const spec of importsOf(readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const base = resolve(dirname(file), spec);
      const target = [`${base}.ts`, join(base, 'index.ts'), base].find(
        (c) => c.endsWith('.ts') && statSync(c, { throwIfNoEntry: false })?.isFile(),
      );
      if (target && !seen.has(target)) {
        seen.set(target, file);
        queue.push(target);
      }
    }
  }
  return seen;
}

test('the extension glue and the engine worker never reach vscode, even through another file', () => {
  // glue/ is what the unit tests run without VS Code, and the worker runs in a thread where vscode cannot load.
  const roots = [
    ...sourceFiles(join(ROOT, 'src', 'extension', 'glue')),
    ...sourceFiles(join(ROOT, 'src', 'extension', 'worker')),
  ];
  assert.ok(roots.length > 5, 'the walk found glue and worker files');
  const offenders = [...reachable(roots)]
    .filter(([file]) => importsOf(readFileSync(file, 'utf8')).includes('vscode'))
    .map(([file, from]) => `${relative(ROOT, file)} (reached from ${relative(ROOT, from)}) imports vscode`);
  assert.deepEqual(offenders, []);
});

/** Static imports only: `import('./lazy')` is how the extension loads its lazy bundle, not a dependency cycle. */
function staticImportsOf(text: string): string[] {
  return [...text.matchAll(/(?:^|\s)(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]/gm)].map((m) => m[1]);
}

/** The import cycles among `files` (strongly connected components of two or more files), type imports included. */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

function importGraph(files: readonly string[]): Map<string, string[]> {
  return new Map(
    files.map((file) => [
      file,
      staticImportsOf(readFileSync(file, 'utf8'))
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => resolve(dirname(file), spec))
        .map((base) => [`${base}.ts`, join(base, 'index.ts')].find((c) => files.includes(c)))
        .filter((target): target is string => target !== undefined),
    ]),
  );
}

// A cycle makes the files in it one unit: none can be read, tested or moved without the others, and a cycle through
// types alone still ties their layouts together. Shared types move down into a file that both sides import.
const CYCLE_FREE_FOLDERS = [
  'src/engine',
  'src/config',
  'src/analysis',
  'src/native',
  'src/cli',
  'src/extension',
  'webview',
];

for (const folder of CYCLE_FREE_FOLDERS) {
  test(`${folder} has no import cycle, not even through types`, () => {
    const files = sourceFiles(join(ROOT, ...folder.split('/')));
    assert.ok(files.length > 3, `the walk found the files of ${folder}`);
    const cycles = importCycles(importGraph(files)).map((c) => c.map((f) => relative(ROOT, f)).join(' -> '));
    assert.deepEqual(cycles, []);
  });
}

test('src and webview together have no import cycle (protocol.ts and the layers above it included)', () => {
  const files = [...sourceFiles(join(ROOT, 'src')), ...sourceFiles(join(ROOT, 'webview'))];
  const cycles = importCycles(importGraph(files)).map((c) => c.map((f) => relative(ROOT, f)).join(' -> '));
  assert.deepEqual(cycles, []);
});

test('the cycle finder finds a cycle (self-test)', () => {
  const graph = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a']],
    ['d', ['a']],
  ]);
  assert.deepEqual(importCycles(graph), [['a', 'b', 'c']]);
  assert.deepEqual(importCycles(new Map([['a', ['b']]])), []);
});

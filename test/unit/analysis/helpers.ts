// Shared by the analysis tests: one parser for the whole file, corpus folders, and a "does it still parse" check.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Parser } from 'web-tree-sitter';
import { loadPythonParser } from '../../../src/cli/python-parser';
import {
  Program,
  analyzePython,
  type AnalysisOptions,
  type AnalysisResult,
  type Finding,
} from '../../../src/analysis/index';

export const REPO = resolve(import.meta.dirname, '..', '..', '..');
export const SHARED_CORPUS = resolve(REPO, '..', 'shared', 'corpus', 'scaling');
export const EXTRA_CORPUS = join(REPO, 'test', 'fixtures', 'scaling-extra');

export function parser(): Promise<Parser> {
  return loadPythonParser();
}

export async function analyze(text: string, options?: AnalysisOptions): Promise<readonly Finding[]> {
  return analyzePython(await parser(), text, options).findings;
}

/** `code@line` (1-based) for compact assertions. */
export function summary(findings: readonly Finding[]): string[] {
  return findings.map((f) => `${f.code}@${f.range.startLine + 1}`);
}

/** Every file's analysis, the files read as one program (path → text), so the rules that cross files run. */
export async function analyzeProgram(files: Record<string, string>): Promise<Map<string, AnalysisResult>> {
  const program = new Program(await parser());
  for (const [path, text] of Object.entries(files)) program.setFile(path, text);
  return program.analyzeAll();
}

/** `path:code@line` for every finding of a program's analysis. */
export function summaryByPath(results: Map<string, AnalysisResult>): string[] {
  return [...results].flatMap(([path, r]) => summary(r.findings).map((s) => `${path}:${s}`));
}

export function pythonFiles(dir: string): { name: string; path: string; text: string }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => n.endsWith('.py'))
    .sort()
    .map((name) => ({ name, path: join(dir, name), text: readFileSync(join(dir, name), 'utf8') }));
}

export async function parsesCleanly(text: string): Promise<boolean> {
  const tree = (await parser()).parse(text);
  if (!tree) return false;
  const ok = !tree.rootNode.hasError;
  tree.delete();
  return ok;
}

/** Dedents a template literal so inline Python cases can be indented with the test code. */
export function py(strings: TemplateStringsArray, ...values: unknown[]): string {
  const raw = strings.reduce((acc, s, i) => acc + s + (i < values.length ? String(values[i]) : ''), '');
  const lines = raw.replace(/^\n/, '').split('\n');
  const indent = Math.min(...lines.filter((l) => l.trim() !== '').map((l) => /^ */.exec(l)![0].length));
  return lines.map((l) => l.slice(indent)).join('\n');
}

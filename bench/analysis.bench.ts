// Analysis speed: a generated 3,000-line training script through the whole checker (parse, copy, rules, fixes);
// `check` over a generated 2,000-file code base (bench/check-tree.ts) as a user runs it, on one core; and
// re-checking one edited file of that code base as a whole program (the editor's path after an edit).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Benchmark } from './types';
import { analyzePython, Program } from '../src/analysis/index';
import { loadPythonParser } from '../src/cli/python-parser';
import { findingsToDiagnostics } from '../src/extension/glue/diagnostics-map';
import { checkTree } from './check-tree';
import { trainingScript } from './training-script';

const ROOT = join(import.meta.dirname, '..');
const script = trainingScript(3000);
const WARM_UP_ANALYSES = 3;
let findings = 0;
let treeRun: Record<string, unknown> = {};
let recheck: Record<string, unknown> = {};

/** `taskset -c 0` where it exists (Linux), so the CLI and its helper threads share one core. */
function oneCore(args: string[]): { command: string; args: string[]; pinned: boolean } {
  const probe = spawnSync('taskset', ['-c', '0', 'true']);
  return probe.status === 0
    ? { command: 'taskset', args: ['-c', '0', process.execPath, ...args], pinned: true }
    : { command: process.execPath, args, pinned: false };
}

/** A whole-program session over the tree, analysed once; each measurement then edits one training file. */
let session: Promise<{ program: Program; path: string; text: string }> | undefined;
function programSession(): Promise<{ program: Program; path: string; text: string }> {
  session ??= (async () => {
    const tree = checkTree();
    const program = new Program(await loadPythonParser());
    const listed = spawnSync('find', [tree.root, '-name', '*.py'], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter((p) => p !== '');
    for (const file of listed) program.setFile(relative(tree.root, file), readFileSync(file, 'utf8'));
    program.analyzeAll();
    // A 600-line generated training script: the kind of file someone edits.
    const file = tree.trainingFiles.find(
      (f) => readFileSync(f, 'utf8').split('\n').length > 500 && readFileSync(f, 'utf8').split('\n').length < 1000,
    );
    if (!file) throw new Error('the generated tree has no 600-line training script');
    return { program, path: relative(tree.root, file), text: readFileSync(file, 'utf8') };
  })();
  return session;
}
let edits = 0;

export const benchmarks: Benchmark[] = [
  {
    name: 'analysis: 3,000-line training script',
    unit: 'ms',
    target: 50,
    quick: true,
    runs: 9,
    async measure() {
      const parser = await loadPythonParser();
      // The editor analyses the same file on every edit, so this measures the warm path: a few analyses first let
      // the JIT compile the rules (a cold first call takes 40-100 ms and would be all that --quick's 2 runs see).
      for (let i = 0; i < WARM_UP_ANALYSES; i++) analyzePython(parser, script);
      const start = performance.now();
      const result = analyzePython(parser, script);
      const elapsed = performance.now() - start;
      findings = result.findings.length;
      return elapsed;
    },
    extra: () => ({ lines: script.split('\n').length, findings }),
  },
  {
    name: 'check: 2,000-file tree, one core',
    unit: 'files/s',
    target: 500,
    higherIsBetter: true,
    runs: 3,
    measure() {
      const tree = checkTree();
      const run = oneCore([join(ROOT, 'dist', 'cli.js'), 'check', tree.root, '--json', '--exit-zero']);
      const start = performance.now();
      const r = spawnSync(run.command, run.args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
      const seconds = (performance.now() - start) / 1000;
      if (r.status !== 0) throw new Error(`check exited ${r.status}: ${r.stderr.slice(0, 500)}`);
      const items = JSON.parse(r.stdout) as { code?: string; notAnalysed?: string }[];
      treeRun = {
        files: tree.files,
        trainingFiles: tree.trainingFiles.length,
        findings: items.filter((i) => i.code).length,
        notAnalysed: items.filter((i) => i.notAnalysed).length,
        seconds,
        pinnedToOneCore: run.pinned,
      };
      return tree.files / seconds;
    },
    extra: () => treeRun,
  },
  {
    name: 'check: re-check one edited file in a 2,000-file workspace',
    unit: 'ms',
    target: 50,
    quick: true,
    runs: 9,
    async measure() {
      const { program, path, text } = await programSession();
      // A real edit: the learning rate's default changes, so the file's cached analysis is stale.
      const edited = text.replace('default=3e-4', `default=${++edits}e-4`);
      const start = performance.now();
      program.setFile(path, edited);
      const result = program.analyzeFile(path);
      const diagnostics = findingsToDiagnostics(result.findings, {}, (code) => `docs/rules/${code}.md`);
      const elapsed = performance.now() - start;
      recheck = { files: program.paths.length, lines: edited.split('\n').length, diagnostics: diagnostics.length };
      return elapsed;
    },
    extra: () => recheck,
  },
];

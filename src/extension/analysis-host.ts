// Loads the analysis layer and its tree-sitter parser on first use, from the .wasm files shipped in dist/, so
// that activation stays fast and files that are never Python never pay for the parser. Python files are analysed as
// one program (analysis/program.ts): the open documents, the workspace's files (background indexing and the
// workspace check), keyed by path, so a summing helper in one file is judged at its callers in others and an edit
// re-analyses only what it touches.
import * as vscode from 'vscode';
import type { AnalysisResult } from '../analysis/types';
import type { Program } from '../analysis/program';

export interface PythonAnalyzer {
  /** One file of the program (its path names it; related locations in other files carry their paths). */
  analyze(path: string, text: string, options: ProgramOptions): AnalysisResult;
  /**
   * Many files at once (the workspace check): each one's findings, judged across all of them. `pause` is awaited
   * between files, to report progress, yield to the event loop and cancel (by throwing).
   */
  analyzeAll(
    files: readonly { path: string; text: string }[],
    options: ProgramOptions,
    pause: (index: number) => Promise<void>,
  ): Promise<Map<string, AnalysisResult>>;
  /** Adds files to the program and learns their helpers, without publishing anything (background indexing). */
  prepare(
    files: readonly { path: string; text: string }[],
    options: ProgramOptions,
    pause: (index: number) => Promise<void>,
  ): Promise<void>;
  /**
   * The workspace's requirements*.txt, setup.cfg and pyproject.toml files (their pinned library versions decide
   * library contracts, as in `check`). A manifest given again replaces its text; one given as `undefined` is gone,
   * and with `all` (the whole workspace was searched) so is every manifest not given.
   */
  setManifests(files: readonly { path: string; text: string | undefined }[], all?: boolean): void;
  /** CP007: DeepSpeed pre-divide settings, read from the JSON config itself. */
  analyzeDeepSpeed(text: string): AnalysisResult;
}

/** What the program's results depend on: the world size named in messages, and whether hints are shown. */
export interface ProgramOptions {
  readonly worldSize?: number;
  readonly hints: boolean;
}

export async function loadAnalyzer(extensionUri: vscode.Uri): Promise<PythonAnalyzer> {
  const dist = vscode.Uri.joinPath(extensionUri, 'dist');
  const { createPythonParser } = await import('../analysis/parser');
  // One parser for the session: every analysed file reuses it.
  const parser = await createPythonParser(
    vscode.Uri.joinPath(dist, 'tree-sitter.wasm').fsPath,
    vscode.Uri.joinPath(dist, 'tree-sitter-python.wasm').fsPath,
  );
  const analysis = await import('../analysis/index');
  // Messages name the world size and hints change what is shown, so new options start a new program (its cache
  // holds finished results); the files it knew carry over.
  let program: { key: string; program: Program } | undefined;
  // Manifests outlive a program: a new one (new options) is given them again.
  const manifests = new Map<string, string>();
  const programFor = (options: ProgramOptions): Program => {
    const key = `${options.worldSize ?? ''}:${options.hints}`;
    if (!program || program.key !== key) {
      const next = new analysis.Program(parser, { worldSize: options.worldSize, hints: options.hints });
      for (const path of program?.program.paths ?? [])
        next.setFile(path, program!.program.textOf(path) ?? '', scopeOf(path));
      for (const [path, text] of manifests) next.setManifest(path, text);
      program = { key, program: next };
    }
    return program.program;
  };
  return {
    analyze: (path, text, options) => {
      const p = programFor(options);
      p.setFile(path, text, scopeOf(path));
      return p.analyzeFile(path);
    },
    analyzeAll: async (files, options, pause) => {
      const p = programFor(options);
      for (const f of files) p.setFile(f.path, f.text, scopeOf(f.path));
      const wanted = new Set(files.map((f) => f.path));
      const all = await p.analyzeAllAsync((_, index) => pause(index));
      return new Map([...all].filter(([path]) => wanted.has(path)));
    },
    prepare: async (files, options, pause) => {
      const p = programFor(options);
      // An open document's editor text is newer than the disk's: it was set by analyze() and stays.
      for (const f of files) if (p.textOf(f.path) === undefined) p.setFile(f.path, f.text, scopeOf(f.path));
      await p.prepareAsync((_, index) => pause(index));
    },
    setManifests: (files, all) => {
      const given = new Set(files.map((f) => f.path));
      const gone = all ? [...manifests.keys()].filter((path) => !given.has(path)) : [];
      for (const f of [...files, ...gone.map((path) => ({ path, text: undefined }))]) {
        // An empty text states no pins, which is what a deleted manifest states.
        if (f.text === undefined) manifests.delete(f.path);
        else manifests.set(f.path, f.text);
        program?.program.setManifest(f.path, f.text ?? '');
      }
    },
    analyzeDeepSpeed: (text) => analysis.analyzeDeepSpeedConfig(text),
  };
}

/** The path inside its workspace folder, which decides whether a file is test code. */
function scopeOf(path: string): string {
  const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(path));
  return folder ? vscode.workspace.asRelativePath(vscode.Uri.file(path), false) : (path.split(/[\\/]/).pop() ?? path);
}

// The workspace as one program. Each file is analysed alone first, which also tells what its top-level helpers do
// to the gradients they are given (summaries.ts); then the files that call another file's summing helper, and the
// files whose helpers are called from elsewhere, are analysed again with that knowledge: the call is judged where
// it is made, with the caller's divisions and update, and the helper's own caller-less verdict gives way to it.
// Results are cached per file by text, so an edit re-analyses that file and the files that depend on what changed.
// The cached single-file passes live in program-file-passes.ts, the links between files in program-links.ts.
import type { Parser } from 'web-tree-sitter';
import { isTestCode } from './analyze';
import type { AnalysisOptions, AnalysisResult } from './types';
import { withMoved, type MovedFinding } from './moved-findings';
import type { ClassAnswers } from './class-links';
import { ContractIndex } from './contracts/workspace';
import { ModuleIndex } from './module-index';
import { ScaledAttributes } from './scaled-attributes';
import { mentionPattern } from './program-passes';
import { FilePasses } from './program-file-passes';
import { ProgramLinks } from './program-links';

export class Program {
  private readonly texts = new Map<string, string>();
  private readonly modules = new ModuleIndex();
  /** Library contracts judged across files (a Trainer subclass, its bases, the workspace's version pins). */
  private readonly contracts: ContractIndex;
  /** Object attributes the program rescales in place, for sums into a buffer held on an object. */
  private readonly scaledAttributes = new ScaledAttributes(() => this.texts.entries());
  /** Paths relative to the root the user checked, where they differ from the names (for the test-code rule). */
  private readonly scopePaths = new Map<string, string>();
  private readonly passes: FilePasses;
  private readonly links: ProgramLinks;

  constructor(
    parser: Parser,
    private readonly options: AnalysisOptions = {},
  ) {
    this.contracts = new ContractIndex(parser, (from, module) => this.modules.resolve(from, module));
    const files = {
      texts: this.texts,
      scopePaths: this.scopePaths,
      modules: this.modules,
      scaledAttributes: this.scaledAttributes,
      contracts: this.contracts,
    };
    this.passes = new FilePasses(parser, options, files);
    this.links = new ProgramLinks(this.passes, files);
  }

  /**
   * Adds or replaces a file (paths use `/`); its cached analysis is dropped when the text changed. `scopePath` is the
   * file's path inside the checked folder, which decides whether it is test code (see AnalysisOptions.path).
   */
  setFile(path: string, text: string, scopePath?: string): void {
    if (scopePath !== undefined) this.scopePaths.set(path, scopePath);
    const before = this.texts.get(path);
    if (before === text) return;
    if (before === undefined) this.modules.add(path);
    this.texts.set(path, text);
    this.passes.dropFirst(path, before, text);
    this.scaledAttributes.changed(path, before, text);
    this.contracts.setFile(path, text);
  }

  /** A requirements*.txt, setup.cfg or pyproject.toml: the package versions the files below its folder run with. */
  setManifest(path: string, text: string): void {
    this.contracts.setManifest(path, text);
  }

  removeFile(path: string): void {
    const before = this.texts.get(path);
    this.texts.delete(path);
    this.scaledAttributes.changed(path, before, undefined);
    this.scopePaths.delete(path);
    this.passes.forget(path, before);
    this.links.forget(path);
    this.modules.remove(path);
    this.contracts.removeFile(path);
  }

  textOf(path: string): string | undefined {
    return this.texts.get(path);
  }

  get paths(): string[] {
    return [...this.texts.keys()];
  }

  /** Every file's findings, judged across files. */
  analyzeAll(onFile?: (path: string, index: number) => void): Map<string, AnalysisResult> {
    const paths = this.paths;
    paths.forEach((path, i) => {
      onFile?.(path, i);
      this.passes.first(path);
    });
    return this.finish(paths);
  }

  /**
   * As analyzeAll, awaiting `pause` between files so a host (the editor) stays responsive; `pause` may throw to
   * cancel. The first passes are the long part; the links and second passes that follow are few.
   */
  async analyzeAllAsync(pause: (path: string, index: number) => Promise<void>): Promise<Map<string, AnalysisResult>> {
    const paths = this.paths;
    for (const [i, path] of paths.entries()) {
      await pause(path, i);
      this.passes.first(path);
    }
    return this.finish(paths);
  }

  /**
   * Runs the first pass of every file not yet analysed, awaiting `pause` between files: the editor's background
   * indexing, after which a single file's analysis knows the helpers of the whole workspace.
   */
  async prepareAsync(pause: (path: string, index: number) => Promise<void>): Promise<void> {
    for (const [i, path] of this.paths.filter((p) => !this.passes.firstIfDone(p)).entries()) {
      await pause(path, i);
      this.passes.first(path);
    }
  }

  private finish(paths: readonly string[]): Map<string, AnalysisResult> {
    const links = this.links.helpers(paths);
    const answers = this.links.classes(paths);
    const normalisers = this.links.normalisers(paths);
    const out = new Map<string, AnalysisResult>();
    const moved: MovedFinding[] = [];
    for (const path of paths) {
      if (!links.involved.has(path) && !answers.has(path) && !normalisers.involved.has(path)) {
        out.set(path, this.passes.first(path).result);
        continue;
      }
      const second = this.passes.second(path, links, answers, normalisers);
      out.set(path, second.result);
      moved.push(...second.elsewhere);
    }
    for (const [path, result] of out) out.set(path, this.movedInto(path, result, moved));
    return this.withContracts(out);
  }

  /** A file's result with the findings other files' analyses placed in it (chosen-place.ts). */
  private movedInto(path: string, result: AnalysisResult, moved: readonly MovedFinding[]): AnalysisResult {
    const text = this.texts.get(path) ?? '';
    const testCode = isTestCode(this.scopePaths.get(path) ?? path) && !this.options.hints;
    return withMoved(path, result, testCode ? [] : moved, text);
  }

  /** Adds the findings of library contracts (contracts/) to the files' results. */
  private withContracts(results: Map<string, AnalysisResult>): Map<string, AnalysisResult> {
    const found = this.contracts.findings([...results.keys()], {
      hints: this.options.hints,
      scopeOf: (path) => this.scopePaths.get(path) ?? path,
    });
    for (const [path, findings] of found) {
      const r = results.get(path)!;
      results.set(path, { ...r, findings: [...r.findings, ...findings] });
    }
    return results;
  }

  /** One file's findings, judged with the summaries of the whole program (the editor's path after an edit). */
  analyzeFile(path: string): AnalysisResult {
    const mentions = mentionPattern(this.passes.summaryNames());
    const known = this.paths.filter(
      (p) =>
        p === path || this.passes.firstIfDone(p) !== undefined || (mentions?.test(this.texts.get(p) ?? '') ?? false),
    );
    const links = this.links.helpers(known);
    const answers: ClassAnswers =
      this.passes.first(path).requests.length > 0 || this.links.buildsRequestedClass(path, known)
        ? this.links.classes(known)
        : new Map();
    const normalisers = this.links.normalisers(known);
    const result =
      links.involved.has(path) || answers.has(path) || normalisers.involved.has(path)
        ? this.passes.second(path, links, answers, normalisers).result
        : this.passes.first(path).result;
    // The files whose objects this file's constructor arguments configured may place a finding here.
    const moved = [...answers.keys()]
      .filter((p) => p !== path)
      .flatMap((p) => this.passes.secondCached(p, links, answers).elsewhere.filter((m) => m.file === path));
    return this.withContracts(new Map([[path, this.movedInto(path, result, moved)]])).get(path)!;
  }
}

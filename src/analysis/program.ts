// The workspace as one program. Each file is analysed alone first, which also tells what its top-level helpers do
// to the gradients they are given (summaries.ts); then the files that call another file's summing helper, and the
// files whose helpers are called from elsewhere, are analysed again with that knowledge: the call is judged where
// it is made, with the caller's divisions and update, and the helper's own caller-less verdict gives way to it.
// Results are cached per file by text, so an edit re-analyses that file and the files that depend on what changed.
import type { Parser } from 'web-tree-sitter';
import { analyzeSource, isTestCode } from './analyze';
import type { ProgramContext } from './module-analysis';
import { helperReduction, importedCallee, type HelperSummary } from './summaries';
import type { AnalysisOptions, AnalysisResult } from './types';
import { withMoved, type MovedFinding } from './moved-findings';
import {
  constructionSites,
  type ArgumentDenotation,
  type ConstructorArgument,
  type ConstructorRequest,
} from './class-summaries';
import { answerMapKey, linkConstructorsInRounds, requestKey, type ClassAnswers, type ClassPass } from './class-links';
import { ContractIndex } from './contracts/workspace';
import { NO_NORMALISERS } from './local-normaliser';
import { linkNormalisers, type NormaliserLinks, type TextScan } from './local-normaliser-links';
import { ModuleIndex } from './module-index';
import { ScaledAttributes, type ScalingLookups } from './scaled-attributes';
import {
  callsOf,
  mentionPattern,
  recordingRequests,
  type FirstPass,
  type Links,
  type SecondPass,
} from './program-passes';

export class Program {
  private readonly texts = new Map<string, string>();
  private readonly firstPass = new Map<string, FirstPass>();
  private readonly modules = new ModuleIndex();
  /** Library contracts judged across files (a Trainer subclass, its bases, the workspace's version pins). */
  private readonly contracts: ContractIndex;
  /** Object attributes the program rescales in place, for sums into a buffer held on an object. */
  private readonly scaledAttributes = new ScaledAttributes(() => this.texts.entries());

  constructor(
    private readonly parser: Parser,
    private readonly options: AnalysisOptions = {},
  ) {
    this.contracts = new ContractIndex(parser, (from, module) => this.modules.resolve(from, module));
  }

  /** Paths relative to the root the user checked, where they differ from the names (for the test-code rule). */
  private readonly scopePaths = new Map<string, string>();

  /**
   * Adds or replaces a file (paths use `/`); its cached analysis is dropped when the text changed. `scopePath` is the
   * file's path inside the checked folder, which decides whether it is test code (see AnalysisOptions.path).
   */
  setFile(path: string, text: string, scopePath?: string): void {
    if (scopePath !== undefined) this.scopePaths.set(path, scopePath);
    if (this.texts.get(path) === text) return;
    if (!this.texts.has(path)) this.modules.add(path);
    this.texts.set(path, text);
    this.firstPass.delete(path);
    this.scaledAttributes.invalidate();
    this.contracts.setFile(path, text);
  }

  /** A requirements*.txt, setup.cfg or pyproject.toml: the package versions the files below its folder run with. */
  setManifest(path: string, text: string): void {
    this.contracts.setManifest(path, text);
  }

  removeFile(path: string): void {
    this.texts.delete(path);
    this.scaledAttributes.invalidate();
    this.scopePaths.delete(path);
    this.firstPass.delete(path);
    this.probes.delete(path);
    this.normaliserScans.delete(path);
    this.seconds.delete(path);
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
      this.first(path);
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
      this.first(path);
    }
    return this.finish(paths);
  }

  /**
   * Runs the first pass of every file not yet analysed, awaiting `pause` between files: the editor's background
   * indexing, after which a single file's analysis knows the helpers of the whole workspace.
   */
  async prepareAsync(pause: (path: string, index: number) => Promise<void>): Promise<void> {
    for (const [i, path] of this.paths.filter((p) => !this.firstPass.has(p)).entries()) {
      await pause(path, i);
      this.first(path);
    }
  }

  private finish(paths: readonly string[]): Map<string, AnalysisResult> {
    const links = this.link(paths);
    const answers = this.linkClasses(paths);
    const normalisers = this.linkNormalisers(paths);
    const out = new Map<string, AnalysisResult>();
    const moved: MovedFinding[] = [];
    for (const path of paths) {
      if (!links.involved.has(path) && !answers.has(path) && !normalisers.involved.has(path)) {
        out.set(path, this.first(path).result);
        continue;
      }
      const second = this.second(path, links, answers, normalisers);
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

  private linkClasses(paths: readonly string[]): ClassAnswers {
    return linkConstructorsInRounds(
      paths,
      {
        text: (p) => this.texts.get(p) ?? '',
        pass: (p, parse) => this.first(p, !parse),
        resolve: (from, module) => this.modules.resolve(from, module),
        isTest: (p) => isTestCode(this.scopePaths.get(p) ?? p),
      },
      (p, answered) => this.probe(p, answered),
    );
  }

  /** Probes by file, for its text and answers: the editor links the classes again on every edit. */
  private readonly probes = new Map<string, { text: string; key: string; pass: ClassPass | undefined }>();

  /** The requests and construction sites of a file analysed with the answers it has so far (class-links.ts). */
  private probe(path: string, answered: ReadonlyMap<string, ArgumentDenotation>): ClassPass | undefined {
    const text = this.texts.get(path) ?? '';
    const key = answerMapKey(answered);
    const cached = this.probes.get(path);
    if (cached && cached.text === text && cached.key === key) return cached.pass;
    const pass = this.probeAnew(path, answered);
    this.probes.set(path, { text, key, pass });
    return pass;
  }

  private probeAnew(path: string, answered: ReadonlyMap<string, ArgumentDenotation>): ClassPass | undefined {
    const requests: ConstructorRequest[] = [];
    const record = recordingRequests(requests);
    // Every request is noted, answered or not: the next round must ask it again.
    const constructorArgument: ConstructorArgument = (r) => record(r) ?? answered.get(requestKey(r));
    const { analysis } = analyzeSource(
      this.parser,
      this.texts.get(path) ?? '',
      { ...this.optionsFor(path), prefilter: false },
      { path, constructorArgument, attributeScaling: (a) => this.scaledAttributes.scaling(a) },
    );
    return analysis ? { requests, sites: constructionSites(analysis.model, constructorArgument) } : undefined;
  }

  /** One file's findings, judged with the summaries of the whole program (the editor's path after an edit). */
  analyzeFile(path: string): AnalysisResult {
    const mentions = mentionPattern(this.summaryNames());
    const known = this.paths.filter(
      (p) => p === path || this.firstPass.has(p) || (mentions?.test(this.texts.get(p) ?? '') ?? false),
    );
    const links = this.link(known);
    const answers: ClassAnswers =
      this.first(path).requests.length > 0 || this.buildsRequestedClass(path, known)
        ? this.linkClasses(known)
        : new Map();
    const normalisers = this.linkNormalisers(known);
    const result =
      links.involved.has(path) || answers.has(path) || normalisers.involved.has(path)
        ? this.second(path, links, answers, normalisers).result
        : this.first(path).result;
    // The files whose objects this file's constructor arguments configured may place a finding here.
    const moved = [...answers.keys()]
      .filter((p) => p !== path)
      .flatMap((p) => this.secondCached(p, links, answers).elsewhere.filter((m) => m.file === path));
    return this.withContracts(new Map([[path, this.movedInto(path, result, moved)]])).get(path)!;
  }

  /** The file builds an object of a class whose methods asked what its constructor was given. */
  private buildsRequestedClass(path: string, known: readonly string[]): boolean {
    const names = new Set(known.flatMap((p) => this.firstPass.get(p)?.requests.map((r) => r.className) ?? []));
    if (names.size === 0) return false;
    const text = this.texts.get(path) ?? '';
    if (![...names].some((n) => text.includes(n))) return false;
    return this.first(path, false).sites.some((site) => names.has(site.name));
  }

  /**
   * Second passes by file, for its text and answers (the editor asks for them on every edit of a building file).
   * Only their findings for other files are read, which come from constructor arguments, not from the normalisers.
   */
  private readonly seconds = new Map<string, { key: string; pass: SecondPass }>();

  private secondCached(path: string, links: Links, answers: ClassAnswers): SecondPass {
    const answered = answers.get(path);
    const key = [
      this.texts.get(path) ?? '',
      answered ? answerMapKey(answered) : '',
      [...(links.calledElsewhere.get(path) ?? [])].sort().join(','),
    ].join('\u0000');
    const cached = this.seconds.get(path);
    if (cached?.key === key && this.scaledAttributes.stillHolds(cached.pass.scalingLookups)) return cached.pass;
    const pass = this.second(path, links, answers);
    this.seconds.set(path, { key, pass });
    return pass;
  }

  private first(path: string, prefilter = true): FirstPass {
    const text = this.texts.get(path) ?? '';
    const cached = this.firstPass.get(path);
    if (
      cached &&
      cached.text === text &&
      (prefilter || cached.parsed) &&
      this.scaledAttributes.stillHolds(cached.scalingLookups)
    )
      return cached;
    // The first pass knows no construction site: it only notes which constructor parameters it would need, for its
    // methods and for the arguments its own sites pass on (`Bucket(group=self.group)`).
    const requests: ConstructorRequest[] = [];
    const constructorArgument = recordingRequests(requests);
    const scalingLookups: ScalingLookups = new Map();
    const { result, analysis } = analyzeSource(
      this.parser,
      text,
      { ...this.optionsFor(path), ...(prefilter ? {} : { prefilter: false }) },
      { path, constructorArgument, attributeScaling: this.scaledAttributes.recording(scalingLookups) },
    );
    const pass: FirstPass = {
      text,
      result,
      summaries: analysis?.summaries ?? [],
      calls: analysis ? callsOf(analysis) : [],
      parsed: analysis !== undefined || !prefilter,
      sites: analysis ? constructionSites(analysis.model, constructorArgument) : [],
      requests,
      normalisers: analysis?.normalisers ?? NO_NORMALISERS,
      scalingLookups,
    };
    this.firstPass.set(path, pass);
    return pass;
  }

  private summaryNames(): Set<string> {
    const names = new Set<string>();
    for (const pass of this.firstPass.values()) for (const s of pass.summaries) names.add(s.name);
    return names;
  }

  /** Which calls reach which summarised helpers, and so which files need the second pass. */
  private link(paths: readonly string[]): Links {
    const exports = new Map<string, Map<string, HelperSummary>>();
    for (const path of paths) {
      const summaries = this.firstPass.get(path)?.summaries ?? [];
      if (summaries.length > 0) exports.set(path, new Map(summaries.map((s) => [s.name, s])));
    }
    const links: Links = { exports, calledElsewhere: new Map(), involved: new Set() };
    if (exports.size === 0) return links;
    const mentions = mentionPattern(this.summaryNames());
    for (const path of paths) {
      const text = this.texts.get(path) ?? '';
      if (!mentions?.test(text)) continue;
      // A caller that names no reduction or backward pass was not parsed the first time: parse it now.
      const pass = this.first(path, false);
      for (const call of pass.calls) {
        const target = this.modules.resolve(path, call.module);
        if (!target || target === path || !exports.get(target)?.has(call.name)) continue;
        links.involved.add(path).add(target);
        const called = links.calledElsewhere.get(target) ?? new Set<string>();
        links.calledElsewhere.set(target, called.add(call.name));
      }
    }
    return links;
  }

  private readonly normaliserScans = new Map<string, TextScan>();

  /** The files that call another file's rescaling reduction, with what the program knows of such helpers. */
  private linkNormalisers(paths: readonly string[]): NormaliserLinks {
    return linkNormalisers(paths, {
      text: (p) => this.texts.get(p) ?? '',
      normalisers: (p) => this.first(p).normalisers,
      parse: (p) => this.first(p, false),
      resolve: (from, module) => this.modules.resolve(from, module),
      scans: this.normaliserScans,
    });
  }

  /** Whether a file of the program defines a top-level function of this name (read from the texts, per name). */
  private definesFunction(name: string): boolean {
    const pattern = new RegExp(`^def ${name}\\(`, 'm');
    for (const text of this.texts.values()) if (pattern.test(text)) return true;
    return false;
  }

  private second(path: string, links: Links, answers: ClassAnswers, normalisers?: NormaliserLinks): SecondPass {
    const answered = answers.get(path);
    const scalingLookups: ScalingLookups = new Map();
    const context: ProgramContext = {
      path,
      definesFunction: (name) => this.definesFunction(name),
      attributeScaling: this.scaledAttributes.recording(scalingLookups),
      normalisers: normalisers?.involved.has(path) ? normalisers.indexFor(path) : undefined,
      calledElsewhere: links.calledElsewhere.get(path),
      constructorArgument: (r) => answered?.get(requestKey(r)),
      external: (call, model) => {
        const callee = importedCallee(model, call);
        const target = callee ? this.modules.resolve(path, callee.module) : undefined;
        const summary = target && target !== path ? links.exports.get(target)?.get(callee!.name) : undefined;
        return summary ? helperReduction(model, call, summary) : undefined;
      },
    };
    const { result, elsewhere } = analyzeSource(
      this.parser,
      this.texts.get(path) ?? '',
      { ...this.optionsFor(path), prefilter: false },
      context,
    );
    return { result, elsewhere: (elsewhere ?? []).map((m) => ({ ...m, from: path })), scalingLookups };
  }

  private optionsFor(path: string): AnalysisOptions {
    return { ...this.options, path: this.scopePaths.get(path) ?? path };
  }
}

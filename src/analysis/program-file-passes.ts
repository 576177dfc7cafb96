// The program's (program.ts) analyses of single files, each cached so that an edit re-runs only what it changed: the
// first pass by file and text, the class probes by text and the constructor answers they were given, and the second
// passes the editor reads for other files' findings by text, answers and the helpers called from elsewhere.
import type { Parser } from 'web-tree-sitter';
import { analyzeSource } from './analyze';
import type { ProgramContext } from './module-analysis';
import { helperReduction, importedCallee } from './summaries';
import type { AnalysisOptions } from './types';
import {
  constructionSites,
  type ArgumentDenotation,
  type ConstructorArgument,
  type ConstructorRequest,
} from './class-summaries';
import { answerMapKey, requestKey, type ClassAnswers, type ClassPass } from './class-links';
import { NO_NORMALISERS } from './local-normaliser';
import type { NormaliserLinks } from './local-normaliser-links';
import type { ModuleIndex } from './module-index';
import type { ScaledAttributes, ScalingLookups } from './scaled-attributes';
import { functionTemplates } from './parameter-paths';
import { ProgramDefinitions, type ContractQuestions, type DefinitionLookups } from './program-definitions';
import { callsOf, recordingRequests, type FirstPass, type Links, type SecondPass } from './program-passes';

/** The program's files as the passes read them; the program owns and changes them. */
export interface ProgramFiles {
  readonly texts: ReadonlyMap<string, string>;
  /** Paths relative to the root the user checked, where they differ from the names (for the test-code rule). */
  readonly scopePaths: ReadonlyMap<string, string>;
  readonly modules: ModuleIndex;
  readonly scaledAttributes: ScaledAttributes;
  /** The library contracts' answers about other files (program-definitions.ts). */
  readonly contracts?: ContractQuestions;
}

export class FilePasses {
  private readonly firstPass = new Map<string, FirstPass>();
  /** Probes by file, for its text and answers: the editor links the classes again on every edit. */
  private readonly probes = new Map<string, { text: string; key: string; pass: ClassPass | undefined }>();
  /**
   * Second passes by file, for its text and answers (the editor asks for them on every edit of a building file).
   * Only their findings for other files are read, which come from constructor arguments, not from the normalisers.
   */
  private readonly seconds = new Map<string, { key: string; pass: SecondPass }>();

  /** Definitions of names across the program's texts, for the path-sensitive multiplier rule. */
  private readonly definitions: ProgramDefinitions;

  constructor(
    private readonly parser: Parser,
    private readonly options: AnalysisOptions,
    private readonly files: ProgramFiles,
  ) {
    this.definitions = new ProgramDefinitions(() => this.files.texts.values(), this.files.contracts);
  }

  /** Drops the first pass of a file whose text changed; the other caches check the text themselves. */
  dropFirst(path: string, before: string | undefined, after: string): void {
    this.firstPass.delete(path);
    this.definitions.changed(before, after);
  }

  /** Drops everything cached for a file removed from the program. */
  forget(path: string, before: string | undefined): void {
    this.firstPass.delete(path);
    this.definitions.changed(before, undefined);
    this.probes.delete(path);
    this.seconds.delete(path);
  }

  /** The first pass already run for a file, if any, without running one. */
  firstIfDone(path: string): FirstPass | undefined {
    return this.firstPass.get(path);
  }

  /** The requests and construction sites of a file analysed with the answers it has so far (class-links.ts). */
  probe(path: string, answered: ReadonlyMap<string, ArgumentDenotation>): ClassPass | undefined {
    const text = this.text(path);
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
      this.text(path),
      { ...this.optionsFor(path), prefilter: false },
      { path, constructorArgument, attributeScaling: (a) => this.files.scaledAttributes.scaling(a) },
    );
    return analysis
      ? {
          requests,
          sites: constructionSites(analysis.model, constructorArgument),
          templates: functionTemplates(analysis.model),
        }
      : undefined;
  }

  secondCached(path: string, links: Links, answers: ClassAnswers): SecondPass {
    const answered = answers.get(path);
    const key = [
      this.text(path),
      answered ? answerMapKey(answered) : '',
      [...(links.calledElsewhere.get(path) ?? [])].sort().join(','),
    ].join('\u0000');
    const cached = this.seconds.get(path);
    if (cached?.key === key && this.files.scaledAttributes.stillHolds(cached.pass.scalingLookups)) return cached.pass;
    const pass = this.second(path, links, answers);
    this.seconds.set(path, { key, pass });
    return pass;
  }

  first(path: string, prefilter = true): FirstPass {
    const text = this.text(path);
    const cached = this.firstPass.get(path);
    if (
      cached &&
      cached.text === text &&
      (prefilter || cached.parsed) &&
      this.files.scaledAttributes.stillHolds(cached.scalingLookups) &&
      this.definitions.stillHolds(cached.definitionLookups)
    )
      return cached;
    // The first pass knows no construction site: it only notes which constructor parameters it would need, for its
    // methods and for the arguments its own sites pass on (`Bucket(group=self.group)`).
    const requests: ConstructorRequest[] = [];
    const constructorArgument = recordingRequests(requests);
    const scalingLookups: ScalingLookups = new Map();
    const definitionLookups: DefinitionLookups = new Map();
    const { result, analysis } = analyzeSource(
      this.parser,
      text,
      { ...this.optionsFor(path), ...(prefilter ? {} : { prefilter: false }) },
      {
        path,
        constructorArgument,
        attributeScaling: this.files.scaledAttributes.recording(scalingLookups),
        ...this.definitions.recording(definitionLookups, path),
      },
    );
    const pass: FirstPass = {
      text,
      result,
      summaries: analysis?.summaries ?? [],
      calls: analysis ? callsOf(analysis) : [],
      parsed: analysis !== undefined || !prefilter,
      sites: analysis ? constructionSites(analysis.model, constructorArgument) : [],
      templates: analysis ? functionTemplates(analysis.model) : [],
      requests,
      normalisers: analysis?.normalisers ?? NO_NORMALISERS,
      scalingLookups,
      definitionLookups,
    };
    this.firstPass.set(path, pass);
    return pass;
  }

  /** The names of the helpers every first pass run so far summarised. */
  summaryNames(): Set<string> {
    const names = new Set<string>();
    for (const pass of this.firstPass.values()) for (const s of pass.summaries) names.add(s.name);
    return names;
  }

  /** Whether a file of the program defines a top-level function of this name (read from the texts, per name). */
  private definesFunction(name: string): boolean {
    const pattern = new RegExp(`^def ${name}\\(`, 'm');
    for (const text of this.files.texts.values()) if (pattern.test(text)) return true;
    return false;
  }

  second(path: string, links: Links, answers: ClassAnswers, normalisers?: NormaliserLinks): SecondPass {
    const answered = answers.get(path);
    const scalingLookups: ScalingLookups = new Map();
    const context: ProgramContext = {
      path,
      definesFunction: (name) => this.definesFunction(name),
      ...this.definitions.recording(new Map(), path),
      attributeScaling: this.files.scaledAttributes.recording(scalingLookups),
      normalisers: normalisers?.involved.has(path) ? normalisers.indexFor(path) : undefined,
      calledElsewhere: links.calledElsewhere.get(path),
      constructorArgument: (r) => answered?.get(requestKey(r)),
      external: (call, model) => {
        const callee = importedCallee(model, call);
        const target = callee ? this.files.modules.resolve(path, callee.module) : undefined;
        const summary = target && target !== path ? links.exports.get(target)?.get(callee!.name) : undefined;
        return summary ? helperReduction(model, call, summary) : undefined;
      },
    };
    const { result, elsewhere } = analyzeSource(
      this.parser,
      this.text(path),
      { ...this.optionsFor(path), prefilter: false },
      context,
    );
    return { result, elsewhere: (elsewhere ?? []).map((m) => ({ ...m, from: path })), scalingLookups };
  }

  private text(path: string): string {
    return this.files.texts.get(path) ?? '';
  }

  private optionsFor(path: string): AnalysisOptions {
    return { ...this.options, path: this.files.scopePaths.get(path) ?? path };
  }
}

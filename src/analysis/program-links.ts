// The program's (program.ts) links between files, read from the first passes (program-file-passes.ts): which calls
// reach another file's summarised helper, what the construction sites answer the classes built elsewhere, and which
// files call another file's rescaling reduction. The files a link involves are the ones that need a second pass.
import { isTestCode } from './analyze';
import type { HelperSummary } from './summaries';
import { linkConstructorsInRounds, type ClassAnswers } from './class-links';
import { linkNormalisers, type NormaliserLinks, type TextScan } from './local-normaliser-links';
import { mentionPattern, type Links } from './program-passes';
import type { FilePasses, ProgramFiles } from './program-file-passes';

export class ProgramLinks {
  private readonly normaliserScans = new Map<string, TextScan>();
  /** The pattern for the current helper names, kept while the names stay the same. */
  private mentions: { readonly key: string; readonly pattern: RegExp | undefined } | undefined;
  /** Whether each file's text mentions a helper, for the text and the pattern it was tested with. */
  private readonly mentionScans = new Map<string, { text: string; pattern: RegExp; mentions: boolean }>();

  constructor(
    private readonly passes: FilePasses,
    private readonly files: ProgramFiles,
  ) {}

  /** Drops what was scanned of a file removed from the program. */
  forget(path: string): void {
    this.normaliserScans.delete(path);
    this.mentionScans.delete(path);
  }

  /** The text names one of the helpers (mentionPattern), tested once per text and set of helper names. */
  private mentionsHelper(path: string, pattern: RegExp, text: string): boolean {
    const scan = this.mentionScans.get(path);
    if (scan?.text === text && scan.pattern === pattern) return scan.mentions;
    const mentions = pattern.test(text);
    this.mentionScans.set(path, { text, pattern, mentions });
    return mentions;
  }

  private mentionPattern(): RegExp | undefined {
    const names = this.passes.summaryNames();
    const key = [...names].sort().join(',');
    if (this.mentions?.key !== key) this.mentions = { key, pattern: mentionPattern(names) };
    return this.mentions.pattern;
  }

  /** Which calls reach which summarised helpers, and so which files need the second pass. */
  helpers(paths: readonly string[]): Links {
    const exports = new Map<string, Map<string, HelperSummary>>();
    for (const path of paths) {
      const summaries = this.passes.firstIfDone(path)?.summaries ?? [];
      if (summaries.length > 0) exports.set(path, new Map(summaries.map((s) => [s.name, s])));
    }
    const links: Links = { exports, calledElsewhere: new Map(), involved: new Set() };
    if (exports.size === 0) return links;
    const mentions = this.mentionPattern();
    for (const path of paths) {
      const text = this.files.texts.get(path) ?? '';
      if (!mentions || !this.mentionsHelper(path, mentions, text)) continue;
      // A caller that names no reduction or backward pass was not parsed the first time: parse it now.
      const pass = this.passes.first(path, false);
      for (const call of pass.calls) {
        const target = this.files.modules.resolve(path, call.module);
        if (!target || target === path || !exports.get(target)?.has(call.name)) continue;
        links.involved.add(path).add(target);
        const called = links.calledElsewhere.get(target) ?? new Set<string>();
        links.calledElsewhere.set(target, called.add(call.name));
      }
    }
    return links;
  }

  /** What the construction sites of these files answer the constructor parameters their classes asked for. */
  classes(paths: readonly string[]): ClassAnswers {
    return linkConstructorsInRounds(
      paths,
      {
        text: (p) => this.files.texts.get(p) ?? '',
        pass: (p, parse) => this.passes.first(p, !parse),
        resolve: (from, module) => this.files.modules.resolve(from, module),
        isTest: (p) => isTestCode(this.files.scopePaths.get(p) ?? p),
      },
      (p, answered) => this.passes.probe(p, answered),
    );
  }

  /** The file builds an object of a class whose methods asked what its constructor was given. */
  buildsRequestedClass(path: string, known: readonly string[]): boolean {
    const names = new Set(known.flatMap((p) => this.passes.firstIfDone(p)?.requests.map((r) => r.className) ?? []));
    if (names.size === 0) return false;
    const text = this.files.texts.get(path) ?? '';
    if (![...names].some((n) => text.includes(n))) return false;
    return this.passes.first(path, false).sites.some((site) => names.has(site.name));
  }

  /** The files that call another file's rescaling reduction, with what the program knows of such helpers. */
  normalisers(paths: readonly string[]): NormaliserLinks {
    return linkNormalisers(paths, {
      text: (p) => this.files.texts.get(p) ?? '',
      normalisers: (p) => this.passes.first(p).normalisers,
      parse: (p) => this.passes.first(p, false),
      resolve: (from, module) => this.files.modules.resolve(from, module),
      scans: this.normaliserScans,
    });
  }
}

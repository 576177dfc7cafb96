// The program's side of the per-class summaries (class-summaries.ts): which constructor parameters the files asked
// about in their first pass, which construction sites of the workspace build those classes, and what each
// parameter then denotes. A file with an answer is analysed again with it.
import {
  agreedArgument,
  type ArgumentDenotation,
  type ConstructionSite,
  type ConstructorRequest,
} from './class-summaries';

/** What the program knows of one file for this purpose. */
export interface ClassPass {
  readonly sites: readonly ConstructionSite[];
  readonly requests: readonly ConstructorRequest[];
}

export interface ClassLinkInputs {
  text(path: string): string;
  /** The file's first pass; `parse` forces a parse of a file the prefilter skipped (its sites are needed). */
  pass(path: string, parse: boolean): ClassPass | undefined;
  resolve(from: string, module: string): string | undefined;
}

/** Per file, the answers to its requests: `Class.param` → what every construction site passes. */
export type ClassAnswers = Map<string, Map<string, ArgumentDenotation>>;

export function requestKey(r: Pick<ConstructorRequest, 'className' | 'param'>): string {
  return `${r.className}.${r.param}`;
}

export function linkConstructors(paths: readonly string[], inputs: ClassLinkInputs): ClassAnswers {
  const answers: ClassAnswers = new Map();
  const asking = new Map<string, readonly ConstructorRequest[]>();
  for (const path of paths) {
    const requests = inputs.pass(path, false)?.requests ?? [];
    if (requests.length > 0) asking.set(path, requests);
  }
  if (asking.size === 0) return answers;
  const classNames = new Set([...asking.values()].flat().map((r) => r.className));
  const mention = new RegExp(`\\b(?:${[...classNames].join('|')})\\b`);
  // Every file that names one of the classes may build it: its sites are read even if nothing else in it is.
  const sitesByClass = new Map<string, { path: string; site: ConstructionSite }[]>();
  for (const path of paths) {
    if (!mention.test(inputs.text(path))) continue;
    for (const site of inputs.pass(path, true)?.sites ?? []) {
      if (!classNames.has(site.name)) continue;
      const list = sitesByClass.get(site.name) ?? [];
      list.push({ path, site });
      sitesByClass.set(site.name, list);
    }
  }
  for (const [path, requests] of asking) {
    for (const request of requests) {
      const sites = (sitesByClass.get(request.className) ?? [])
        .filter((s) => mayBuild(s.path, s.site, path, inputs))
        .map((s) => s.site);
      const agreed = agreedArgument(request, sites);
      if (!agreed) continue;
      const map = answers.get(path) ?? new Map<string, ArgumentDenotation>();
      answers.set(path, map.set(requestKey(request), agreed));
    }
  }
  return answers;
}

/**
 * Whether a site may build the class defined in `definer`. A site that resolves elsewhere counts too, unless that
 * file defines a class of the same name: a re-export through a package's `__init__.py`, or a module outside the
 * workspace, may well be this class, and a site that might be it must not be left out of the agreement.
 */
function mayBuild(sitePath: string, site: ConstructionSite, definer: string, inputs: ClassLinkInputs): boolean {
  if (site.module === undefined) return sitePath === definer;
  const target = inputs.resolve(sitePath, site.module);
  if (target === undefined || target === definer) return true;
  return !new RegExp(`^\\s*class\\s+${site.name}\\b`, 'm').test(inputs.text(target));
}

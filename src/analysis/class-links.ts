// The program's side of the per-class summaries (class-summaries.ts): which constructor parameters the files asked
// about in their first pass, which construction sites of the workspace build those classes, and what each
// parameter then denotes. A file with an answer is analysed again with it.
import type { Dims } from './dims';
import { agreedArgument, placeKey } from './site-agreement';
import {
  inFile,
  dimsKey,
  type SiteKind,
  type ArgumentDenotation,
  type ConstructionSite,
  type ConstructorRequest,
} from './class-summaries';
import type { ValueOrigin } from './constructor-request';
import type { FunctionTemplate } from './parameter-paths';
import { perCallSites } from './per-call-links';

/** What the program knows of one file for this purpose. */
export interface ClassPass {
  readonly sites: readonly ConstructionSite[];
  readonly requests: readonly ConstructorRequest[];
  /** The file's top-level functions whose sites read their list parameters (parameter-paths.ts). */
  readonly templates?: readonly FunctionTemplate[];
}

export interface ClassLinkInputs {
  text(path: string): string;
  /** The file's first pass; `parse` forces a parse of a file the prefilter skipped (its sites are needed). */
  pass(path: string, parse: boolean): ClassPass | undefined;
  resolve(from: string, module: string): string | undefined;
  /** The file is test code (analyze.ts, isTestCode). */
  isTest?(path: string): boolean;
}

/** Per file, the answers to its requests: `Class.param` → what every construction site passes. */
export type ClassAnswers = Map<string, Map<string, ArgumentDenotation>>;

export function requestKey(r: Pick<ConstructorRequest, 'className' | 'param' | 'element'>): string {
  const element = r.element ? `[].${r.element.className}.${r.element.param}` : '';
  return `${r.className}.${r.param}${element}`;
}

/**
 * What a file says once it knows what its own classes were built with: the requests it then makes (a method that
 * could not name its group never asked for its divisor) and its construction sites (a site passing `self.group`
 * on to another class now denotes that group).
 */
export type ClassProbe = (path: string, answers: ReadonlyMap<string, ArgumentDenotation>) => ClassPass | undefined;

// A class built by a class built by a class (Megatron's DDP → buffer → bucket) needs a round per level, and a method
// asks for its divisor only in the round after its group was answered.
const MAX_ROUNDS = 5;

/**
 * The answers of linkConstructors, repeated until they stop changing: each round probes the files that received
 * answers, and their new requests and better-named sites are linked in the next round.
 */
export function linkConstructorsInRounds(
  paths: readonly string[],
  inputs: ClassLinkInputs,
  probe: ClassProbe,
): ClassAnswers {
  const learned = new Map<string, { key: string; pass: ClassPass | undefined }>();
  let answers: ClassAnswers = new Map();
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const next = linkConstructors(paths, {
      ...inputs,
      pass: (path, parse) => {
        const first = inputs.pass(path, parse);
        const later = learned.get(path)?.pass;
        if (!first || !later) return first ?? later;
        const requests = [...first.requests];
        for (const r of later.requests) if (!requests.some((q) => requestKey(q) === requestKey(r))) requests.push(r);
        return { ...first, sites: later.sites, requests };
      },
    });
    if (round > 0 && answersKey(next) === answersKey(answers)) break;
    answers = next;
    for (const [path, map] of answers) {
      const key = answerMapKey(map);
      if (learned.get(path)?.key !== key) learned.set(path, { key, pass: probe(path, map) });
    }
  }
  return answers;
}

/** The answers a file received, as text: equal keys mean the same probe. */
export function answerMapKey(map: ReadonlyMap<string, ArgumentDenotation>): string {
  return [...map]
    .map(([k, d]) => `${k}=${denotationKey(d)}[${(d.bySite ?? []).map(denotationKey).join(',')}]`)
    .sort()
    .join(';');
}

function denotationKey(d: { readonly group?: Dims; readonly size?: Dims; readonly origin?: ValueOrigin }): string {
  const origin = d.origin ? [d.origin, ...d.origin.through].map(placeKey).join('>') : '';
  return `${d.group ? dimsKey(d.group) : ''}/${d.size ? dimsKey(d.size) : ''}@${origin}`;
}

function answersKey(answers: ClassAnswers): string {
  return [...answers]
    .map(([path, map]) => `${path}:${answerMapKey(map)}`)
    .sort()
    .join('\n');
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
  // A top-level function of a file that asks, building one of the classes from a list parameter, is read again
  // with each call in view that passes a proven list (per-call-links.ts): the files that name it are read too.
  const templates = (path: string) => inputs.pass(path, true)?.templates ?? [];
  const functionNames = new Set(
    [...asking.keys()].flatMap((path) =>
      templates(path)
        .filter((t) => t.sites.some((site) => classNames.has(site.className)))
        .map((t) => t.name),
    ),
  );
  const mention = new RegExp(`\\b(?:${[...classNames, ...functionNames].join('|')})\\b`);
  // Every file that names one of the classes may build it: its sites are read even if nothing else in it is.
  const sitesByClass = new Map<string, { path: string; site: ConstructionSite; caller?: string }[]>();
  const called = new Set<string>();
  const add = (name: string, entry: { path: string; site: ConstructionSite; caller?: string }) => {
    const list = sitesByClass.get(name) ?? [];
    list.push(entry);
    sitesByClass.set(name, list);
  };
  for (const path of paths) {
    if (!mention.test(inputs.text(path))) continue;
    for (const site of inputs.pass(path, true)?.sites ?? []) {
      const stamped = inFile(site, path);
      for (const p of functionNames.size > 0 ? perCallSites(path, stamped, { ...inputs, templates }) : []) {
        if (!classNames.has(p.site.name)) continue;
        // A caller in test code builds objects to compare them: it does not stand in for the function's callers.
        if (!inputs.isTest?.(path)) called.add(`${p.definer}:${p.function}`);
        add(p.site.name, { path: p.definer, site: p.site, caller: path });
      }
      if (classNames.has(site.name)) add(site.name, { path, site: stamped });
    }
  }
  const kindOf = (s: { path: string; site: ConstructionSite; caller?: string }, definer: string): SiteKind => {
    if (s.caller !== undefined) return inputs.isTest?.(s.caller) ? 'test' : 'per-call';
    const kind = siteKind(s.path, s.site, definer, inputs);
    return kind === 'certain' && s.site.inFunction && called.has(`${s.path}:${s.site.inFunction}`) ? 'called' : kind;
  };
  for (const [path, requests] of asking) {
    for (const request of requests) {
      const found = (sitesByClass.get(request.className) ?? []).filter((s) => mayBuild(s.path, s.site, path, inputs));
      const read = found.map((s) =>
        request.element
          ? elementSite(request, s.path, s.site, path, inputs, kindOf(s, path))
          : { site: s.site, kind: kindOf(s, path) },
      );
      const agreed = agreedArgument(
        request,
        read.map((r) => r.site),
        read.map((r) => r.kind),
      );
      if (!agreed) continue;
      const map = answers.get(path) ?? new Map<string, ArgumentDenotation>();
      answers.set(path, map.set(requestKey(request), agreed));
    }
  }
  return answers;
}

/**
 * A site as it answers a request for an attribute of its list argument's elements: the list's slot holds what every
 * element passes for the element class's parameter (nothing when an element is of another class, or the elements
 * disagree), and the site is certain only when the elements' class is certain too. The element class is defined in
 * the requesting file, as the outer class is.
 */
function elementSite(
  request: ConstructorRequest,
  sitePath: string,
  site: ConstructionSite,
  definer: string,
  inputs: ClassLinkInputs,
  siteKindHere: SiteKind,
): { site: ConstructionSite; kind: SiteKind } {
  const wanted = request.element!;
  const list = site.opaque
    ? undefined
    : site.keywords.has(request.param)
      ? site.keywords.get(request.param)
      : request.position !== undefined
        ? site.positional[request.position]
        : undefined;
  let kind = siteKindHere;
  const values: (ArgumentDenotation | undefined)[] = [];
  for (const e of list?.elements ?? []) {
    const built: ConstructionSite = { ...e, opaque: false };
    if (e.name !== wanted.className || !mayBuild(sitePath, built, definer, inputs)) values.push(undefined);
    else {
      if (kind === 'certain') kind = siteKind(sitePath, built, definer, inputs);
      values.push(
        e.keywords.has(wanted.param)
          ? e.keywords.get(wanted.param)
          : wanted.position !== undefined
            ? e.positional[wanted.position]
            : undefined,
      );
    }
  }
  const first = values[0];
  const agreed =
    first && values.every((v) => v && denotationKey(v) === denotationKey(first))
      ? {
          ...(first.group ? { group: first.group } : {}),
          ...(first.size ? { size: first.size } : {}),
          ...(first.origin ? { origin: first.origin } : {}),
        }
      : undefined;
  const positional = [...site.positional];
  const keywords = new Map(site.keywords);
  if (site.keywords.has(request.param)) keywords.set(request.param, agreed);
  else if (request.position !== undefined) positional[request.position] = agreed;
  return { site: { ...site, positional, keywords }, kind };
}

/**
 * A site that builds the class for certain (its import resolves to the definer), one in test code (it builds objects
 * to compare them, not to train), or one that only may build it.
 */
function siteKind(sitePath: string, site: ConstructionSite, definer: string, inputs: ClassLinkInputs): SiteKind {
  if (inputs.isTest?.(sitePath)) return 'test';
  const target = site.module === undefined ? sitePath : inputs.resolve(sitePath, site.module);
  return target === definer ? 'certain' : 'possible';
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

// What a constructor parameter denotes over the construction sites of its class (class-summaries.ts gathers them,
// class-links.ts links them to the requests). A top-level function's own site stands for every caller of the
// function, the ones out of view included, so it names nothing the function's parameters decide; a call in view
// whose list is proven gives the same site read with that call's values (a 'per-call' site). Such a site is an
// execution that happens: its object is judged with its own values, while the function's own site keeps the agreed
// value unknown (silence for the callers not in view) and the per-call sites take no part in the agreement.
import type { Dims } from './dims';
import { dimsKey } from './dims';
import type { ArgumentDenotation, ConstructorRequest, ProgramPlace } from './constructor-request';
import type { ConstructionSite, SiteKind } from './class-summaries';

/**
 * What a constructor parameter denotes over all the sites that build the class: the group (or size) every site
 * passes, or nothing when there is no site, or one passes something else, nothing, or something unnamed; and what
 * each site passes when every site names it (`kinds[i]`: the i-th site builds the class for certain, may build it,
 * is test code, is a function's site read with a call in view, or is such a function's own site).
 */
export function agreedArgument(
  request: ConstructorRequest,
  sites: readonly ConstructionSite[],
  kinds: readonly SiteKind[] = [],
): ArgumentDenotation | undefined {
  if (sites.length === 0) return undefined;
  const all: (ArgumentDenotation | undefined)[] = sites.map((site) =>
    site.opaque
      ? undefined
      : site.keywords.has(request.param)
        ? site.keywords.get(request.param)
        : request.position !== undefined
          ? site.positional[request.position]
          : undefined,
  );
  // The per-call sites repeat a function's own site for one caller: the agreement is the own site's.
  const given = all.filter((_, i) => kinds[i] !== 'per-call');
  const agree = (pick: (d: ArgumentDenotation) => Dims | undefined): Dims | undefined => {
    const values = given.map((d) => (d ? pick(d) : undefined));
    if (values.length === 0 || values.some((v) => !v)) return undefined;
    const key = dimsKey(values[0]!);
    return values.every((v) => dimsKey(v!) === key) ? values[0] : undefined;
  };
  const group = agree((d) => d.group);
  const size = agree((d) => d.size);
  const groupDict = agree((d) => d.groupDict);
  // Each object is judged with what its own site passed, when every site builds this class for certain and names
  // the argument; sites in test code build objects to compare them, not to train, and are left out. A function's
  // own site is left out where calls in view read it: those calls' sites are judged, each where it names the value.
  const judged = all.flatMap((d, i) => (kinds[i] === 'test' || kinds[i] === 'called' ? [] : [{ d, kind: kinds[i] }]));
  const named = (d: ArgumentDenotation | undefined) => !!d && !!(d.group || d.size);
  const bySite =
    judged.length > 0 &&
    judged.every((j) => j.kind === 'per-call' || (j.kind === 'certain' && named(j.d))) &&
    judged.some((j) => named(j.d))
      ? judged.map(({ d, kind }) => ({
          group: d?.group,
          size: d?.size,
          ...(d?.origin ? { origin: d.origin } : {}),
          ...(kind === 'per-call' ? { perCall: true } : {}),
        }))
      : undefined;
  if (!group && !size && !groupDict && !bySite) return undefined;
  // The sites agree on a value; it was chosen at one place only when every site passes the one chosen there.
  const origins = given.map((d) => d?.origin);
  const origin =
    origins[0] && origins.every((o) => o && placeKey(o) === placeKey(origins[0]!)) ? origins[0] : undefined;
  return {
    ...(group ? { group } : {}),
    ...(size ? { size } : {}),
    ...(groupDict ? { groupDict } : {}),
    ...(bySite ? { bySite } : {}),
    ...((group || size) && origin ? { origin } : {}),
  };
}

/** A place as text: equal keys are the same place. */
export function placeKey(p: ProgramPlace): string {
  return `${p.file ?? ''}:${p.range.startLine}:${p.range.startColumn}`;
}

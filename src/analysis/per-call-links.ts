// A top-level function's sites read with its calls in view. The defining file records each site's arguments as paths
// over the function's list parameters (parameter-paths.ts); a caller's construction site notes the calls that receive
// a local list holding only that construction (per-call-sites.ts). Joined here, each such call gives the function's
// sites one more site each, a 'per-call' site of the defining file: an argument read from the list's elements is
// what the caller's construction passed for the constructor parameter the path ends in, in that caller's context,
// and every other argument is unknown. The function's own sites then stand for its callers not in view ('called').
import type { ConstructionSite } from './class-summaries';
import type { ArgumentDenotation } from './constructor-request';
import type { FunctionTemplate, ParameterPath } from './parameter-paths';
import type { CallSlot } from './per-call-sites';

export interface PerCallInputs {
  resolve(from: string, module: string): string | undefined;
  /** The templates of a file's top-level functions (parameter-paths.ts). */
  templates(path: string): readonly FunctionTemplate[];
}

/** A per-call site, under the file that defines the function, and the function it reads. */
export interface PerCallSite {
  readonly definer: string;
  readonly function: string;
  readonly site: ConstructionSite;
}

/**
 * The per-call sites that a caller's construction site gives (its origins already carry the caller's file): one for
 * each site of each function that receives the caller's list, when the construction is of a class of the defining
 * file and its path names that class.
 */
export function perCallSites(callerPath: string, site: ConstructionSite, inputs: PerCallInputs): PerCallSite[] {
  if (site.opaque || !site.listedFor) return [];
  const classFile = site.module === undefined ? callerPath : inputs.resolve(callerPath, site.module);
  const out: PerCallSite[] = [];
  for (const slot of site.listedFor) {
    const definer = slot.module === undefined ? callerPath : inputs.resolve(callerPath, slot.module);
    if (!definer || definer !== classFile) continue;
    const template = inputs.templates(definer).find((t) => t.name === slot.function);
    const listParam = template ? parameterOf(template, slot) : undefined;
    if (!template || !listParam) continue;
    for (const t of template.sites) {
      const read = (path: ParameterPath | undefined) =>
        path && path.listParam === listParam ? denotationAt(site, path) : undefined;
      const positional = t.positional.map(read);
      const keywords = new Map([...t.keywords].map(([name, path]) => [name, read(path)] as const));
      if (!positional.some(Boolean) && ![...keywords.values()].some(Boolean)) continue;
      out.push({
        definer,
        function: template.name,
        site: { name: t.className, positional, keywords, opaque: false },
      });
    }
  }
  return out;
}

/** The parameter a call's slot binds: by keyword, or by position among the function's parameters. */
function parameterOf(template: FunctionTemplate, slot: CallSlot): string | undefined {
  if (slot.keyword !== undefined) return template.params.includes(slot.keyword) ? slot.keyword : undefined;
  return slot.position !== undefined ? template.params[slot.position] : undefined;
}

/** What the caller's construction passed where the path ends: an attribute's slot, or the owned elements' slots. */
function denotationAt(site: ConstructionSite, path: ParameterPath): ArgumentDenotation | undefined {
  if (path.kind === 'attribute') {
    const slot = path.byClass.get(site.name);
    return slot ? passed(site, slot) : undefined;
  }
  const owned = path.byClass.get(site.name);
  if (!owned) return undefined;
  const keywords = new Map([...owned.slots].map(([param, slot]) => [param, passed(site, slot)] as const));
  if (![...keywords.values()].some(Boolean)) return undefined;
  return { elements: [{ name: owned.elementClass, positional: [], keywords }] };
}

/** The caller's argument for a constructor slot, unless it may differ between the list's elements. */
function passed(site: ConstructionSite, slot: { param: string; position: number }): ArgumentDenotation | undefined {
  const byName = site.keywords.has(slot.param);
  const key = byName ? slot.param : String(slot.position);
  if (site.loopVarying?.has(key)) return undefined;
  return byName ? site.keywords.get(slot.param) : site.positional[slot.position];
}

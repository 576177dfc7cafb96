// Part (b) of the expert-mesh proof (expert-mesh-average.ts): the experts' mesh, the model's mesh and the dispatch
// mesh compared by their base dimensions. The three are selected by names from one built mesh: the one builder of
// the program whose `init_device_mesh` names and `_flatten` names cover every name used. Each branch the model's
// mesh may be chosen in is read on its own, with the facts known where the experts are wrapped; a branch whose lists
// cannot be decided is skipped. The experts' dimensions must all be in the model's mesh, and the model's other
// dimensions must all be dimensions of the dispatch mesh under the same conditions: then the model's mesh is the
// experts' mesh times those dispatch ranks, and averaging the experts' sum over only their own mesh leaves the
// dispatch ranks' count as the factor. Dispatch dimensions outside the model's mesh are reported as the condition.
import type { Cond } from './branch-guards';
import type { Known } from './branch-guards';
import type { DimEntry, MeshBuilder, NameList } from './mesh-dims';

export interface MeshComparison {
  readonly extra: readonly DimEntry[];
  readonly outside: readonly DimEntry[];
  /** The branch of the model's mesh for which it holds. */
  readonly branch: readonly Cond[];
}

export function compare(
  known: Known,
  expert: readonly NameList[],
  model: readonly NameList[],
  dispatch: readonly DimEntry[],
  builders: readonly MeshBuilder[],
): MeshComparison | undefined {
  if (expert.length !== 1) return undefined;
  const used = new Set([...expert, ...model].flatMap((l) => l.entries.map((e) => e.name)));
  dispatch.forEach((e) => used.add(e.name));
  const covering = builders.filter((b) => [...used].every((n) => b.names.has(n) || b.flattens.has(n)));
  if (covering.length !== 1) return undefined;
  const builder = covering[0];
  const expand = (entries: readonly DimEntry[]): DimEntry[] =>
    entries.flatMap((e) =>
      builder.names.has(e.name) ? [{ name: e.name, guards: [] }] : builder.flattens.get(e.name)!,
    );
  const dispatchDims = expand(dispatch);
  for (const alternative of model) {
    if (known.all(alternative.guards) === false) continue;
    const facts = known.with(alternative.guards);
    const decide = (entries: readonly DimEntry[]) => {
      const values = entries.map((e) => facts.all(e.guards));
      return values.includes(undefined) ? undefined : entries.filter((_, i) => values[i]);
    };
    const expertIn = decide(expert[0].entries);
    const modelIn = decide(alternative.entries);
    if (!expertIn || !modelIn) continue;
    const expertDims = expand(expertIn);
    const modelDims = expand(modelIn);
    const expertNames = new Set(expertDims.map((d) => d.name));
    if (expertDims.some((d) => d.guards.length > 0)) continue;
    const shared = modelDims.filter((d) => expertNames.has(d.name));
    if (shared.length !== expertNames.size || shared.some((d) => d.guards.length > 0)) continue;
    const extra = modelDims.filter((d) => !expertNames.has(d.name));
    if (extra.length === 0 || dispatchDims.some((d) => expertNames.has(d.name))) continue;
    const same = (a: DimEntry, b: DimEntry) =>
      a.name === b.name && JSON.stringify(a.guards) === JSON.stringify(b.guards);
    if (!extra.every((e) => dispatchDims.some((d) => same(d, e)))) continue;
    const modelNames = new Set(modelDims.map((d) => d.name));
    const outside = dispatchDims.filter((d) => !modelNames.has(d.name));
    if (outside.some((d) => d.guards.length === 0)) continue;
    return { extra, outside, branch: alternative.guards };
  }
  return undefined;
}

// A construction site inside a method of a class that was itself built several times (Megatron's DDP builds one
// buffer for the dense and one for the expert gradients, and each buffer builds its buckets with `self.group`)
// builds one object per outer object, each with that object's values. The values of `self.group` then differ by
// outer object (group-sizes.ts keys them by the outer class's `__init__` and the index of its construction site),
// and no single value holds for the site. The site is split into one variant per outer object, so a class built by
// a class built by a class still knows, per object, which group and which factor go together.
import { unparen, type PyNode } from './tree';
import type { Env } from './sizes';
import type { DenotationKind, GroupSizes, SizeAlternative, SizeOrigin } from './group-sizes';
import type { ArgumentDenotation, ValueOrigin } from './constructor-request';
import { dimsKey, type Dims } from './dims';

// More outer objects than this are not split: the site keeps no per-object values.
const MAX_VARIANTS = 8;

/** Where the value an argument passes was chosen, as a place the program can name in other files. */
export type OriginOf = (origin: SizeOrigin | undefined, argument: PyNode) => ValueOrigin;

/**
 * The denotations of a site's arguments, once per variant: one variant when every argument has one value on every
 * path (or none); else one per consistent choice of the paths the values depend on (the outer object the enclosing
 * method runs on, the `if` branches that chose a factor), so each variant is an object that may be built, with the
 * values that go together. More than MAX_VARIANTS choices keep only the values that hold on every path.
 */
export function siteVariants(
  sizes: GroupSizes,
  nodes: readonly PyNode[],
  env: Env,
  originOf?: OriginOf,
): (ArgumentDenotation | undefined)[][] {
  const values = nodes.map((node) => alternatives(sizes, node, env));
  const denote = (i: number, kind: DenotationKind, dims: Dims | undefined, origin: SizeOrigin | undefined) =>
    dims ? { [kind]: dims, ...(originOf ? { origin: originOf(origin, nodes[i]) } : {}) } : undefined;
  const plain = values.map((v, i) => (v ? denote(i, v.kind, single(v.list), commonOrigin(v.list)) : undefined));
  const branching = values.flatMap((v, i) => (v && !plain[i] ? [{ index: i, kind: v.kind, list: v.list }] : []));
  if (branching.length === 0) return [plain];
  let choices: { picked: Map<number, SizeAlternative>; branches: Map<PyNode, number> }[] = [
    { picked: new Map(), branches: new Map() },
  ];
  for (const arg of branching) {
    const next: typeof choices = [];
    for (const c of choices) {
      for (const a of arg.list) {
        if (![...a.branches].every(([k, v]) => !c.branches.has(k) || c.branches.get(k) === v)) continue;
        next.push({
          picked: new Map(c.picked).set(arg.index, a),
          branches: new Map([...c.branches, ...a.branches]),
        });
      }
    }
    choices = next;
    if (choices.length > MAX_VARIANTS * MAX_VARIANTS) return [plain];
  }
  // Paths that give the same values build the same kind of object.
  const unique = new Map<string, Map<number, SizeAlternative>>();
  for (const c of choices) {
    const key = branching.map((b) => dimsKey(c.picked.get(b.index)!.dims)).join('|');
    if (!unique.has(key)) unique.set(key, c.picked);
  }
  if (unique.size === 0 || unique.size > MAX_VARIANTS) return [plain];
  return [...unique.values()].map((picked) =>
    values.map((v, i) => {
      const a = picked.get(i);
      return v && a ? denote(i, v.kind, a.dims, a.origin) : plain[i];
    }),
  );
}

function alternatives(
  sizes: GroupSizes,
  node: PyNode,
  env: Env,
): { kind: DenotationKind; list: SizeAlternative[] } | undefined {
  const n = unparen(node);
  // A dict of groups may be passed only where it exists (`d if has_moe else None`).
  const groupDict = () => {
    const dicts = sizes.groupDict(n, env);
    return dicts && dicts.length > 0 ? { kind: 'groupDict' as const, list: dicts } : undefined;
  };
  if (n.type === 'conditional_expression') return groupDict();
  if (n.type !== 'identifier' && n.type !== 'attribute' && n.type !== 'call' && n.type !== 'binary_operator')
    return undefined;
  const group = sizes.group(n, env);
  if (group && group.length > 0) return { kind: 'group', list: group };
  const size = sizes.size(n, env);
  return size && size.length > 0 ? { kind: 'size', list: size } : groupDict();
}

/** The origin every path's value shares; none when the paths chose it at different places. */
function commonOrigin(values: readonly SizeAlternative[]): SizeOrigin | undefined {
  const first = values[0]?.origin;
  if (!first) return undefined;
  const same = (o: SizeOrigin | undefined) =>
    !!o && ('node' in first ? 'node' in o && o.node === first.node : 'passed' in o && o.passed === first.passed);
  return values.every((v) => same(v.origin)) ? first : undefined;
}

/** The one value every path gives; a value that depends on the path in another file is not one denotation. */
export function single(values: readonly SizeAlternative[] | undefined): Dims | undefined {
  if (!values || values.length === 0) return undefined;
  const key = dimsKey(values[0].dims);
  return values.every((v) => dimsKey(v.dims) === key) ? values[0].dims : undefined;
}

// A construction site inside a method of a class that was itself built several times (Megatron's DDP builds one
// buffer for the dense and one for the expert gradients, and each buffer builds its buckets with `self.group`)
// builds one object per outer object, each with that object's values. The values of `self.group` then differ by
// outer object (group-sizes.ts keys them by the outer class's `__init__` and the index of its construction site),
// and no single value holds for the site. The site is split into one variant per outer object, so a class built by
// a class built by a class still knows, per object, which group and which factor go together.
import { unparen, type PyNode } from './tree';
import type { Env } from './sizes';
import type { GroupSizes, SizeAlternative } from './group-sizes';
import type { ArgumentDenotation } from './constructor-request';
import { dimsKey, type Dims } from './dims';

// More outer objects than this are not split: the site keeps no per-object values.
const MAX_VARIANTS = 8;

/**
 * The denotations of a site's arguments, once per variant: one variant when every argument has one value on every
 * path (or none), one per outer object when the values differ only by the object the enclosing method runs on.
 */
export function siteVariants(
  sizes: GroupSizes,
  nodes: readonly PyNode[],
  env: Env,
): (ArgumentDenotation | undefined)[][] {
  const values = nodes.map((node) => alternatives(sizes, node, env));
  const keys = new Set<PyNode>();
  for (const v of values)
    for (const a of v?.list ?? []) for (const k of a.branches.keys()) if (isObjectKey(k)) keys.add(k);
  const [key] = keys;
  if (keys.size !== 1 || !key) return [values.map((v) => (v ? denote(v.kind, single(v.list)) : undefined))];
  let count = 0;
  for (const v of values) for (const a of v?.list ?? []) count = Math.max(count, (a.branches.get(key) ?? -1) + 1);
  if (count > MAX_VARIANTS) return [values.map((v) => (v ? denote(v.kind, single(v.list)) : undefined))];
  const out: (ArgumentDenotation | undefined)[][] = [];
  for (let i = 0; i < count; i++) {
    out.push(
      values.map((v) => {
        if (!v) return undefined;
        const own = v.list.filter((a) => !a.branches.has(key) || a.branches.get(key) === i);
        return denote(v.kind, single(own));
      }),
    );
  }
  return out;
}

/** A construction-site key of group-sizes.ts: the `__init__` of the class whose objects the values differ by. */
function isObjectKey(node: PyNode): boolean {
  return node.type === 'function_definition';
}

function alternatives(
  sizes: GroupSizes,
  node: PyNode,
  env: Env,
): { kind: 'group' | 'size'; list: SizeAlternative[] } | undefined {
  const n = unparen(node);
  if (n.type !== 'identifier' && n.type !== 'attribute' && n.type !== 'call' && n.type !== 'binary_operator')
    return undefined;
  const group = sizes.group(n, env);
  if (group && group.length > 0) return { kind: 'group', list: group };
  const size = sizes.size(n, env);
  return size && size.length > 0 ? { kind: 'size', list: size } : undefined;
}

function denote(kind: 'group' | 'size', dims: Dims | undefined): ArgumentDenotation | undefined {
  return dims ? { [kind]: dims } : undefined;
}

/** The one value every path gives; a value that depends on the path in another file is not one denotation. */
export function single(values: readonly SizeAlternative[] | undefined): Dims | undefined {
  if (!values || values.length === 0) return undefined;
  const key = dimsKey(values[0].dims);
  return values.every((v) => dimsKey(v.dims) === key) ? values[0].dims : undefined;
}

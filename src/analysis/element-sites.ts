// The objects a construction site builds inside a list argument (`GradBucketGroup([GradBucket(grads, factor)], group)`):
// their classes and what their arguments denote, read with the site's own arguments so that each variant of the site
// keeps an element's factor together with the group the same path passed (element-attributes.ts asks for them).
import { child, hasSplat, type PyNode } from './tree';
import { listItems } from './list-origins';
import { listedElementCall } from './listed-elements';
import type { FileModel } from './scope';
import type { GroupSizes } from './group-sizes';
import { siteVariants, type OriginOf } from './site-variants';
import type { ArgumentDenotation, ElementSite } from './constructor-request';

/** An element of a list argument built at the site: its class, its call's argument nodes and their names. */
export interface ElementCall {
  readonly target: { module?: string; name: string };
  readonly positionalCount: number;
  readonly names: readonly string[];
  readonly nodes: readonly PyNode[];
}

/**
 * The elements of a list argument when every one is a construction (`[Bucket(g, f)]`), written at the site or
 * gathered in a local list of the site's function (list-origins.ts); else undefined.
 */
export function elementCalls(
  model: FileModel,
  node: PyNode,
  constructed: (call: PyNode) => { module?: string; name: string } | undefined,
): ElementCall[] | undefined {
  // An element read from another list (`[bucket]` of `for bucket in buffer.buckets`) holds what that list's
  // construction passed (listed-elements.ts).
  const listed = new Map<PyNode, NonNullable<ReturnType<typeof listedElementCall>>>();
  const isElement = (item: PyNode): boolean => {
    if (item.type === 'call' && constructed(item)) return true;
    const read = item.type === 'identifier' || item.type === 'attribute' ? listedElementCall(model, item) : undefined;
    if (read) listed.set(item, read);
    return !!read;
  };
  const items = listItems(model, node, isElement);
  if (!items || items.length === 0) return undefined;
  const out: ElementCall[] = [];
  for (const item of items) {
    const read = listed.get(item);
    if (read) {
      const { className, ...rest } = read;
      out.push({ target: { name: className }, ...rest });
      continue;
    }
    const target = item.type === 'call' ? constructed(item) : undefined;
    const list = item.type === 'call' ? child(item, 'arguments') : undefined;
    if (!target || hasSplat(list)) return undefined;
    const args = model.syntax.args(item);
    const names = [...args.keywords.keys()];
    const nodes = [...args.positional, ...names.map((name) => args.keywords.get(name)!.value)];
    out.push({ target, positionalCount: args.positional.length, names, nodes });
  }
  return out;
}

/**
 * The site's variants with its lists' elements, unless the elements' values split the site into more variants than
 * siteVariants keeps: then the site's own variants, without elements, as before elements were read.
 */
export function variantsOf(
  sizes: GroupSizes,
  own: readonly PyNode[],
  nodes: readonly PyNode[],
  lists: readonly (ElementCall[] | undefined)[],
  env: NonNullable<Parameters<typeof siteVariants>[2]>,
  originOf: OriginOf,
): (ArgumentDenotation | undefined)[][] {
  const plain = siteVariants(sizes, own, env, originOf);
  if (nodes.length === own.length) return plain;
  const all = siteVariants(sizes, nodes, env, originOf);
  return all.length < plain.length ? plain : all.map((values) => withElements(values, own.length, lists));
}

/** The site's own denotations, with each list of constructions given its elements' denotations (read after them). */
function withElements(
  values: readonly (ArgumentDenotation | undefined)[],
  ownCount: number,
  lists: readonly (ElementCall[] | undefined)[],
): (ArgumentDenotation | undefined)[] {
  let next = ownCount;
  return values.slice(0, ownCount).map((value, i) => {
    const list = lists[i];
    if (!list) return value;
    const elements: ElementSite[] = list.map((e) => {
      const mine = values.slice(next, next + e.nodes.length);
      next += e.nodes.length;
      return {
        ...e.target,
        positional: mine.slice(0, e.positionalCount),
        keywords: new Map(e.names.map((name, j) => [name, mine[e.positionalCount + j]] as const)),
      };
    });
    return { ...value, elements };
  });
}

// Link ids of a symmetric multi-node topology answered from its layout, without building every node's links. A
// trace names the links each span crosses, and at 131,072 GPUs building the million link objects behind those names
// cost more time and memory than the simulation itself. Node k's links are node 0's with the node prefix `n0.`
// renamed `nk.`, and a NIC's link to its rail's leaf names the leaf of node k (`leafL`, L = k / nodesPerLeaf); the
// leaf and spine links are shared and named once. test/unit/engine/link-ids.test.ts holds this against the built
// links of every preset.

/** What naming reads of a SymmetricLayout (link-table.ts, which imports this file): node 0's links and the counts. */
export interface IdLayout {
  readonly template: readonly { readonly id: string }[];
  readonly nodes: number;
  readonly intraPerNode: number;
  readonly shared: number;
  readonly nicPerNode: number;
  readonly nodesPerLeaf: number;
}

/** The ids of a topology's links by index, and whether an id names one of them. */
export interface LinkIds {
  id(index: number): string;
  has(id: string): boolean;
}

const NODE_PREFIX = /\bn(\d+)\./g;
const LEAF = /\.leaf(\d+)\b/g;

/** Node 0's id `template` as node `node`'s, under leaf `leaf` (node 0's links name leaf 0). */
function renamed(template: string, node: number, leaf: number): string {
  return template.replace(NODE_PREFIX, `n${node}.`).replace(LEAF, `.leaf${leaf}`);
}

/** The node and leaf an id names, and the id with both replaced by `#`: the key of the template it copies. */
function normalised(id: string): { key: string; node: number | undefined; leaves: number[] } | undefined {
  let node: number | undefined;
  let mixed = false;
  const leaves: number[] = [];
  const key = id
    .replace(NODE_PREFIX, (_, n: string) => {
      if (node !== undefined && node !== Number(n)) mixed = true;
      node = Number(n);
      return 'n#.';
    })
    .replace(LEAF, (_, l: string) => {
      leaves.push(Number(l));
      return '.leaf#';
    });
  return mixed ? undefined : { key, node, leaves };
}

export function layoutLinkIds(layout: IdLayout): LinkIds {
  const { template, nodes, intraPerNode, shared, nicPerNode } = layout;
  const nodesPerLeaf = layout.nodesPerLeaf;
  const intraEnd = nodes * intraPerNode;
  const sharedEnd = intraEnd + shared;
  const leafOf = (node: number): number => Math.floor(node / nodesPerLeaf);
  let perNodeKeys: Map<string, number> | undefined;
  let sharedIds: Set<string> | undefined;
  const id = (index: number): string => {
    if (index < intraEnd) return renamed(template[index % intraPerNode].id, Math.floor(index / intraPerNode), 0);
    if (index < sharedEnd) return template[intraPerNode + (index - intraEnd)].id;
    const node = Math.floor((index - sharedEnd) / nicPerNode);
    return renamed(template[intraPerNode + shared + ((index - sharedEnd) % nicPerNode)].id, node, leafOf(node));
  };
  const has = (text: string): boolean => {
    if (!perNodeKeys || !sharedIds) {
      perNodeKeys = new Map();
      sharedIds = new Set();
      for (let t = 0; t < template.length; t++) {
        if (t >= intraPerNode && t < intraPerNode + shared) sharedIds.add(template[t].id);
        else perNodeKeys.set(normalised(template[t].id)!.key, t);
      }
    }
    const parts = normalised(text);
    if (!parts) return false;
    if (parts.node === undefined) return sharedIds.has(text);
    if (parts.node >= nodes) return false;
    const t = perNodeKeys.get(parts.key);
    if (t === undefined) return false;
    // The key drops which leaf: only the one the node hangs from is a link.
    return renamed(template[t].id, parts.node, t < intraPerNode ? 0 : leafOf(parts.node)) === text;
  };
  return { id, has };
}

/** The ids of a built links array. */
export function builtLinkIds(links: readonly { readonly id: string }[]): LinkIds {
  let ids: Set<string> | undefined;
  return {
    id: (index) => links[index].id,
    has: (text) => (ids ??= new Set(links.map((l) => l.id))).has(text),
  };
}

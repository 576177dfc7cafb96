// What the simulator reads of each link (bandwidth, latency, kind) by index, without the link objects. Resolution
// of a multi-node system builds one node's links, the shared switch links and one node's NIC links, and describes
// every other node's links as copies of those (a node's links repeat node 0's at a constant stride); the full list
// of vertices and links, with their per-node ids, is built only when a caller reads `topology.links` or
// `topology.vertices` (the topology view, a trace, an edit). A system whose topology was replaced (an edited copy)
// is read from its own links.
import type { GBps, Micros } from '../units';
import { builtLinkIds, layoutLinkIds, type LinkIds } from './link-ids';
import type { Link, LinkKind, Topology } from './model';

export interface LinkTable {
  /** Number of directed links: every resource id below it is a link. */
  readonly count: number;
  GBps(index: number): GBps;
  latencyUs(index: number): Micros;
  kind(index: number): LinkKind;
}

const tables = new WeakMap<object, LinkTable>();
const idTables = new WeakMap<object, LinkIds>();
/** Lazy topologies whose vertices and links have been built (a read of either builds both). */
const builtTopologies = new WeakSet<Topology>();

/** Whether a topology's per-node vertices and links exist: false for a resolved system nobody has inspected. */
export function materialised(topology: Topology): boolean {
  return !tables.has(topology) || builtTopologies.has(topology);
}

/** The link table of a topology: the compact description resolution registered, or one over its links array. */
export function linkTable(topology: Topology): LinkTable {
  const registered = tables.get(topology);
  if (registered) return registered;
  const links = topology.links;
  let table = tables.get(links);
  if (!table) {
    table = {
      count: links.length,
      GBps: (i) => links[i].GBps,
      latencyUs: (i) => links[i].latencyUs,
      kind: (i) => links[i].kind,
    };
    tables.set(links, table);
  }
  return table;
}

/**
 * The ids of a topology's links by index: answered from the layout for a resolved system (its links are not built
 * for it), else from its links array.
 */
export function linkIds(topology: Topology): LinkIds {
  const registered = idTables.get(topology);
  if (registered) return registered;
  const links = topology.links;
  let ids = idTables.get(links);
  if (!ids) idTables.set(links, (ids = builtLinkIds(links)));
  return ids;
}

/**
 * Layout of a symmetric multi-node topology, in link indices: every node's intra-node links (`intraPerNode` each,
 * node after node), then the shared leaf and spine links, then every node's NIC-side links (`nicPerNode` each).
 * `template` holds node 0's intra-node links, the shared links and node 0's NIC-side links, in that order.
 */
export interface SymmetricLayout {
  readonly nodes: number;
  readonly template: readonly Link[];
  readonly intraPerNode: number;
  readonly shared: number;
  readonly nicPerNode: number;
  /** Nodes under one leaf switch of a rail: node k's NICs link to leaf k / nodesPerLeaf. */
  readonly nodesPerLeaf: number;
}

/** The link a virtual index copies: node k's link i has node 0's properties. */
export function templateIndex(layout: SymmetricLayout, index: number): number {
  const intraEnd = layout.nodes * layout.intraPerNode;
  if (index < intraEnd) return index % layout.intraPerNode;
  const sharedEnd = intraEnd + layout.shared;
  if (index < sharedEnd) return layout.intraPerNode + (index - intraEnd);
  return layout.intraPerNode + layout.shared + ((index - sharedEnd) % layout.nicPerNode);
}

/**
 * A topology whose vertices and links are built by `materialise` on first read, with a link table answered from
 * the layout meanwhile. `onMaterialised` sees the built topology (resolution records that its nodes are identical).
 */
export function lazyTopology(
  layout: SymmetricLayout,
  materialise: () => Topology,
  onMaterialised: (built: Topology) => void,
): Topology {
  let built: Topology | undefined;
  const get = (): Topology => {
    if (!built) {
      built = materialise();
      if (built.links.length !== table.count)
        throw new Error(`the topology has ${built.links.length} links, its layout ${table.count}`);
      onMaterialised(built);
      builtTopologies.add(topology);
    }
    return built;
  };
  const { template } = layout;
  const table: LinkTable = {
    count: layout.nodes * (layout.intraPerNode + layout.nicPerNode) + layout.shared,
    GBps: (i) => template[templateIndex(layout, i)].GBps,
    latencyUs: (i) => template[templateIndex(layout, i)].latencyUs,
    kind: (i) => template[templateIndex(layout, i)].kind,
  };
  const topology: Topology = {
    get vertices() {
      return get().vertices;
    },
    get links() {
      return get().links;
    },
  };
  tables.set(topology, table);
  idTables.set(topology, layoutLinkIds(layout));
  return topology;
}

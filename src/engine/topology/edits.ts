// Which links of an edited system differ from the system it was resolved as. An edit (a degraded cable, a slow
// node) copies a resolved system with a new links array and keeps its fabric, so the routes are still the resolved
// ones and the layout resolution recorded for that fabric says what every link was: the simulator can then treat
// the few changed links apart and let the unchanged nodes and rails stand for each other (algorithms/edited-classes.ts).
import type { Fabric, System } from './model';
import { templateIndex, type SymmetricLayout } from './link-table';

/** The layout each multi-node fabric was resolved with: its links' original properties by index. */
const layouts = new WeakMap<Fabric, SymmetricLayout>();

/** Records the layout a multi-node system was resolved with, for its fabric (and so for every edited copy). */
export function recordLayout(fabric: Fabric, layout: SymmetricLayout): void {
  layouts.set(fabric, layout);
}

/** The layout a multi-node fabric was resolved with, or undefined (one node, a hand-built system). */
export function resolvedLayout(fabric: Fabric): SymmetricLayout | undefined {
  return layouts.get(fabric);
}

/** An edited system's links that differ from the resolved ones, with the layout that places them. */
export interface LinkEdits {
  readonly layout: SymmetricLayout;
  /** Indices of the links whose bandwidth, latency or kind differ from the resolved system's, ascending. */
  readonly changed: Int32Array;
}

const edits = new WeakMap<object, LinkEdits | null>();

/**
 * The links of `system` that differ from the system its fabric was resolved as, or undefined when that is not
 * known: no layout was recorded (one node, a hand-built system) or the links no longer follow it (another count).
 */
export function linkEdits(system: System): LinkEdits | undefined {
  const layout = layouts.get(system.fabric);
  if (!layout) return undefined;
  const links = system.topology.links;
  const known = edits.get(links);
  if (known !== undefined) return known ?? undefined;
  const count = layout.nodes * (layout.intraPerNode + layout.nicPerNode) + layout.shared;
  let found: LinkEdits | null = null;
  if (links.length === count) {
    const changed: number[] = [];
    for (let i = 0; i < count; i++) {
      const link = links[i];
      const original = layout.template[templateIndex(layout, i)];
      if (link.GBps !== original.GBps || link.latencyUs !== original.latencyUs || link.kind !== original.kind)
        changed.push(i);
    }
    found = { layout, changed: Int32Array.from(changed) };
  }
  edits.set(links, found);
  return found ?? undefined;
}

/**
 * Whether every node of an edited system is the same, read from its changed links: what checkNodesIdentical
 * decides from every link's vertices (node n's links, in order, against node 0's; the shared leaf and spine links
 * against the first), without a map of every vertex. Node n's links are its block of intra-node links and its block
 * of NIC-side links in the layout. An unchanged link has its resolved properties, alike on every node, so a place
 * in the node differs between nodes exactly when some but not all nodes' links there changed, or when all changed
 * but not alike. Undefined when the edits are not known (the caller checks every link). The rails are not compared.
 */
export function nodesAlikeByEdits(system: System): boolean | undefined {
  const found = linkEdits(system);
  if (!found) return undefined;
  const { layout, changed } = found;
  const links = system.topology.links;
  const intraEnd = layout.nodes * layout.intraPerNode;
  const sharedEnd = intraEnd + layout.shared;
  // The shared links against the first, as the check compares them (few: two per rail and leaf).
  for (let i = intraEnd + 1; i < sharedEnd; i++)
    if (links[i].GBps !== links[intraEnd].GBps || links[i].latencyUs !== links[intraEnd].latencyUs) return false;
  /** Changed links by their place in a node, with the first of them for comparison. */
  const places = new Map<number, { count: number; first: number }>();
  for (const i of changed) {
    if (i >= intraEnd && i < sharedEnd) continue;
    const key = i < intraEnd ? i % layout.intraPerNode : layout.intraPerNode + ((i - sharedEnd) % layout.nicPerNode);
    const place = places.get(key);
    if (!place) {
      places.set(key, { count: 1, first: i });
      continue;
    }
    place.count++;
    const a = links[i];
    const b = links[place.first];
    if (a.kind !== b.kind || a.GBps !== b.GBps || a.latencyUs !== b.latencyUs) return false;
  }
  for (const place of places.values()) if (place.count !== layout.nodes) return false;
  return true;
}

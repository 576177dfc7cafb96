// Whether every node of a system is the same, and every rail: the fast path simulates one node (and one rail) for
// all of them, which is exact only then. Resolved specs are always uniform; a system whose links were edited after resolution
// (a degraded cable, a slow node's NVSwitch) is not, and must be simulated node by node.
import type { System, Topology } from './model';
import { nodesAlikeByEdits } from './edits';

/**
 * Verdicts by topology object or links array: resolution records its own (uniform by construction); an edited copy
 * (a new topology with its own links) is checked once.
 */
const verdicts = new WeakMap<object, boolean>();

/**
 * Records that resolution built this topology (or these links) node by node from one spec, so every node is the
 * same. Checking a million links costs a third of resolving them; the equivalence test compares this record with
 * the check.
 */
export function markNodesIdentical(built: Topology | readonly object[]): void {
  verdicts.set(built, true);
}

/** Whether every node of the system is the same, from the record resolution left or else by checking its links. */
export function nodesIdentical(system: System): boolean {
  // The topology's own record first: reading `links` of a resolved multi-node system would build every node.
  const own = verdicts.get(system.topology);
  if (own !== undefined) return own;
  const known = verdicts.get(system.topology.links);
  if (known !== undefined) return known;
  // An edited copy of a resolved system: its changed links say it without reading every link's vertices.
  const alike = nodesAlikeByEdits(system);
  const identical = alike === undefined ? checkNodesIdentical(system) : alike && railsIdentical(system);
  verdicts.set(system.topology.links, identical);
  return identical;
}

/**
 * True when every node's links match node 0's in order, kind, bandwidth and latency, shared switch links agree, and
 * every rail matches rail 0.
 */
export function checkNodesIdentical(system: System): boolean {
  const { links, vertices } = system.topology;
  const nodeOf = new Map<string, number>();
  for (const v of vertices) nodeOf.set(v.id, v.node);
  let shared: { GBps: number; latencyUs: number } | undefined;
  let identical = true;
  const nodeLinks: number[][] = Array.from({ length: system.nodes }, () => []);
  for (let i = 0; i < links.length && identical; i++) {
    const link = links[i];
    const from = nodeOf.get(link.from) ?? -1;
    const node = from >= 0 ? from : (nodeOf.get(link.to) ?? -1);
    if (node < 0) {
      // Leaf and spine links belong to no node: the fast path assumes they are all alike.
      shared ??= { GBps: link.GBps, latencyUs: link.latencyUs };
      identical = shared.GBps === link.GBps && shared.latencyUs === link.latencyUs;
      continue;
    }
    nodeLinks[node].push(i);
  }
  // Node 0's links, in topology order, are the sequence every other node must repeat.
  const reference = nodeLinks[0] ?? [];
  for (let n = 1; n < system.nodes && identical; n++) {
    const own = nodeLinks[n];
    if (own.length !== reference.length) identical = false;
    for (let k = 0; k < own.length && identical; k++) {
      const a = links[own[k]];
      const b = links[reference[k]];
      identical = a.kind === b.kind && a.GBps === b.GBps && a.latencyUs === b.latencyUs;
    }
  }
  return identical && railsIdentical(system);
}

/**
 * True when every local GPU's way across the network (each NIC slot, there and back) crosses links of the same
 * kind, bandwidth and latency as local GPU 0's: the fast path lets rail 0 stand for all rails, so a rail slower on
 * every node (which leaves the nodes identical to each other) must send the system down the node-by-node path.
 */
function railsIdentical(system: System): boolean {
  const { gpusPerNode: g, fabric } = system;
  if (system.nodes < 2 || fabric.nicsPerNode === 0) return true;
  const links = system.topology.links;
  const same = (a: readonly number[], b: readonly number[]): boolean =>
    a.length === b.length &&
    a.every((link, k) => {
      const x = links[link];
      const y = links[b[k]];
      return x.kind === y.kind && x.GBps === y.GBps && x.latencyUs === y.latencyUs;
    });
  for (let slot = 0; slot < fabric.nicsPerNode; slot++) {
    const out = fabric.route(0, g, slot);
    const back = fabric.route(g, 0, slot);
    for (let local = 1; local < g; local++)
      if (!same(fabric.route(local, g + local, slot), out) || !same(fabric.route(g + local, local, slot), back))
        return false;
  }
  return true;
}

// Which of hierarchical's ring pairs an edited system (or one of identical nodes without a NIC per GPU) solves.
// Inside nodes, each node's ring is a group of its own (edited-nodes.ts). Across nodes, every rank sends to its local
// GPU on the next node: a flow crosses the sender's send-side links (GPU to its PCIe switch, switch to NIC, NIC to
// leaf), the receiver's receive-side links, between leaves the sender's leaf uplink and the receiver's leaf downlink
// of that NIC's rail, and the receiver's memory. Local GPUs that share a NIC share its send and receive links, so a
// group is node a's GPUs on one NIC (with a NIC per GPU, one pair): its flows meet no other group's when no link of
// a node serves both a sending and a receiving side, and each leaf link is crossed by one group only (a rail's ring
// leaves each leaf once). A group none of whose links an edit changed finishes with every unchanged group of its
// NICs and shape (within a leaf, across leaves): the touched groups are solved with one unchanged group of each.
import type { Fabric } from '../topology/model';
import type { BuildContext } from './context';
import type { EditedNodes } from './edited-nodes';

/** A round's ring pairs, sender and receiver by index (a list of 131,072 pairs need not be built to be read). */
export interface Pairs {
  readonly count: number;
  from(index: number): number;
  to(index: number): number;
}

/**
 * Each local GPU's group across nodes, named by its lowest member: local GPUs are joined when their send-side or
 * receive-side links meet (they share a NIC). Undefined when a route leaves its node, or a link of a node serves
 * both a sending and a receiving side (the groups would chain from node to node).
 */
export function nicGroups(
  network: NonNullable<Fabric['network']>,
  g: number,
  edited: EditedNodes,
): Int32Array | undefined {
  const group = Int32Array.from({ length: g }, (_, l) => l);
  const find = (l: number): number => (group[l] === l ? l : (group[l] = find(group[l])));
  const sendOwner = new Map<number, number>();
  const receiveOwner = new Map<number, number>();
  const join = (owners: Map<number, number>, link: number, local: number): void => {
    const other = owners.get(link);
    if (other === undefined) owners.set(link, local);
    else group[find(local)] = find(other);
  };
  for (let l = 0; l < g; l++) {
    // Node 0 to node 1 gives node 0's send side; node 1 to node 0 gives node 0's receive side.
    const out = network.routeParts(l, g + l, 0);
    const back = network.routeParts(g + l, l, 0);
    for (const link of out.send) {
      if (edited.nodeOfLink(link) !== 0) return undefined;
      join(sendOwner, link, l);
    }
    for (const link of back.receive) {
      if (edited.nodeOfLink(link) !== 0) return undefined;
      join(receiveOwner, link, l);
    }
  }
  for (const link of sendOwner.keys()) if (receiveOwner.has(link)) return undefined;
  for (let l = 0; l < g; l++) group[l] = find(l);
  // Name each group by its lowest member.
  const lowest = new Int32Array(g).fill(-1);
  for (let l = 0; l < g; l++) if (lowest[group[l]] < 0) lowest[group[l]] = l;
  return group.map((root) => lowest[root]);
}

/**
 * The ring pairs across nodes to solve, ascending, or undefined when their routes are not the layout's (then the
 * caller looks for other groups). `inter` must be every rank's pair, pair i sending from rank i.
 */
export function chosenInterPairs(ctx: BuildContext, inter: Pairs, edited: EditedNodes): number[] | undefined {
  const { system } = ctx;
  const { nodes, gpusPerNode: g } = system;
  const network = system.fabric.network;
  if (!network || inter.count !== nodes * g) return undefined;
  const groupOf = nicGroups(network, g, edited);
  if (!groupOf) return undefined;
  const groups = new Set(groupOf).size;
  const perLeaf = network.nodesPerLeaf;
  const touched = new Set(edited.nodes.filter((node) => node !== edited.standIn));
  const changedShared = new Set(edited.sharedChanged);
  /** Stand-ins found, by group and shape (0: within a leaf, 1: across leaves), and the same-leaf ones counted. */
  const standIns = new Set<number>();
  let sameLeafStandIns = 0;
  /** The group (sender node · g + group) that crosses each leaf or spine link. */
  const sharedOwner = new Map<number, number>();
  const groupTouched = new Uint8Array(g);
  const chosen: number[] = [];
  for (let a = 0; a < nodes; a++) {
    const b = (a + 1) % nodes;
    const sameLeaf = Math.floor(a / perLeaf) === Math.floor(b / perLeaf);
    const nodeTouched = touched.has(a) || touched.has(b);
    // Unchanged groups within a leaf cross no shared link: once one of each group stands for them, they need no route.
    if (!nodeTouched && sameLeaf && sameLeafStandIns === groups) continue;
    groupTouched.fill(0);
    for (let l = 0; l < g; l++) {
      const pair = a * g + l;
      const from = inter.from(pair);
      const to = inter.to(pair);
      if (from !== pair || to !== b * g + l) return undefined;
      const parts = network.routeParts(from, to, 0);
      if (parts.send.some((link) => edited.nodeOfLink(link) !== a)) return undefined;
      if (parts.receive.some((link) => edited.nodeOfLink(link) !== b)) return undefined;
      if (parts.shared.some((link) => edited.nodeOfLink(link) !== -1)) return undefined;
      if ((parts.shared.length === 0) !== sameLeaf) return undefined;
      const key = a * g + groupOf[l];
      for (const link of parts.shared) {
        const owner = sharedOwner.get(link);
        if (owner !== undefined && owner !== key) return undefined;
        sharedOwner.set(link, key);
        if (changedShared.has(link)) groupTouched[groupOf[l]] = 1;
      }
    }
    const solve = new Uint8Array(g);
    for (let l = 0; l < g; l++) {
      const group = groupOf[l];
      if (group !== l) continue;
      const shape = group * 2 + (sameLeaf ? 0 : 1);
      if (nodeTouched || groupTouched[group]) solve[group] = 1;
      else if (!standIns.has(shape)) {
        standIns.add(shape);
        if (sameLeaf) sameLeafStandIns++;
        solve[group] = 1;
      }
    }
    for (let l = 0; l < g; l++) if (solve[groupOf[l]]) chosen.push(a * g + l);
  }
  return chosen;
}

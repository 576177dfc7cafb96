// An edited system (a degraded cable, a slow node, a different rail) keeps most of its nodes and rails as they were
// resolved. With a NIC per GPU, NVLSTree's flows fall into groups that share no resource: each rank's NVSwitch flows
// (its switch uplink, downlink and engine) and each rail's tree (local GPU l's NIC-side links on every node, rail
// l's leaf links, the memories of the ranks it reduces into). A round's duration is the latest finish over those
// groups, each solved on its own flows alone, so groups whose resources are unchanged and alike give the same
// finish: one of them stands for the others, and only the groups an edit touches are simulated besides it.
//
// What is shown here, from the resolved layout: the rails' links and the switch links are disjoint (by node 0 and
// node 1's routes, which every node repeats at a constant stride, and the shared links of routes across leaves),
// and a changed leaf or spine link is crossed by one rail's routes only (it serves many nodes, but of that one rail:
// the rail is then simulated over every node, as any edited rail is). Unchanged rails are alike because resolution
// builds every rail from one spec (the fast path relies on it).
import type { System } from '../topology/model';
import { linkEdits } from '../topology/edits';

export interface EditedClasses {
  /** Local GPUs whose rails' tree flows are simulated: every rail an edit touches and one that stands for the rest. */
  readonly rails: readonly number[];
  /** Ranks whose NVSwitch flows are simulated: every rank an edit touches and, per local GPU, one that stands for the rest. */
  readonly switchRanks: readonly number[];
  /** Local GPUs whose rails an edit touches, and ranks whose NVSwitch links it touches (the tree groups by them). */
  readonly editedRails: readonly number[];
  readonly editedRanks: readonly number[];
}

/** Where a link sits in the resolved layout: its node and its place among that node's links, or -1 for shared. */
interface Place {
  readonly node: number;
  readonly key: number;
}

/**
 * The rails and ranks to simulate for an edited multi-node system with a NIC per GPU, or undefined when the groups
 * cannot be shown apart (then every node is simulated).
 */
export function editedClasses(system: System): EditedClasses | undefined {
  const { fabric, nodes, gpusPerNode: g } = system;
  if (nodes < 2 || fabric.nicsPerNode !== g || !fabric.network || !fabric.hasSwitch) return undefined;
  const edits = linkEdits(system);
  if (!edits) return undefined;
  const { layout } = edits;
  const intraEnd = layout.nodes * layout.intraPerNode;
  const sharedEnd = intraEnd + layout.shared;
  const place = (link: number): Place => {
    if (link < intraEnd) return { node: Math.floor(link / layout.intraPerNode), key: link % layout.intraPerNode };
    if (link < sharedEnd) return { node: -1, key: link };
    const offset = link - sharedEnd;
    return {
      node: Math.floor(offset / layout.nicPerNode),
      key: layout.intraPerNode + (offset % layout.nicPerNode),
    };
  };
  // Each rail's links, by their place in a node (and the shared links its sample routes cross).
  const railKeys: Set<number>[] = [];
  const owner = new Map<number, number>();
  const claim = (key: number, rail: number): boolean => {
    const held = owner.get(key);
    if (held !== undefined && held !== rail) return false;
    owner.set(key, rail);
    return true;
  };
  for (let l = 0; l < g; l++) {
    const keys = new Set<number>();
    const last = (nodes - 1) * g + l;
    for (const [x, y] of [
      [l, g + l],
      [g + l, l],
      [l, last],
      [last, l],
    ]) {
      const parts = fabric.network.routeParts(x, y, 0);
      for (const [part, rank] of [
        [parts.send, x],
        [parts.receive, y],
      ] as const) {
        for (const link of part) {
          const at = place(link);
          if (at.node !== Math.floor(rank / g)) return undefined;
          keys.add(at.key);
          if (!claim(at.key, l)) return undefined;
        }
      }
      for (const link of parts.shared) if (place(link).node !== -1 || !claim(-1 - link, l)) return undefined;
    }
    railKeys.push(keys);
  }
  // The switch links of each local GPU: no rail may cross them.
  const uplinkKey: number[] = [];
  const downlinkKey: number[] = [];
  for (let l = 0; l < g; l++) {
    const up = place(fabric.switchUplink(l));
    const down = place(fabric.switchDownlink(l));
    if (up.node !== 0 || down.node !== 0 || owner.has(up.key) || owner.has(down.key)) return undefined;
    uplinkKey.push(up.key);
    downlinkKey.push(down.key);
  }
  const railEdited = new Uint8Array(g);
  const rankEdited = new Set<number>();
  let sharedRail: Map<number, number> | undefined;
  for (const link of edits.changed) {
    const at = place(link);
    if (at.node < 0) {
      // A leaf or spine link belongs to the one rail whose routes cross it; a link no rail's route crosses (a leaf's
      // uplink when every node is under that one leaf) carries no flow of these algorithms and touches no rail.
      sharedRail ??= sharedLinkRails(system, place);
      if (!sharedRail) return undefined;
      const rail = sharedRail.get(link);
      if (rail !== undefined) railEdited[rail] = 1;
      continue;
    }
    for (let l = 0; l < g; l++) {
      if (railKeys[l].has(at.key)) railEdited[l] = 1;
      if (uplinkKey[l] === at.key || downlinkKey[l] === at.key) rankEdited.add(at.node * g + l);
    }
  }
  const rails: number[] = [];
  let standIn = false;
  for (let l = 0; l < g; l++) {
    if (railEdited[l]) rails.push(l);
    else if (!standIn) {
      rails.push(l);
      standIn = true;
    }
  }
  // Each local GPU's first unedited rank stands for every unedited rank of that local GPU.
  const switchRanks = new Set(rankEdited);
  for (let l = 0; l < g; l++) {
    let node = 0;
    while (node < nodes && rankEdited.has(node * g + l)) node++;
    if (node < nodes) switchRanks.add(node * g + l);
  }
  return {
    rails,
    switchRanks: [...switchRanks].sort((a, b) => a - b),
    editedRails: rails.filter((l) => railEdited[l] === 1),
    editedRanks: [...rankEdited].sort((a, b) => a - b),
  };
}

/**
 * Which rail's routes cross each leaf and spine link, or undefined when some route crosses another rail's or a
 * node's links. A route between two ranks of one local GPU (the only network flows NVLSTree's and the tree's rails
 * have) crosses the shared links of its two nodes' leaves, whatever the nodes within them, and nothing shared when
 * both are under one leaf; so the routes between the first node of leaf 0 and the first node of every other leaf,
 * both ways, cross every shared link any such route crosses. The nodes' own links on those routes must stay in the
 * sending and receiving nodes (as the sample routes above show for the rails' node links).
 */
function sharedLinkRails(system: System, place: (link: number) => Place): Map<number, number> | undefined {
  const { fabric, nodes, gpusPerNode: g } = system;
  const network = fabric.network!;
  const leaves = Math.ceil(nodes / network.nodesPerLeaf);
  const rails = new Map<number, number>();
  for (let l = 0; l < g; l++) {
    for (let leaf = 1; leaf < leaves; leaf++) {
      const far = leaf * network.nodesPerLeaf * g + l;
      for (const [x, y] of [
        [l, far],
        [far, l],
      ]) {
        const parts = network.routeParts(x, y, 0);
        if (parts.shared.length === 0) return undefined;
        if (parts.send.some((link) => place(link).node !== Math.floor(x / g))) return undefined;
        if (parts.receive.some((link) => place(link).node !== Math.floor(y / g))) return undefined;
        for (const link of parts.shared) {
          const held = rails.get(link);
          if (place(link).node !== -1 || (held !== undefined && held !== l)) return undefined;
          rails.set(link, l);
        }
      }
    }
  }
  return rails;
}

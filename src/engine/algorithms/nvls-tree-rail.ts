// Where a rail-0 tree flow of NVLSTree runs on identical nodes: the resource ids of a node's NIC-side links, read
// from routes between sample nodes, and each leaf's uplink and downlink. The class proofs (nvls-tree-classes.ts)
// rely on this layout and decline where the routes show another.
import type { System } from '../topology/model';
import { memoryResource } from '../sim/run';

/** The resource ids a rail-0 tree flow crosses, read from sample routes; undefined when the layout differs. */
export interface RailLayout {
  readonly send: readonly number[];
  readonly receive: readonly number[];
  /** Distance between consecutive nodes' NIC-side link ids. */
  readonly stride: number;
  readonly leafUp: Int32Array;
  readonly leafDown: Int32Array;
  readonly memoryBase: number;
}

export function railLayout(system: System): RailLayout | undefined {
  const network = system.fabric.network;
  const g = system.gpusPerNode;
  const nodes = system.nodes;
  if (!network || nodes < 2) return undefined;
  const perLeaf = network.nodesPerLeaf;
  const leaves = Math.ceil(nodes / perLeaf);
  const last = nodes - 1;
  const out0 = network.routeParts(0, g, 0);
  const in0 = network.routeParts(g, 0, 0);
  const outLast = network.routeParts(last * g, 0, 0);
  const inLast = network.routeParts(0, last * g, 0);
  const send = out0.send;
  const receive = in0.receive;
  if (send.length !== 3 || receive.length !== 3) return undefined;
  const stride = in0.send[0] - send[0];
  const shifted = (a: readonly number[], b: readonly number[], k: number): boolean =>
    a.length === b.length && a.every((id, i) => id === b[i] + k * stride);
  if (!shifted(in0.send, send, 1) || !shifted(out0.receive, receive, 1)) return undefined;
  if (!shifted(outLast.send, send, last) || !shifted(inLast.receive, receive, last)) return undefined;
  // A node's six NIC-side links are distinct and within one stride, so no two nodes' links meet.
  const own = [...send, ...receive];
  if (new Set(own).size !== 6 || Math.max(...own) - Math.min(...own) >= stride) return undefined;
  // Routes within a leaf cross no shared link; across leaves, their uplink and downlink.
  const sameLeaf = (a: number, b: number): boolean => Math.floor(a / perLeaf) === Math.floor(b / perLeaf);
  if (sameLeaf(0, 1) && out0.shared.length !== 0) return undefined;
  // Under one leaf no route crosses a shared link: the ids stay -1, which no resource has.
  const leafUp = new Int32Array(leaves).fill(-1);
  const leafDown = new Int32Array(leaves).fill(-1);
  for (let l = 0; l < leaves && leaves > 1; l++) {
    const node = l * perLeaf;
    const other = l === 0 ? perLeaf : 0;
    const out = network.routeParts(node * g, other * g, 0).shared;
    const into = network.routeParts(other * g, node * g, 0).shared;
    if (out.length !== 2 || into.length !== 2) return undefined;
    leafUp[l] = out[0];
    leafDown[l] = into[1];
  }
  const linkCount = memoryResource(system, 0);
  if (leaves > 1 && new Set([...leafUp, ...leafDown]).size !== 2 * leaves) return undefined;
  for (let l = 0; l < leaves && leaves > 1; l++) {
    for (const id of [leafUp[l], leafDown[l]]) {
      if (id >= linkCount) return undefined;
      if (own.some((o) => id >= o && (id - o) % stride === 0 && (id - o) / stride < nodes)) return undefined;
    }
  }
  return { send, receive, stride, leafUp, leafDown, memoryBase: memoryResource(system, 0) };
}

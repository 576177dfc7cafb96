// Builds the vertices and links of a system's nodes and of the network between them, for the first `builtNodes`
// nodes only: every node repeats node 0's links at a constant stride, so the link indices (and the routes, which
// are link indices) of a node left unbuilt follow from node 0's. Resolution builds one node to simulate and all of
// them only when a caller reads the topology's vertices or links.
import * as K from '../constants';
import { EngineError } from '../errors';
import type { GpuSpec } from '../hardware/gpus';
import { TopologyBuilder } from './builder';
import { buildNode, pcieGBps, vertexPrefix, type NodeFabric } from './node-fabric';
import type { NetRouteParts } from './model';
import type { SystemSpec } from './spec';
import { asGBps, asMicros } from '../units';

/** Nodes under one leaf switch of a rail: a 64-port switch with 32 ports down and 32 up (non-blocking). */
const NODES_PER_LEAF = 32;

export function checkInteger(value: unknown, what: string, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min)
    throw new EngineError(`${what} must be an integer ≥ ${min}, got ${String(value)}`);
  return value;
}

export interface NodesAndNetwork {
  readonly builder: TopologyBuilder;
  /** Node 0's fabric; node k's routes and switch links are node 0's plus k × intraPerNode. */
  readonly node0: NodeFabric;
  readonly intraPerNode: number;
  /** Leaf and spine links, after every node's intra-node links. */
  readonly shared: number;
  /** NIC-side links (NICs, their PCIe switches, NIC to leaf) per node, after the shared links. */
  readonly nicLinksPerNode: number;
  readonly nicsPerNode: number;
  readonly gpuNics: number[][];
  readonly nicGpu: number[];
  /** Route between ranks x and y on different nodes through NIC slot `slot`, as link indices of the whole system. */
  readonly netRoute: (x: number, y: number, slot: number) => number[];
  /** The same route in its three parts: the sender's node, the shared leaf and spine links, the receiver's node. */
  readonly netRouteParts: (x: number, y: number, slot: number) => NetRouteParts;
  /** Nodes under one leaf: the most nodes whose NICs one shared (leaf or spine) link serves. */
  readonly nodesPerLeaf: number;
}

export function buildNodesAndNetwork(
  spec: SystemSpec,
  gpu: GpuSpec,
  nodes: number,
  builtNodes: number,
): NodesAndNetwork {
  const gpusPerNode = spec.gpusPerNode;
  const b = new TopologyBuilder();
  const nodeFabrics: NodeFabric[] = [];
  let intraPerNode = 0;
  for (let n = 0; n < builtNodes; n++) {
    const before = b.links.length;
    nodeFabrics.push(buildNode(b, spec, gpu, n));
    // Every node repeats node 0's links at a constant stride; the unbuilt nodes' links are counted, not made.
    if (n === 0) intraPerNode = b.links.length - before;
    else if (b.links.length - before !== intraPerNode)
      throw new Error(`node ${n} added ${b.links.length - before} links, node 0 added ${intraPerNode}`);
  }
  // Link indices after the intra-node block move by the links of the nodes left unbuilt.
  const skipped = (nodes - builtNodes) * intraPerNode;
  const sharedStart = b.links.length;
  let nicStart = b.links.length;
  let linksPerNode = 0;

  let nicsPerNode = 0;
  const gpuNics: number[][] = [];
  const nicGpu: number[] = [];
  // A route's hops between nodes, written into `hops` (six, or eight when it crosses the spine) by `routeHops`,
  // which returns how many. Both forms of a route below read them: trees route one pair per node (65 k at 16,384
  // nodes), so the joined form makes no part arrays. A single node has no network: its routes are empty.
  const hops = new Int32Array(8);
  let routeHops: (x: number, y: number, slot: number) => number = () => 0;
  let nodesPerLeaf = NODES_PER_LEAF;
  if (nodes > 1) {
    if (!spec.nic) throw new EngineError(`a system of ${nodes} nodes needs nic: {gbps, perNode}`);
    nicsPerNode = checkInteger(spec.nic.perNode, 'nic.perNode', 1);
    if (!(spec.nic.gbps > 0)) throw new EngineError(`nic.gbps must be positive, got ${spec.nic.gbps}`);
    const nicGBps = asGBps(spec.overrides?.nicGBps ?? (spec.nic.gbps / 8) * K.NIC_EFFICIENCY);
    const nicUs = spec.overrides?.nicLatencyUs ?? spec.nic.latencyUs ?? asMicros(K.NIC_HOP_US);
    nodesPerLeaf = checkInteger(spec.network?.nodesPerLeaf ?? NODES_PER_LEAF, 'network.nodesPerLeaf', 1);
    const oversubscription = spec.network?.oversubscription ?? 1;
    if (!(oversubscription >= 1) || !Number.isFinite(oversubscription))
      throw new EngineError(`network.oversubscription must be a number ≥ 1, got ${oversubscription}`);
    const switchUs = spec.network?.switchLatencyUs ?? asMicros(K.NETWORK_SWITCH_HOP_US);
    if (!(switchUs >= 0) || !Number.isFinite(switchUs))
      throw new EngineError(`network.switchLatencyUs must be ≥ 0, got ${switchUs}`);
    // The GPU reaches its NIC over PCIe (GPUDirect RDMA), so the PCIe overrides bound that hop too.
    const pcie = asGBps(pcieGBps(spec, gpu));
    const pcieUs = spec.overrides?.pcieLatencyUs ?? asMicros(K.PCIE_HOP_US);
    // NICs sit on PCIe switches beside the GPUs. With at least one NIC per GPU each GPU's switch holds its NICs, and
    // the GPU's own x16 link carries all of their traffic; with fewer NICs each NIC's switch holds the GPUs that
    // share it, and the NIC's x16 link carries all of theirs.
    const groups: { gpus: number[]; nics: number[] }[] = [];
    if (nicsPerNode >= gpusPerNode) {
      for (let g = 0; g < gpusPerNode; g++) groups.push({ gpus: [g], nics: [] });
      for (let r = 0; r < nicsPerNode; r++) groups[Math.floor((r * gpusPerNode) / nicsPerNode)].nics.push(r);
    } else {
      for (let r = 0; r < nicsPerNode; r++) groups.push({ gpus: [], nics: [r] });
      for (let g = 0; g < gpusPerNode; g++) groups[Math.floor((g * nicsPerNode) / gpusPerNode)].gpus.push(g);
    }
    for (let g = 0; g < gpusPerNode; g++) gpuNics.push([]);
    for (const group of groups) {
      for (const g of group.gpus) gpuNics[g].push(...group.nics);
      for (const r of group.nics) nicGpu[r] = group.gpus[0];
    }
    const leaves = Math.ceil(nodes / nodesPerLeaf);
    // Cross-rail and cross-leaf traffic goes up to the spine layer, modelled as one switch; each leaf's uplinks carry
    // its nodes' NIC bandwidth divided by the oversubscription.
    const spine = b.vertex('spine', 'switch', 'spine switches', -1);
    const leafIds: string[][] = [];
    const leafUp: number[][] = [];
    const leafDown: number[][] = [];
    for (let r = 0; r < nicsPerNode; r++) {
      leafIds.push([]);
      leafUp.push([]);
      leafDown.push([]);
      for (let l = 0; l < leaves; l++) {
        const leaf = b.vertex(`rail${r}.leaf${l}`, 'switch', `rail ${r} leaf ${l}`, -1);
        leafIds[r].push(leaf);
        const [up, down] = b.duplex(
          leaf,
          spine,
          asGBps((nicGBps * Math.min(nodesPerLeaf, nodes)) / oversubscription),
          switchUs,
          'network',
        );
        leafUp[r].push(up + skipped);
        leafDown[r].push(down + skipped);
      }
    }
    // Every node adds the same links in the same order, so a node's link indices are node 0's plus a constant
    // stride per node: routes keep node 0's offsets only, instead of per-node maps that grow with the GPU count.
    const nicToLeaf: number[] = [];
    const leafToNic: number[] = [];
    // PCIe path between local GPU g and NIC r when they share a switch: [GPU→switch, switch→NIC] and back.
    const toNic = new Map<number, [number, number]>();
    const fromNic = new Map<number, [number, number]>();
    nicStart = b.links.length;
    for (let n = 0; n < builtNodes; n++) {
      const p = vertexPrefix(nodes, n);
      const nodeStart = b.links.length;
      for (let r = 0; r < nicsPerNode; r++) {
        const nic = b.vertex(`${p}nic${r}`, 'nic', `node ${n} · NIC ${r}`, n);
        const [up, down] = b.duplex(nic, leafIds[r][Math.floor(n / nodesPerLeaf)], nicGBps, nicUs, 'network');
        if (n === 0) {
          nicToLeaf.push(up + skipped);
          leafToNic.push(down + skipped);
        }
      }
      for (let k = 0; k < groups.length; k++) {
        const group = groups[k];
        const sw = b.vertex(`${p}nicsw${k}`, 'pcie-switch', `node ${n} · NIC PCIe switch ${k}`, n);
        // One PCIe traversal from GPU to NIC: its latency is charged once, on the GPU's side.
        const gpuLinks = group.gpus.map((g) => b.duplex(nodeFabrics[n].gpuIds[g], sw, pcie, pcieUs, 'pcie'));
        const nicLinks = group.nics.map((r) => b.duplex(sw, `${p}nic${r}`, pcie, asMicros(0), 'pcie'));
        if (n > 0) continue;
        group.gpus.forEach((g, i) =>
          group.nics.forEach((r, j) => {
            toNic.set(g * nicsPerNode + r, [gpuLinks[i][0] + skipped, nicLinks[j][0] + skipped]);
            fromNic.set(g * nicsPerNode + r, [nicLinks[j][1] + skipped, gpuLinks[i][1] + skipped]);
          }),
        );
      }
      if (n === 0) linksPerNode = b.links.length - nodeStart;
      // A builder change that broke the constant stride would silently misroute; fail loudly instead.
      else if (b.links.length - nodeStart !== linksPerNode)
        throw new Error(`node ${n} added ${b.links.length - nodeStart} NIC links, node 0 added ${linksPerNode}`);
    }
    if (nicStart + builtNodes * linksPerNode !== b.links.length)
      throw new Error('NIC links are not laid out node by node');
    routeHops = (x, y, slot) => {
      const nx = Math.floor(x / gpusPerNode);
      const ny = Math.floor(y / gpusPerNode);
      const gx = x % gpusPerNode;
      const gy = y % gpusPerNode;
      const sendShift = nx * linksPerNode;
      const receiveShift = ny * linksPerNode;
      // Each end uses its GPU's NIC in that slot, over the PCIe switch they share.
      const sendNic = gpuNics[gx][slot % gpuNics[gx].length];
      const receiveNic = gpuNics[gy][slot % gpuNics[gy].length];
      const send = toNic.get(gx * nicsPerNode + sendNic)!;
      const receive = fromNic.get(gy * nicsPerNode + receiveNic)!;
      const lx = Math.floor(nx / nodesPerLeaf);
      const ly = Math.floor(ny / nodesPerLeaf);
      const crossesSpine = sendNic !== receiveNic || lx !== ly;
      let h = 0;
      hops[h++] = send[0] + sendShift;
      hops[h++] = send[1] + sendShift;
      hops[h++] = nicToLeaf[sendNic] + sendShift;
      if (crossesSpine) {
        hops[h++] = leafUp[sendNic][lx];
        hops[h++] = leafDown[receiveNic][ly];
      }
      hops[h++] = leafToNic[receiveNic] + receiveShift;
      hops[h++] = receive[0] + receiveShift;
      hops[h++] = receive[1] + receiveShift;
      return h;
    };
  }
  const netRouteParts = (x: number, y: number, slot: number): NetRouteParts => {
    const count = routeHops(x, y, slot);
    if (count === 0) return { send: [], shared: [], receive: [] };
    const sharedEnd = count - 3;
    return {
      send: [hops[0], hops[1], hops[2]],
      shared: sharedEnd > 3 ? [hops[3], hops[4]] : [],
      receive: [hops[sharedEnd], hops[sharedEnd + 1], hops[sharedEnd + 2]],
    };
  };
  return {
    builder: b,
    node0: nodeFabrics[0],
    intraPerNode,
    shared: nicStart - sharedStart,
    nicLinksPerNode: linksPerNode,
    nicsPerNode,
    gpuNics,
    nicGpu,
    netRoute: (x, y, slot) => {
      const count = routeHops(x, y, slot);
      const path: number[] = [];
      for (let i = 0; i < count; i++) path.push(hops[i]);
      return path;
    },
    netRouteParts,
    nodesPerLeaf,
  };
}

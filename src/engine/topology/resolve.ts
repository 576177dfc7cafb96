// Turns a SystemSpec (what a user writes) into a System: vertices, directed links with ids, and routes.
import * as K from '../constants';
import { EngineError } from '../errors';
import { findGpu, GPU_NAMES } from '../hardware/gpus';
import { TopologyBuilder } from './builder';
import { DGX1_NVLINKS, meshRingOrders } from './dgx1-mesh';
import type { Fabric, System } from './model';
import { buildNode, pcieGBps, vertexPrefix, type NodeFabric } from './node-fabric';
import type { SystemSpec } from './spec';
import { ncclTuner } from '../nccl-versions';
import { markNodesIdentical } from './uniform';
import { asMicros, type Micros, asGBps, type GBps } from '../units';

/** Nodes under one leaf switch of a rail: a 64-port switch with 32 ports down and 32 up (non-blocking). */
const NODES_PER_LEAF = 32;

function checkInteger(value: unknown, what: string, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min)
    throw new EngineError(`${what} must be an integer ≥ ${min}, got ${String(value)}`);
  return value;
}

const FABRIC_LABEL: Record<string, string> = {
  nvswitch: 'NVSwitch',
  'nvlink-mesh': 'NVLink mesh',
  'nvlink-bridge': 'NVLink bridge',
  pcie: 'PCIe',
  'uniform-ring': 'uniform ring',
};

/** Host time for one process to launch a collective: its GPUs' launches run one after another. */
export function launchPerProcessUs(gpusPerProcess: number, launchPerGpuUs: Micros): Micros {
  return asMicros(gpusPerProcess * launchPerGpuUs);
}

export function resolveSystem(spec: SystemSpec): System {
  const gpu = findGpu(String(spec.gpu ?? ''));
  if (!gpu) throw new EngineError(`unknown GPU '${String(spec.gpu)}'; known: ${GPU_NAMES.join(', ')}`);
  const nodes = checkInteger(spec.nodes, 'nodes', 1);
  const gpusPerNode = checkInteger(spec.gpusPerNode, 'gpusPerNode', 1);
  const ranks = nodes * gpusPerNode;
  if (ranks < 1) throw new EngineError('a system needs at least one GPU');
  const hbmGBps = spec.overrides?.hbmGBps ?? gpu.hbmGBps;
  if (!(hbmGBps > 0)) throw new EngineError(`overrides.hbmGBps must be positive, got ${hbmGBps}`);
  const gpusPerProcess = checkInteger(spec.gpusPerProcess ?? 1, 'gpusPerProcess', 1);
  if (gpusPerProcess > gpusPerNode)
    throw new EngineError(
      `gpusPerProcess (${gpusPerProcess}) cannot exceed gpusPerNode (${gpusPerNode}): a process drives GPUs of one node`,
    );
  // The launch cost is the process's, whatever the node count: one process launches the kernels of every GPU it
  // drives in turn, and the processes launch in parallel.
  const launchUs =
    spec.overrides?.launchUs ??
    (spec.intraNode === 'uniform-ring'
      ? asMicros(0)
      : launchPerProcessUs(gpusPerProcess, asMicros(K.LAUNCH_PER_GPU_US)));
  if (!(launchUs >= 0)) throw new EngineError(`overrides.launchUs must be ≥ 0, got ${launchUs}`);
  const short = gpu.name.replace(/-SXM$/, '');
  const fabricLabel = FABRIC_LABEL[spec.intraNode] ?? spec.intraNode;
  if (spec.intraNode === 'uniform-ring')
    return uniformRing(spec, gpu, ranks, hbmGBps, launchUs, `${ranks}× ${short} ${fabricLabel}`);

  const b = new TopologyBuilder();
  const nodeFabrics: NodeFabric[] = [];
  for (let n = 0; n < nodes; n++) nodeFabrics.push(buildNode(b, spec, gpu, n));

  const nvlsCapable = spec.intraNode === 'nvswitch' && gpu.smVersion >= 90 && gpusPerNode >= 2;
  if (spec.nvls === true && !nvlsCapable)
    throw new EngineError(`nvls needs an NVSwitch and a Hopper or newer GPU (${gpu.name} on ${spec.intraNode})`);
  const nvls = spec.nvls ?? nvlsCapable;

  let nicsPerNode = 0;
  const gpuNics: number[][] = [];
  const nicGpu: number[] = [];
  const crossNode = new Map<number, number>();
  const crossPaths: number[][] = [];
  let label = `${gpusPerNode}× ${short} ${fabricLabel}`;
  if (spec.p2p === false && spec.intraNode === 'pcie') label += ' (no P2P)';
  let netRoute: (x: number, y: number, slot: number) => number[] = () => [];
  if (nodes > 1) {
    if (!spec.nic) throw new EngineError(`a system of ${nodes} nodes needs nic: {gbps, perNode}`);
    nicsPerNode = checkInteger(spec.nic.perNode, 'nic.perNode', 1);
    if (!(spec.nic.gbps > 0)) throw new EngineError(`nic.gbps must be positive, got ${spec.nic.gbps}`);
    const nicGBps = asGBps(spec.overrides?.nicGBps ?? (spec.nic.gbps / 8) * K.NIC_EFFICIENCY);
    const nicUs = spec.overrides?.nicLatencyUs ?? spec.nic.latencyUs ?? asMicros(K.NIC_HOP_US);
    const nodesPerLeaf = checkInteger(spec.network?.nodesPerLeaf ?? NODES_PER_LEAF, 'network.nodesPerLeaf', 1);
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
        leafUp[r].push(up);
        leafDown[r].push(down);
      }
    }
    // Every node adds the same links in the same order, so a node's link indices are node 0's plus a constant
    // stride per node: routes keep node 0's offsets only, instead of per-node maps that grow with the GPU count.
    const nicToLeaf: number[] = [];
    const leafToNic: number[] = [];
    // PCIe path between local GPU g and NIC r when they share a switch: [GPU→switch, switch→NIC] and back.
    const toNic = new Map<number, [number, number]>();
    const fromNic = new Map<number, [number, number]>();
    const firstNodeLink = b.links.length;
    let linksPerNode = 0;
    for (let n = 0; n < nodes; n++) {
      const p = vertexPrefix(nodes, n);
      const nodeStart = b.links.length;
      for (let r = 0; r < nicsPerNode; r++) {
        const nic = b.vertex(`${p}nic${r}`, 'nic', `node ${n} · NIC ${r}`, n);
        const [up, down] = b.duplex(nic, leafIds[r][Math.floor(n / nodesPerLeaf)], nicGBps, nicUs, 'network');
        if (n === 0) {
          nicToLeaf.push(up);
          leafToNic.push(down);
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
            toNic.set(g * nicsPerNode + r, [gpuLinks[i][0], nicLinks[j][0]]);
            fromNic.set(g * nicsPerNode + r, [nicLinks[j][1], gpuLinks[i][1]]);
          }),
        );
      }
      if (n === 0) linksPerNode = b.links.length - nodeStart;
      // A builder change that broke the constant stride would silently misroute; fail loudly instead.
      else if (b.links.length - nodeStart !== linksPerNode)
        throw new Error(`node ${n} added ${b.links.length - nodeStart} NIC links, node 0 added ${linksPerNode}`);
    }
    if (firstNodeLink + nodes * linksPerNode !== b.links.length)
      throw new Error('NIC links are not laid out node by node');
    netRoute = (x, y, slot) => {
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
      const path = [send[0] + sendShift, send[1] + sendShift, nicToLeaf[sendNic] + sendShift];
      if (sendNic !== receiveNic || lx !== ly) path.push(leafUp[sendNic][lx], leafDown[receiveNic][ly]);
      path.push(leafToNic[receiveNic] + receiveShift, receive[0] + receiveShift, receive[1] + receiveShift);
      return path;
    };
    label = `${nodes}×${label.replace('× ', ' ')} + ${nicsPerNode}×${spec.nic.gbps}G IB`;
  }

  const ringOrders = spec.intraNode === 'nvlink-mesh' ? meshRingOrders(gpusPerNode, DGX1_NVLINKS) : [];
  const fabric: Fabric = {
    route(x, y, slot = 0) {
      const nx = Math.floor(x / gpusPerNode);
      const ny = Math.floor(y / gpusPerNode);
      if (nx === ny) return nodeFabrics[nx].route(x % gpusPerNode, y % gpusPerNode);
      const r = slot % nicsPerNode;
      const key = (x * ranks + y) * nicsPerNode + r;
      let index = crossNode.get(key);
      if (index === undefined) {
        index = crossPaths.length;
        crossPaths.push(netRoute(x, y, r));
        crossNode.set(key, index);
      }
      return crossPaths[index];
    },
    gpuNics,
    nicGpu,
    switchUplink: (r) => nodeFabrics[Math.floor(r / gpusPerNode)].uplink[r % gpusPerNode],
    switchDownlink: (r) => nodeFabrics[Math.floor(r / gpusPerNode)].downlink[r % gpusPerNode],
    intraClass: spec.intraNode === 'pcie' ? 'pcie' : 'nvlink',
    nvlsCapable: nvls,
    hasSwitch: spec.intraNode === 'nvswitch',
    nicsPerNode,
    hostStaged: spec.intraNode === 'pcie' && spec.p2p === false,
    idealised: false,
    ringOrders: ringOrders.length > 0 ? ringOrders : [Array.from({ length: gpusPerNode }, (_, i) => i)],
  };
  // One spec built every node, so the fast path may let node 0 stand for all (see uniform.ts).
  markNodesIdentical(b.links);
  return {
    spec,
    gpu,
    ranks,
    nodes,
    gpusPerNode,
    label,
    topology: { vertices: b.vertices, links: b.links },
    fabric,
    hbmGBps,
    launchUs,
    tuner: ncclTuner(spec.ncclVersion),
  };
}

/** N GPUs on one ring of identical links: the textbook case the analytic formula describes. */
function uniformRing(
  spec: SystemSpec,
  gpu: NonNullable<ReturnType<typeof findGpu>>,
  ranks: number,
  hbmGBps: GBps,
  launchUs: Micros,
  label: string,
): System {
  const GBps = spec.overrides?.linkGBps;
  const latencyUs = spec.overrides?.linkLatencyUs ?? asMicros(0);
  if (GBps === undefined) throw new EngineError('a uniform-ring system needs overrides.linkGBps');
  const b = new TopologyBuilder();
  const ids = Array.from({ length: ranks }, (_, i) => b.vertex(`gpu${i}`, 'gpu', `GPU ${i}`, 0));
  const next: number[] = [];
  const prev: number[] = [];
  for (let i = 0; i < ranks && ranks > 1; i++) {
    const j = (i + 1) % ranks;
    if (ranks === 2 && i === 1) {
      next.push(b.link(ids[1], ids[0]));
      prev.push(b.link(ids[0], ids[1]));
      continue;
    }
    const [fwd] = b.duplex(ids[i], ids[j], GBps, latencyUs, 'nvlink');
    next.push(fwd);
  }
  for (let i = 0; i < ranks && ranks > 2; i++) prev.push(b.link(ids[(i + 1) % ranks], ids[i]));
  const fabric: Fabric = {
    route(x, y) {
      if (x === y) return [];
      const forward = (y - x + ranks) % ranks;
      const out: number[] = [];
      if (forward <= ranks - forward) for (let k = 0; k < forward; k++) out.push(next[(x + k) % ranks]);
      else for (let k = 0; k < ranks - forward; k++) out.push(prev[(x - k - 1 + ranks) % ranks]);
      return out;
    },
    switchUplink: () => -1,
    switchDownlink: () => -1,
    intraClass: 'nvlink',
    nvlsCapable: false,
    hasSwitch: false,
    nicsPerNode: 0,
    gpuNics: [],
    nicGpu: [],
    hostStaged: false,
    idealised: true,
    ringOrders: [Array.from({ length: ranks }, (_, i) => i)],
  };
  return {
    spec,
    gpu,
    ranks,
    nodes: 1,
    gpusPerNode: ranks,
    label,
    topology: { vertices: b.vertices, links: b.links },
    fabric,
    hbmGBps,
    launchUs,
    tuner: ncclTuner(spec.ncclVersion),
  };
}

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

/** Nodes under one leaf switch of a rail: a 64-port switch with 32 ports down and 32 up (non-blocking). */
const NODES_PER_LEAF = 32;

function checkInteger(value: unknown, what: string, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) throw new EngineError(`${what} must be an integer ≥ ${min}, got ${String(value)}`);
  return value;
}

const FABRIC_LABEL: Record<string, string> = {
  nvswitch: 'NVSwitch',
  'nvlink-mesh': 'NVLink mesh',
  'nvlink-bridge': 'NVLink bridge',
  pcie: 'PCIe',
  'uniform-ring': 'uniform ring',
};

export function resolveSystem(spec: SystemSpec): System {
  const gpu = findGpu(String(spec.gpu ?? ''));
  if (!gpu) throw new EngineError(`unknown GPU '${String(spec.gpu)}'; known: ${GPU_NAMES.join(', ')}`);
  const nodes = checkInteger(spec.nodes, 'nodes', 1);
  const gpusPerNode = checkInteger(spec.gpusPerNode, 'gpusPerNode', 1);
  const ranks = nodes * gpusPerNode;
  if (ranks < 1) throw new EngineError('a system needs at least one GPU');
  const hbmGBps = spec.overrides?.hbmGBps ?? gpu.hbmGBps;
  if (!(hbmGBps > 0)) throw new EngineError(`overrides.hbmGBps must be positive, got ${hbmGBps}`);
  const launchUs = spec.overrides?.launchUs ?? (spec.intraNode === 'uniform-ring' ? 0 : nodes === 1 ? gpusPerNode * K.LAUNCH_PER_GPU_US : K.LAUNCH_PER_GPU_US);
  if (!(launchUs >= 0)) throw new EngineError(`overrides.launchUs must be ≥ 0, got ${launchUs}`);
  const short = gpu.name.replace(/-SXM$/, '');
  const fabricLabel = FABRIC_LABEL[spec.intraNode] ?? spec.intraNode;
  if (spec.intraNode === 'uniform-ring') return uniformRing(spec, gpu, ranks, hbmGBps, launchUs, `${ranks}× ${short} ${fabricLabel}`);

  const b = new TopologyBuilder();
  const nodeFabrics: NodeFabric[] = [];
  for (let n = 0; n < nodes; n++) nodeFabrics.push(buildNode(b, spec, gpu, n));

  const nvlsCapable = spec.intraNode === 'nvswitch' && gpu.smVersion >= 90 && gpusPerNode >= 2;
  if (spec.nvls === true && !nvlsCapable) throw new EngineError(`nvls needs an NVSwitch and a Hopper or newer GPU (${gpu.name} on ${spec.intraNode})`);
  const nvls = spec.nvls ?? nvlsCapable;

  let nicsPerNode = 0;
  const nicOfGpu: number[] = [];
  const crossNode = new Map<number, number[]>();
  let label = `${gpusPerNode}× ${short} ${fabricLabel}`;
  if (spec.p2p === false && spec.intraNode === 'pcie') label += ' (no P2P)';
  let netRoute: (x: number, y: number) => number[] = () => [];
  if (nodes > 1) {
    if (!spec.nic) throw new EngineError(`a system of ${nodes} nodes needs nic: {gbps, perNode}`);
    nicsPerNode = checkInteger(spec.nic.perNode, 'nic.perNode', 1);
    if (!(spec.nic.gbps > 0)) throw new EngineError(`nic.gbps must be positive, got ${spec.nic.gbps}`);
    const nicGBps = spec.overrides?.nicGBps ?? (spec.nic.gbps / 8) * K.NIC_EFFICIENCY;
    const nicUs = spec.overrides?.nicLatencyUs ?? spec.nic.latencyUs ?? K.NIC_HOP_US;
    // The GPU reaches its NIC over PCIe (GPUDirect RDMA), so the PCIe overrides bound that hop too.
    const pcie = pcieGBps(spec, gpu);
    const pcieUs = spec.overrides?.pcieLatencyUs ?? K.PCIE_HOP_US;
    const leaves = Math.ceil(nodes / NODES_PER_LEAF);
    // Cross-rail and cross-leaf traffic goes up to the spine layer, modelled as one non-blocking switch.
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
        const [up, down] = b.duplex(leaf, spine, nicGBps * Math.min(NODES_PER_LEAF, nodes), K.NETWORK_SWITCH_HOP_US, 'network');
        leafUp[r].push(up);
        leafDown[r].push(down);
      }
    }
    // Link indices kept as built, so routes never look links up by name.
    const nicToLeaf: number[][] = [];
    const leafToNic: number[][] = [];
    const gpuToNic: number[][] = [];
    const nicToGpu: number[][] = [];
    for (let n = 0; n < nodes; n++) {
      const p = vertexPrefix(nodes, n);
      nicToLeaf.push([]);
      leafToNic.push([]);
      gpuToNic.push([]);
      nicToGpu.push([]);
      for (let r = 0; r < nicsPerNode; r++) {
        const nic = b.vertex(`${p}nic${r}`, 'nic', `node ${n} · NIC ${r}`, n);
        const [up, down] = b.duplex(nic, leafIds[r][Math.floor(n / NODES_PER_LEAF)], nicGBps, nicUs, 'network');
        nicToLeaf[n].push(up);
        leafToNic[n].push(down);
      }
      for (let g = 0; g < gpusPerNode; g++) {
        const r = Math.floor((g * nicsPerNode) / gpusPerNode);
        if (n === 0) nicOfGpu.push(r);
        const [up, down] = b.duplex(nodeFabrics[n].gpuIds[g], `${p}nic${r}`, pcie, pcieUs, 'pcie');
        gpuToNic[n].push(up);
        nicToGpu[n].push(down);
      }
    }
    netRoute = (x, y) => {
      const nx = Math.floor(x / gpusPerNode);
      const ny = Math.floor(y / gpusPerNode);
      const gx = x % gpusPerNode;
      const gy = y % gpusPerNode;
      const rx = nicOfGpu[gx];
      const ry = nicOfGpu[gy];
      const lx = Math.floor(nx / NODES_PER_LEAF);
      const ly = Math.floor(ny / NODES_PER_LEAF);
      const path = [gpuToNic[nx][gx], nicToLeaf[nx][rx]];
      if (rx !== ry || lx !== ly) path.push(leafUp[rx][lx], leafDown[ry][ly]);
      path.push(leafToNic[ny][ry], nicToGpu[ny][gy]);
      return path;
    };
    label = `${nodes}×${label.replace('× ', ' ')} + ${nicsPerNode}×${spec.nic.gbps}G IB`;
  }

  const ringOrders = spec.intraNode === 'nvlink-mesh' ? meshRingOrders(gpusPerNode, DGX1_NVLINKS) : [];
  const fabric: Fabric = {
    route(x, y) {
      const nx = Math.floor(x / gpusPerNode);
      const ny = Math.floor(y / gpusPerNode);
      if (nx === ny) return nodeFabrics[nx].route(x % gpusPerNode, y % gpusPerNode);
      const key = x * ranks + y;
      let path = crossNode.get(key);
      if (!path) {
        path = netRoute(x, y);
        crossNode.set(key, path);
      }
      return path;
    },
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
  return { spec, gpu, ranks, nodes, gpusPerNode, label, topology: { vertices: b.vertices, links: b.links }, fabric, hbmGBps, launchUs, tuner: ncclTuner(spec.ncclVersion) };
}

/** N GPUs on one ring of identical links: the textbook case the analytic formula describes. */
function uniformRing(spec: SystemSpec, gpu: NonNullable<ReturnType<typeof findGpu>>, ranks: number, hbmGBps: number, launchUs: number, label: string): System {
  const GBps = spec.overrides?.linkGBps;
  const latencyUs = spec.overrides?.linkLatencyUs ?? 0;
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
    hostStaged: false,
    idealised: true,
    ringOrders: [Array.from({ length: ranks }, (_, i) => i)],
  };
  return { spec, gpu, ranks, nodes: 1, gpusPerNode: ranks, label, topology: { vertices: b.vertices, links: b.links }, fabric, hbmGBps, launchUs, tuner: ncclTuner(spec.ncclVersion) };
}

// Turns a SystemSpec (what a user writes) into a System: vertices, directed links with ids, and routes.
import * as K from '../constants';
import { EngineError } from '../errors';
import { findGpu, GPU_NAMES } from '../hardware/gpus';
import { TopologyBuilder } from './builder';
import { DGX1_NVLINKS, meshRingOrders } from './dgx1-mesh';
import type { Fabric, System } from './model';
import { lazyTopology } from './link-table';
import { buildNodesAndNetwork, checkInteger } from './network-layout';
import type { SystemSpec } from './spec';
import { ncclTuner } from '../nccl-versions';
import { markNodesIdentical } from './uniform';
import { recordLayout } from './edits';
import { asMicros, type Micros, type GBps } from '../units';

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

/**
 * Host time per collective for each channel beyond the first, for the process (see System.hostWorkSlotUs): one
 * work slot per channel for every GPU the process drives, on the releases that keep the work FIFO in host memory.
 */
export function hostWorkSlotUs(spec: SystemSpec, slotUs: number = K.HOST_WORK_SLOT_US): Micros {
  if (spec.intraNode === 'uniform-ring' || !ncclTuner(spec.ncclVersion).hostWorkFifo) return asMicros(0);
  return asMicros((spec.gpusPerProcess ?? 1) * slotUs);
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

  // One node (and the shared network) is built; the others are copies at a constant link stride (network-layout.ts).
  const net = buildNodesAndNetwork(spec, gpu, nodes, 1);
  const { node0, intraPerNode, nicsPerNode, gpuNics, nicGpu, netRoute } = net;
  const nvlsCapable = spec.intraNode === 'nvswitch' && gpu.smVersion >= 90 && gpusPerNode >= 2;
  if (spec.nvls === true && !nvlsCapable)
    throw new EngineError(`nvls needs an NVSwitch and a Hopper or newer GPU (${gpu.name} on ${spec.intraNode})`);
  const nvls = spec.nvls ?? nvlsCapable;
  let label = `${gpusPerNode}× ${short} ${fabricLabel}`;
  if (spec.p2p === false && spec.intraNode === 'pcie') label += ' (no P2P)';
  if (nodes > 1) label = `${nodes}×${label.replace('× ', ' ')} + ${nicsPerNode}×${spec.nic!.gbps}G IB`;
  // Routes between nodes, by sender and then (receiver, NIC slot): keys stay small integers, which a Map hashes
  // much faster than the sender × receiver products past 2^31 that 131,072 ranks produce.
  const crossNode = new Map<number, Map<number, readonly number[]>>();
  // Routes inside node k are node 0's shifted by k × intraPerNode, kept per (node, source, destination).
  const intraRoutes = new Map<number, readonly number[]>();
  const intraRoute = (node: number, a: number, b: number): readonly number[] => {
    if (node === 0) return node0.route(a, b);
    const key = (node * gpusPerNode + a) * gpusPerNode + b;
    let route = intraRoutes.get(key);
    if (route === undefined) {
      const shift = node * intraPerNode;
      route = node0.route(a, b).map((link) => link + shift);
      intraRoutes.set(key, route);
    }
    return route;
  };

  const ringOrders = spec.intraNode === 'nvlink-mesh' ? meshRingOrders(gpusPerNode, DGX1_NVLINKS) : [];
  const fabric: Fabric = {
    route(x, y, slot = 0) {
      const nx = Math.floor(x / gpusPerNode);
      const ny = Math.floor(y / gpusPerNode);
      if (nx === ny) return intraRoute(nx, x % gpusPerNode, y % gpusPerNode);
      const r = slot % nicsPerNode;
      let fromX = crossNode.get(x);
      if (fromX === undefined) {
        fromX = new Map();
        crossNode.set(x, fromX);
      }
      const key = y * nicsPerNode + r;
      let path = fromX.get(key);
      if (path === undefined) {
        path = netRoute(x, y, r);
        fromX.set(key, path);
      }
      return path;
    },
    network: nodes > 1 ? { routeParts: net.netRouteParts, nodesPerLeaf: net.nodesPerLeaf } : undefined,
    gpuNics,
    nicGpu,
    switchUplink: (r) => node0.uplink[r % gpusPerNode] + Math.floor(r / gpusPerNode) * intraPerNode,
    switchDownlink: (r) => node0.downlink[r % gpusPerNode] + Math.floor(r / gpusPerNode) * intraPerNode,
    intraClass: spec.intraNode === 'pcie' ? 'pcie' : 'nvlink',
    nvlsCapable: nvls,
    hasSwitch: spec.intraNode === 'nvswitch',
    nicsPerNode,
    hostStaged: node0.hostStaged,
    idealised: false,
    ringOrders: ringOrders.length > 0 ? ringOrders : [Array.from({ length: gpusPerNode }, (_, i) => i)],
  };
  // One spec builds every node, so the fast path may let node 0 stand for all (see uniform.ts). The full list of
  // vertices and links is built when first read, by the same code over every node.
  const template = net.builder;
  const layout = {
    nodes,
    template: template.links,
    intraPerNode,
    shared: net.shared,
    nicPerNode: net.nicLinksPerNode,
    nodesPerLeaf: net.nodesPerLeaf,
  };
  // An edited copy keeps this fabric: the layout says which of its links the edit changed (edits.ts).
  if (nodes > 1) recordLayout(fabric, layout);
  const topology =
    nodes === 1
      ? { vertices: template.vertices, links: template.links }
      : lazyTopology(
          layout,
          () => {
            const all = buildNodesAndNetwork(spec, gpu, nodes, nodes).builder;
            return { vertices: all.vertices, links: all.links };
          },
          (built) => markNodesIdentical(built.links),
        );
  markNodesIdentical(topology);
  return {
    spec,
    gpu,
    ranks,
    nodes,
    gpusPerNode,
    label,
    topology,
    fabric,
    hbmGBps,
    launchUs,
    hostWorkSlotUs: hostWorkSlotUs(spec),
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
    hostWorkSlotUs: hostWorkSlotUs(spec),
    tuner: ncclTuner(spec.ncclVersion),
  };
}

// Builds one node's intra-node fabric (NVSwitch, NVLink mesh, NVLink bridge pairs or a PCIe tree) and returns
// the routes between its GPUs as link indices.
import * as K from '../constants';
import { EngineError } from '../errors';
import type { GpuSpec } from '../hardware/gpus';
import type { TopologyBuilder } from './builder';
import { DGX1_NVLINKS } from './dgx1-mesh';
import type { P2pLevel, SystemSpec } from './spec';
import { ncclP2pLevel, stagedThroughHost } from './p2p-level';
import { asGBps, asMicros } from '../units';

export interface NodeFabric {
  readonly gpuIds: readonly string[];
  /** Route between local GPUs a and b. */
  route(a: number, b: number): number[];
  uplink: number[];
  downlink: number[];
  /** Whether some pair of GPUs stages its traffic through host memory (NCCL's SHM transport). */
  readonly hostStaged: boolean;
}

export function vertexPrefix(nodes: number, node: number): string {
  return nodes > 1 ? `n${node}.` : '';
}

function positive(value: number | undefined, what: string): number | undefined {
  if (value === undefined) return undefined;
  if (!(value > 0) || !Number.isFinite(value)) throw new EngineError(`${what} must be a positive number, got ${value}`);
  return value;
}

/** A GPU's NVLink bandwidth as NCCL's topology code counts it (links × NCCL's per-link figure). */
export function ncclNvlinkGBps(spec: SystemSpec, gpu: GpuSpec): number {
  return nvlinkPortGBps(spec, gpu) / K.NVLINK_EFFICIENCY;
}

/** A GPU's usable NVLink bandwidth (one direction), GB/s. */
export function nvlinkPortGBps(spec: SystemSpec, gpu: GpuSpec): number {
  const perLink = positive(spec.overrides?.nvlinkGBpsPerLink, 'overrides.nvlinkGBpsPerLink') ?? gpu.nvlinkGBpsPerLink;
  const links = positive(spec.overrides?.nvlinkLinks, 'overrides.nvlinkLinks') ?? gpu.nvlinkLinks;
  return perLink * links * K.NVLINK_EFFICIENCY;
}

export function pcieGBps(spec: SystemSpec, gpu: GpuSpec): number {
  return positive(spec.overrides?.pcieGBps, 'overrides.pcieGBps') ?? K.PCIE_X16_GBPS[spec.pcieGen ?? gpu.pcieGen];
}

export function buildNode(b: TopologyBuilder, spec: SystemSpec, gpu: GpuSpec, node: number): NodeFabric {
  const g = spec.gpusPerNode;
  const p = vertexPrefix(spec.nodes, node);
  const gpuIds = Array.from({ length: g }, (_, i) => b.vertex(`${p}gpu${i}`, 'gpu', `node ${node} · GPU ${i}`, node));
  const nvlinkUs = spec.overrides?.nvlinkLatencyUs ?? asMicros(K.NVLINK_HOP_US);
  const pcieUs = spec.overrides?.pcieLatencyUs ?? asMicros(K.PCIE_HOP_US);
  const pcie = asGBps(pcieGBps(spec, gpu));
  const interSocket = asGBps(
    positive(spec.overrides?.interSocketGBps, 'overrides.interSocketGBps') ?? K.DEFAULT_INTER_SOCKET_GBPS,
  );

  // A PCIe tree carries PCIe-only traffic and the fallback between GPUs without NVLink. On an NVSwitch node all GPU
  // traffic is NVLink and each NIC sits beside its GPU, so the tree is left out (it would carry nothing).
  const fabric = spec.intraNode;
  const pcieTree = fabric !== 'nvswitch';
  const defaultPerSocket = g >= 4 ? Math.ceil(g / 2) : g;
  const perSocket = spec.gpusPerSocket ?? defaultPerSocket;
  const perSwitch = spec.gpusPerPcieSwitch ?? (fabric === 'pcie' ? 0 : Math.min(2, g));
  if (!Number.isInteger(perSocket) || perSocket < 1)
    throw new EngineError(`gpusPerSocket must be a positive integer, got ${perSocket}`);
  if (!Number.isInteger(perSwitch) || perSwitch < 0)
    throw new EngineError(`gpusPerPcieSwitch must be a non-negative integer, got ${perSwitch}`);
  const sockets = pcieTree ? Math.ceil(g / perSocket) : 0;
  const cpuIds = Array.from({ length: sockets }, (_, s) =>
    b.vertex(`${p}cpu${s}`, 'cpu', `node ${node} · CPU ${s}`, node),
  );
  for (let s = 0; s < sockets; s++)
    for (let t = s + 1; t < sockets; t++)
      b.duplex(cpuIds[s], cpuIds[t], interSocket, asMicros(K.INTER_SOCKET_HOP_US), 'inter-socket');
  // NCCL stages a pair's traffic through host memory when P2P is off or the pair sits farther apart than its P2P
  // level (p2p-level.ts); a node whose pairs all go peer to peer needs no staging memory. Only PCIe boxes stage:
  // the PCIe fallback between NVLink-mesh or bridged GPUs without a link of their own stays peer to peer.
  const level = ncclP2pLevel(spec);
  const stagedPath = (type: P2pLevel): boolean => fabric === 'pcie' && stagedThroughHost(spec, level, type);
  const hostStaged = stagedPath(g > perSocket ? 'SYS' : g > 1 && perSwitch < g ? 'PHB' : 'PIX');
  const hostIds = hostStaged
    ? cpuIds.map((cpu, s) => {
        const host = b.vertex(`${p}host${s}`, 'host', `node ${node} · host memory ${s}`, node);
        b.duplex(cpu, host, asGBps(K.HOST_MEMORY_GBPS), asMicros(K.HOST_STAGING_HOP_US), 'host');
        return host;
      })
    : [];
  // parents[g] is the chain of vertices from the GPU up to its root complex.
  const chains: string[][] = [];
  for (let i = 0; i < g && pcieTree; i++) {
    // A PCIe switch hangs off one root complex: the socket of the first GPU behind it.
    const socket =
      perSwitch > 0 ? Math.floor((Math.floor(i / perSwitch) * perSwitch) / perSocket) : Math.floor(i / perSocket);
    if (perSwitch > 0) {
      // The switch is created with its first GPU; the GPUs after it on the same switch reuse its id.
      const index = Math.floor(i / perSwitch);
      const sw =
        i % perSwitch === 0
          ? b.vertex(`${p}pcisw${index}`, 'pcie-switch', `node ${node} · PCIe switch ${index}`, node)
          : `${p}pcisw${index}`;
      b.duplex(gpuIds[i], sw, pcie, pcieUs, 'pcie');
      // One uplink per switch, added with the switch's first GPU.
      if (i % perSwitch === 0) b.duplex(sw, cpuIds[socket], pcie, pcieUs, 'pcie');
      chains.push([gpuIds[i], sw, cpuIds[socket]]);
    } else {
      b.duplex(gpuIds[i], cpuIds[socket], pcie, pcieUs, 'pcie');
      chains.push([gpuIds[i], cpuIds[socket]]);
    }
  }
  const walk = (vertices: string[]): number[] => {
    const out: number[] = [];
    for (let i = 0; i + 1 < vertices.length; i++) out.push(b.link(vertices[i], vertices[i + 1]));
    return out;
  };
  // NCCL's path type between two GPUs of this tree: one switch (PIX), one root complex (PHB) or two sockets (SYS).
  const pathType = (up: readonly string[], down: readonly string[]): P2pLevel => {
    if (up[up.length - 1] !== down[down.length - 1]) return 'SYS';
    return up.length > 2 && up[1] === down[1] ? 'PIX' : 'PHB';
  };
  const pcieRoute = (x: number, y: number): number[] => {
    const up = chains[x];
    const down = chains[y];
    if (stagedPath(pathType(up, down))) {
      const cpuX = up[up.length - 1];
      const host = hostIds[cpuIds.indexOf(cpuX)];
      const cpuY = down[down.length - 1];
      // The sender writes the staging buffer and the receiver reads it back: both pass through the same DRAM,
      // whose bandwidth reads and writes share, so the route crosses the memory link twice.
      const memory = b.link(cpuX, host);
      const toCpu = walk(up);
      const fromCpu = walk(cpuX === cpuY ? [...down].reverse() : [cpuX, ...[...down].reverse()]);
      return [...toCpu, memory, memory, ...fromCpu];
    }
    let common = -1;
    for (let i = 0; i < up.length; i++)
      if (down.includes(up[i])) {
        common = i;
        break;
      }
    if (common >= 0) {
      const j = down.indexOf(up[common]);
      return walk([...up.slice(0, common + 1), ...down.slice(0, j).reverse()]);
    }
    return walk([...up, ...[...down].reverse()]);
  };

  const direct = new Map<number, number>();
  let uplink: number[] = [];
  let downlink: number[] = [];
  if (fabric === 'nvswitch') {
    if (gpu.nvlinkLinks === 0 && spec.overrides?.nvlinkLinks === undefined)
      throw new EngineError(`${gpu.name} has no NVLink, so it cannot sit on an NVSwitch`);
    const sw = b.vertex(`${p}nvsw`, 'switch', `node ${node} · NVSwitch`, node);
    const port = asGBps(nvlinkPortGBps(spec, gpu));
    const pairs = gpuIds.map((id) => b.duplex(id, sw, port, nvlinkUs, 'nvswitch'));
    uplink = pairs.map((pair) => pair[0]);
    downlink = pairs.map((pair) => pair[1]);
  } else if (fabric === 'nvlink-mesh') {
    if (g > 8) throw new EngineError(`an NVLink hybrid cube-mesh holds at most 8 GPUs, got gpusPerNode ${g}`);
    const perLink = nvlinkPortGBps(spec, gpu) / Math.max(1, gpu.nvlinkLinks);
    for (let x = 0; x < g; x++)
      for (let y = x + 1; y < g; y++) {
        const count = DGX1_NVLINKS[x][y];
        if (count === 0) continue;
        const [fwd, back] = b.duplex(gpuIds[x], gpuIds[y], asGBps(perLink * count), nvlinkUs, 'nvlink');
        direct.set(x * g + y, fwd);
        direct.set(y * g + x, back);
      }
  } else if (fabric === 'nvlink-bridge') {
    if (gpu.nvlinkLinks === 0 && spec.overrides?.nvlinkLinks === undefined)
      throw new EngineError(`${gpu.name} has no NVLink, so it cannot be bridged`);
    for (let x = 0; x + 1 < g; x += 2) {
      const [fwd, back] = b.duplex(
        gpuIds[x],
        gpuIds[x + 1],
        asGBps(nvlinkPortGBps(spec, gpu) * K.nvlinkBridgeEfficiency(gpu.nvlinkGen)),
        nvlinkUs,
        'nvlink',
      );
      direct.set(x * g + x + 1, fwd);
      direct.set((x + 1) * g + x, back);
    }
  } else if (fabric !== 'pcie') {
    throw new EngineError(`unknown intraNode fabric '${fabric}'`);
  }
  const routes = new Map<number, number[]>();
  return {
    gpuIds,
    uplink,
    downlink,
    hostStaged,
    route(x: number, y: number): number[] {
      const key = x * g + y;
      let route = routes.get(key);
      if (route === undefined) {
        if (fabric === 'nvswitch') route = [uplink[x], downlink[y]];
        else {
          const link = direct.get(key);
          route = link !== undefined ? [link] : pcieRoute(x, y);
        }
        routes.set(key, route);
      }
      return route;
    },
  };
}

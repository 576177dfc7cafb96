// Ready-made systems. Each is one node; `presetSystem(name, {nodes})` scales it out over its NICs.
import type { SystemSpec } from './spec';

export const PRESETS: Readonly<Record<string, SystemSpec>> = {
  'dgx1-v100': {
    name: 'DGX-1 (V100)',
    gpu: 'V100-SXM',
    nodes: 1,
    gpusPerNode: 8,
    intraNode: 'nvlink-mesh',
    pcieGen: 3,
    gpusPerPcieSwitch: 2,
    gpusPerSocket: 4,
    nic: { gbps: 100, perNode: 4 },
  },
  'dgx-a100': {
    name: 'DGX A100',
    gpu: 'A100-SXM',
    nodes: 1,
    gpusPerNode: 8,
    intraNode: 'nvswitch',
    nic: { gbps: 200, perNode: 8 },
  },
  'dgx-h100': {
    name: 'DGX H100',
    gpu: 'H100-SXM',
    nodes: 1,
    gpusPerNode: 8,
    intraNode: 'nvswitch',
    nvls: true,
    nic: { gbps: 400, perNode: 8 },
  },
  'hgx-h200': {
    name: 'HGX H200',
    gpu: 'H200',
    nodes: 1,
    gpusPerNode: 8,
    intraNode: 'nvswitch',
    nvls: true,
    nic: { gbps: 400, perNode: 8 },
  },
  'dgx-b200': {
    name: 'DGX B200',
    gpu: 'B200',
    nodes: 1,
    gpusPerNode: 8,
    intraNode: 'nvswitch',
    nvls: true,
    nic: { gbps: 400, perNode: 8 },
  },
  // GB200 NVL72: 18 compute trays of 4 GPUs whose NVLink 5 ports all go to 9 NVLink Switch trays (18 links per
  // GPU, one per switch chip, 1.8 TB/s bidir each), so the 72 GPUs form one NVLink domain; NCCL fuses that
  // multi-node NVLink (MNNVL) clique into one node. Each tray has 4 ConnectX-7 400G NICs, one per GPU.
  'gb200-nvl72': {
    name: 'GB200 NVL72 (72 GPUs, one NVLink domain)',
    gpu: 'GB200',
    nodes: 1,
    gpusPerNode: 72,
    intraNode: 'nvswitch',
    nvls: true,
    nic: { gbps: 400, perNode: 72 },
  },
  'gb200-nvl72-tray': {
    name: 'GB200 NVL72 compute tray',
    gpu: 'GB200',
    nodes: 1,
    gpusPerNode: 4,
    intraNode: 'nvswitch',
    nvls: true,
    nic: { gbps: 400, perNode: 4 },
  },
  'pcie-4090x8': {
    name: '8× RTX 4090 PCIe (stock driver, no P2P)',
    gpu: 'RTX4090',
    nodes: 1,
    gpusPerNode: 8,
    intraNode: 'pcie',
    p2p: false,
    pcieGen: 4,
    gpusPerSocket: 4,
    nic: { gbps: 100, perNode: 1 },
  },
  'pcie-l40sx8': {
    name: '8× L40S PCIe',
    gpu: 'L40S',
    nodes: 1,
    gpusPerNode: 8,
    intraNode: 'pcie',
    p2p: true,
    pcieGen: 4,
    gpusPerPcieSwitch: 4,
    gpusPerSocket: 4,
    nic: { gbps: 200, perNode: 2 },
  },
  'pcie-a100x8': {
    name: '8× A100 PCIe',
    gpu: 'A100-PCIe',
    nodes: 1,
    gpusPerNode: 8,
    intraNode: 'pcie',
    p2p: true,
    pcieGen: 4,
    gpusPerPcieSwitch: 2,
    gpusPerSocket: 4,
    nic: { gbps: 200, perNode: 4 },
  },
  'pcie-a10x4': {
    name: '4× A10 PCIe',
    gpu: 'A10',
    nodes: 1,
    gpusPerNode: 4,
    intraNode: 'pcie',
    p2p: true,
    pcieGen: 4,
    gpusPerSocket: 2,
    nic: { gbps: 100, perNode: 1 },
  },
  'bridge-3090x2': {
    name: '2× RTX 3090 + NVLink bridge',
    gpu: 'RTX3090',
    nodes: 1,
    gpusPerNode: 2,
    intraNode: 'nvlink-bridge',
    pcieGen: 4,
    nic: { gbps: 100, perNode: 1 },
  },
  'bridge-h100pciex2': {
    name: '2× H100 PCIe + NVLink bridge',
    gpu: 'H100-PCIe',
    nodes: 1,
    gpusPerNode: 2,
    intraNode: 'nvlink-bridge',
    pcieGen: 5,
    nic: { gbps: 400, perNode: 2 },
  },
};

/** A preset by name (case-insensitive), optionally scaled to more nodes or a different node size. */
export function presetSystem(
  name: string,
  overrides: { nodes?: number; gpusPerNode?: number } = {},
): SystemSpec | undefined {
  const key = Object.keys(PRESETS).find((k) => k.toLowerCase() === name.trim().toLowerCase());
  if (!key) return undefined;
  const base = PRESETS[key];
  return { ...base, nodes: overrides.nodes ?? base.nodes, gpusPerNode: overrides.gpusPerNode ?? base.gpusPerNode };
}

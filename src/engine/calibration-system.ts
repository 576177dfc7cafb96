// Reads the hardware a published nccl-tests run describes (its gpu, interconnect, nic and nccl_version fields) into
// a SystemSpec.
// `validate` uses it for datasets that have no hand-written system file, and a test checks that it agrees with
// the hand-written ones. Only description text is read, never the measured rows.
import { gpuFromDescription } from './hardware/gpu-description';
import type { SystemSpec } from './topology/spec';
import { isNcclVersion } from './nccl-versions';

export interface DatasetDescription {
  readonly gpu?: unknown;
  readonly gpus_per_node?: unknown;
  readonly nodes?: unknown;
  readonly interconnect?: unknown;
  readonly nic?: unknown;
  readonly description?: unknown;
  readonly nccl_version?: unknown;
  readonly command?: unknown;
}

const text = (value: unknown): string => (typeof value === 'string' ? value.toLowerCase() : '');

/**
 * GPUs each process of the run drove: nccl-tests' `-g N` when its command line is recorded, or all of a node's GPUs
 * when the command or description says it ran as a single process; undefined when neither says: the launch cost
 * depends on it, so it is not guessed.
 */
export function gpusPerProcessFromDataset(dataset: DatasetDescription, gpusPerNode: number): number | undefined {
  const command = typeof dataset.command === 'string' ? dataset.command : '';
  const flag = /(?:^|\s)-g\s*(\d+)(?=\s|$)/.exec(command);
  if (flag) return Number(flag[1]);
  if (/single process|one process/.test(`${text(dataset.command)} ${text(dataset.description)}`)) return gpusPerNode;
  return undefined;
}

/** Words that name a multi-node NVLink domain (NVL72, NVL36, "multi-node NVLink", MNNVL). */
const MULTI_NODE_NVLINK = /\bnvl(?:36|72)\b|multi-?node nvlink|\bmnnvl\b|one nvlink domain/;

export function systemFromDescription(dataset: DatasetDescription): SystemSpec | undefined {
  const gpu = gpuFromDescription(text(dataset.gpu));
  let gpusPerNode = typeof dataset.gpus_per_node === 'number' ? dataset.gpus_per_node : undefined;
  let nodes = typeof dataset.nodes === 'number' ? dataset.nodes : 1;
  if (!gpu || !gpusPerNode) return undefined;
  const wiring = `${text(dataset.interconnect)} ${text(dataset.description)}`;
  // Trays of one multi-node NVLink domain (GB200/GB300 NVL72, NVL36) reach each other over NVLink switches, not
  // NICs; NCCL fuses the clique's topology into one node (MNNVL), so the engine sees one node of all its GPUs.
  if (nodes > 1 && MULTI_NODE_NVLINK.test(`${wiring} ${text(dataset.gpu)}`)) {
    gpusPerNode *= nodes;
    nodes = 1;
  }
  let intraNode: SystemSpec['intraNode'];
  if (/bridge/.test(wiring)) intraNode = 'nvlink-bridge';
  else if (/cube.?mesh|hybrid mesh/.test(wiring)) intraNode = 'nvlink-mesh';
  else if (/nvswitch|nvlink switch/.test(wiring)) intraNode = 'nvswitch';
  else if (/nvlink/.test(wiring) && !/no nvlink/.test(wiring))
    intraNode = gpusPerNode > 4 || /sxm|gb200|b200|h200/i.test(gpu) ? 'nvswitch' : 'nvlink-bridge';
  else intraNode = 'pcie';
  const spec: { -readonly [K in keyof SystemSpec]: SystemSpec[K] } = { gpu, nodes, gpusPerNode, intraNode };
  if (isNcclVersion(dataset.nccl_version)) spec.ncclVersion = dataset.nccl_version;
  const gpusPerProcess = gpusPerProcessFromDataset(dataset, gpusPerNode);
  if (gpusPerProcess !== undefined && gpusPerProcess <= gpusPerNode) spec.gpusPerProcess = gpusPerProcess;
  const gen = /pcie\s*(?:gen\s*)?([3-6])(?:\.0)?\b|gen\s*([3-6])\b/.exec(wiring);
  if (gen) spec.pcieGen = Number(gen[1] ?? gen[2]) as 3 | 4 | 5 | 6;
  if (intraNode === 'pcie') {
    if (/p2p (?:is )?disabled|no p2p|without p2p|p2p off/.test(wiring)) spec.p2p = false;
    const sockets = /(\d+)\s*(?:x|×)?\s*(?:amd|intel|sockets?|cpus?)\b|(\d+)\s*sockets/.exec(wiring);
    const count = sockets ? Number(sockets[1] ?? sockets[2]) : 1;
    if (count > 1 && gpusPerNode % count === 0) spec.gpusPerSocket = gpusPerNode / count;
  }
  if (nodes > 1) {
    const nicText = text(dataset.nic);
    const speed = /(\d+)\s*gb\/?s|(\d+)\s*gbps|(\d+)g\b/.exec(nicText);
    const count = /(\d+)\s*x\s/.exec(nicText);
    const gbps = speed ? Number(speed[1] ?? speed[2] ?? speed[3]) : 100;
    spec.nic = { gbps, perNode: count ? Number(count[1]) : gpusPerNode };
  }
  return spec;
}

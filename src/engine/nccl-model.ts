// NCCL's own cost model (src/graph/tuning.cc, NCCL 2.30 as described in ../shared/reference/nccl-cost-model.md).
// NCCL uses it to choose an algorithm and protocol, and so does `auto`: the simulator then times the choice. The
// model is a selection heuristic, not a predictor, which is why the simulator, not this, gives the time.
import type { Algorithm, CollectiveKind, Protocol } from './collective-types';
import { searchGraph } from './channels';
import type { System } from './topology/model';

type Row = readonly [number, number, number];
const ARCH = (sm: number): number => (sm >= 100 ? 3 : sm >= 90 ? 2 : sm >= 80 ? 1 : 0);

const LL_MAX: readonly Row[] = [[39, 39, 20.4], [87.7, 22.5, 19], [141, 45, 35], [282, 90, 70]];
const RING_LL128_PER_CH: readonly Row[] = [[20, 20, 20], [20, 20, 20], [36.7, 36.7, 36.7], [40, 40, 40]];
const TREE_LL128_PER_CH: readonly Row[] = [[20, 20, 20], [20, 20, 20], [36.7, 36.7, 29], [55.6, 31.67, 20]];
const TREE_PER_CH: readonly Row[] = [[26.5, 18.5, 10], [24, 23.6, 17.8], [38.7, 41.4, 36], [70, 42.8, 24]];
const NVLS_TREE_PER_CH: readonly Row[] = [[26.5, 18.5, 10], [24, 23.6, 17.8], [0, 57.7, 45.5], [0, 96, 80]];

/** Base and per-hop latencies, µs, indexed [LL, LL128, Simple]. */
const BASE_LAT: Record<string, Row> = { tree: [6.8, 14, 8.4], ring: [6.6, 14, 8.4], nvls: [0, 0, 0], nvlstree: [0, 0, 0] };
const HW_LAT: Record<'nvlink' | 'pcie' | 'net', Record<string, Row>> = {
  nvlink: { tree: [0.6, 1.25, 4], ring: [0.6, 1.9, 3.4], nvls: [0, 0, 25], nvlstree: [0, 0, 25] },
  pcie: { tree: [1, 1.9, 4], ring: [1, 2.5, 5.7], nvls: [0, 0, 0], nvlstree: [0, 0, 0] },
  net: { tree: [5, 8.5, 14], ring: [2.7, 4, 14], nvls: [0, 0, 18], nvlstree: [0, 0, 20.9] },
};

const TREE_CORRECTION: Record<Protocol, readonly number[]> = {
  LL: [1, 1, 1, 1, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1, 1, 1, 1],
  LL128: [1, 1, 1, 1, 1, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.9, 0.9, 0.9, 1, 1, 1],
  Simple: [0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7, 0.7, 0.8, 0.9, 0.9, 0.9],
};
const PROTO_INDEX: Record<Protocol, number> = { LL: 0, LL128: 1, Simple: 2 };

/** NCCL's predicted time for one (algorithm, protocol), µs, or Infinity when its model gives no bandwidth. */
export function ncclPredictedUs(system: System, kind: CollectiveKind, bytes: number, algorithm: Algorithm, protocol: Protocol): number {
  const { nodes, ranks } = system;
  const ppn = system.gpusPerNode;
  const arch = ARCH(system.gpu.smVersion);
  const col = nodes <= 2 ? nodes - 1 : 2;
  const p = PROTO_INDEX[protocol];
  const graph = searchGraph(system);
  const nCh = graph.channels;
  const perCh = nodes <= 2 ? graph.bwIntra : graph.bwInter;
  let busBw = nCh * perCh;
  const llMax = nodes === 1 ? LL_MAX[arch][0] : LL_MAX[arch > 1 ? 0 : arch][col];
  if (algorithm === 'ring') {
    if (protocol === 'LL') busBw = Math.min(llMax, 0.5 * busBw);
    else if (protocol === 'LL128') busBw = Math.min(0.92 * busBw, nCh * RING_LL128_PER_CH[arch][col]);
  } else if (algorithm === 'tree') {
    busBw = Math.min(0.92 * busBw, nCh * TREE_PER_CH[arch][col]);
    if (protocol === 'LL') busBw = Math.min(busBw / 3.8, llMax);
    else if (protocol === 'LL128') busBw = Math.min(busBw * (nodes === 1 ? 7 / 9 : 120 / 128), nCh * TREE_LL128_PER_CH[arch][col]);
  } else if (algorithm === 'nvls' || algorithm === 'nvlstree') {
    const nvls = graph.nvls;
    if (nvls.channels < 2) return Infinity;
    const efficiency = arch >= 3 ? 0.74 : 0.85;
    let intra = nvls.bwIntra * efficiency * ((nvls.channels - 1) / nvls.channels);
    intra *= kind === 'allreduce' ? 2 : (ppn - 1) / ppn;
    let perChannel = intra;
    if (nodes > 1) {
      const inter = nvls.bwInter * (algorithm === 'nvlstree' && nodes <= 2 ? 2 : 1);
      perChannel = Math.min(perChannel, inter);
      if (algorithm === 'nvlstree') perChannel = Math.min(perChannel, NVLS_TREE_PER_CH[arch][col]);
    }
    busBw = nvls.channels * perChannel;
  } else {
    return Infinity;
  }
  if (!(busBw > 0)) return Infinity;
  const nSteps = kind === 'allreduce' ? 2 * (ranks - 1) : ranks - 1;
  let algBw = algorithm === 'tree' ? busBw * 0.5 : (busBw * ranks) / Math.max(1, nSteps);
  const intraClass = system.fabric.intraClass === 'pcie' ? 'pcie' : 'nvlink';
  const intraLatRaw = HW_LAT[intraClass][algorithm][p];
  const interLat = HW_LAT.net[ppn === 1 ? 'tree' : algorithm][p] * (protocol === 'Simple' ? 1 : 1);
  const base = BASE_LAT[algorithm][p];
  let latency: number;
  if (algorithm === 'ring') {
    const netOverhead = protocol === 'Simple' ? 3 : 1;
    const intraLat = nodes > 1 ? Math.max(intraLatRaw, netOverhead) : intraLatRaw;
    const interSteps = nodes > 1 ? 2 * (nodes - 1) : 0;
    latency = base + (nSteps - interSteps) * intraLat + interSteps * interLat;
    if (protocol === 'Simple' && nodes > 1 && bytes / nCh / ranks >= 64) latency *= system.gpu.smVersion >= 80 ? 1.4 : 1.9;
  } else if (algorithm === 'tree') {
    latency = base + 2 * ((ppn - 1) * intraLatRaw + Math.log2(nodes) * interLat);
    const index = Math.min(23, Math.max(0, Math.floor(Math.log2(Math.max(1, bytes / 64)))));
    algBw *= TREE_CORRECTION[protocol][index];
  } else if (algorithm === 'nvls') {
    latency = intraLatRaw + (nodes > 1 ? interLat : 0);
  } else {
    latency = base + intraLatRaw + 2 * Math.log2(nodes) * interLat;
  }
  return latency + bytes / (1000 * algBw);
}

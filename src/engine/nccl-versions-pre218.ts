// NCCL's cost model before 2.18 (src/graph/tuning.cc at tags v2.10.3-1 to v2.17.1-1 in NVIDIA/nccl), where it
// differs from 2.18.3's: other latencies, a bus-bandwidth cap per architecture, LL128 capped at 20 GB/s per
// channel on every GPU up to 2.16, Hopper ranked with older GPUs' rows until 2.15–2.17 gave it its own, and an LL
// step across nodes charged 1.8× inside the node. Releases before 2.10 are taken as 2.10 (2.8–2.9 differ in their
// LL128 per-channel figures by collective and a CollNet row; not modelled).
import type { LatencyClass, LegacyCostModel, NcclTuner, TunedAlgorithm } from './nccl-tuner';
import { ncclSearchRelease } from './nccl-search-releases';

type Row = readonly [ll: number, ll128: number, simple: number];

const rows = (nvlink: Row, pcie: Row, net: Row, tree: [Row, Row, Row]): NcclTuner['hwLatencyUs'] => {
  const table = (ring: Row, treeRow: Row, collnet: Row): Record<TunedAlgorithm, Row> => ({
    tree: treeRow,
    ring,
    collnetdirect: collnet,
    collnetchain: collnet,
    nvls: [0, 0, 0],
    nvlstree: [0, 0, 0],
    pat: [0, 0, 0],
  });
  const out: Record<LatencyClass, Record<TunedAlgorithm, Row>> = {
    nvlink: table(nvlink, tree[0], [0, 0, 8]),
    pcie: table(pcie, tree[1], [0, 0, 8]),
    net: table(net, tree[2], [0, 0, 10.7]),
  };
  return out;
};

// hwLat, v2.10.3-1 to v2.17.1-1: Ring NVLink {.47, 1.9, 3.4}, PCI {1.0, 2.5, 5.7}, NET {2.7, 4.0, 9.6} (Simple 28
// in v2.12.x and v2.13.4-1); Tree NVLink {.52, 1.25, 28}, PCI {1.0, 1.9, 28}, NET {5.0, 8.5, 28}; CollNet Simple
// 8.0 / 8.0 / 10.7. Tree/Simple's 28 µs is "the latency a 256kB chunk" (the comment above it up to 2.13), a ranking
// figure, not a step: the simulator charges 2.18's tree/Simple steps (4, 6 and 14 µs). Ring/Simple's 28 µs across
// nodes in 2.12–2.13 went back to 9.6 in 2.14, and its steps are charged 9.6 likewise.
const TREE_RANK: [Row, Row, Row] = [
  [0.52, 1.25, 28],
  [1, 1.9, 28],
  [5, 8.5, 28],
];
const TREE_STEP: [Row, Row, Row] = [
  [0.52, 1.25, 4],
  [1, 1.9, 6],
  [5, 8.5, 14],
];
const RING_NVLINK: Row = [0.47, 1.9, 3.4];
const RING_PCIE: Row = [1, 2.5, 5.7];
const RING_NET: Row = [2.7, 4, 9.6];

// baseLat, v2.10.3-1 to v2.17.1-1: Tree {4.4, 4.4, 0}, Ring {3.6, 10.0, 8.4}, CollNet {4.4, 4.4, 0}; NVLS {0, 0,
// 40} in v2.17.1-1, the first release with NVLS.
const BASE: NcclTuner['baseLatencyUs'] = {
  tree: [4.4, 4.4, 0],
  ring: [3.6, 10, 8.4],
  collnetdirect: [4.4, 4.4, 0],
  collnetchain: [4.4, 4.4, 0],
  nvls: [0, 0, 40],
  nvlstree: [0, 0, 0],
  pat: [0, 0, 0],
};

// perChMaxTreeBws: Volta {26.5, 18.5, 10.0}, Ampere {24.0, 23.6, 17.8} from v2.10.3-1; Hopper's row is Ampere's in
// v2.15.5-1 and v2.16.x and {38.7, 41.4, 33.0} in v2.17.1-1.
const VOLTA_TREE: Row = [26.5, 18.5, 10];
const AMPERE_TREE: Row = [24, 23.6, 17.8];

function legacyModel(minor: number): LegacyCostModel {
  return {
    tableArch: (sm) => {
      if (minor >= 17) return sm >= 90 ? 2 : sm >= 80 ? 1 : 0;
      if (sm === 80) return 1;
      return minor >= 15 && sm === 90 ? 2 : 0;
    },
    // `if (compCapIndex == AMPERE_COMPCAP_IDX) busBw = std::min(busBw, 235.0f)`; the Hopper cap is 2.17's only.
    busBwCapGBps: [Infinity, 235, minor >= 17 ? 370 : Infinity],
    // ll128MaxBwPerCh: 20.0 for every GPU up to v2.16.5-1; {20.0, 20.0, 36.7} by row in v2.17.1-1.
    ll128PerChannelGBps: [20, 20, minor >= 17 ? 36.7 : 20],
    treePerChannelGBps: [VOLTA_TREE, AMPERE_TREE, minor >= 17 ? [38.7, 41.4, 33] : AMPERE_TREE],
    llMultiNodeIntraFactor: 1.8,
  };
}

/** The tuner of a release before 2.18, built on 2.18.3's for the fields that did not change. */
export function tunerBefore218(minor: number, v218: NcclTuner): NcclTuner {
  const ringNetRank: Row = minor === 12 || minor === 13 ? [2.7, 4, 28] : RING_NET;
  return {
    ...v218,
    tables: '2.10-2.17',
    hwLatencyUs: rows(RING_NVLINK, RING_PCIE, ringNetRank, TREE_RANK),
    stepLatencyUs: rows(RING_NVLINK, RING_PCIE, RING_NET, TREE_STEP),
    baseLatencyUs: BASE,
    search: ncclSearchRelease(minor),
    legacy: legacyModel(minor),
    nvls: minor >= 17,
    nvlsTree: false,
  };
}

// NCCL's tuner constants change between releases (tuning.cc; ../shared/reference/nccl-cost-model.md §3 and §4.3),
// and so do its choices: NVLSTree's network latency went from 14 µs to 20.9 µs in 2.28+, which moves the size at
// which multi-node H100 runs leave tree/LL128 from about 1 MiB (2 nodes, 2.26) to 8 MiB. A measurement names the
// release that ran it, so the model can rank algorithms as that release did. The simulator charges the same
// per-step latencies (NVIDIA's measured cost of one step of that release's kernels), except where a release used
// one to steer the choice.
import type { Protocol } from './collective-types';
import { EngineError } from './errors';
import { NEWEST_SEARCH } from './nccl-search-releases';
import type { AlgorithmRows, LatencyClass, NcclTuner, TunedAlgorithm } from './nccl-tuner';
import { tunerBefore218 } from './nccl-versions-pre218';

export type { LatencyClass, NcclTuner, TunedAlgorithm } from './nccl-tuner';

// CollNet rows (Simple only): 3.7 / 2.8 µs per intra-node step for Direct / Chain, and 31 / 30 µs for the SHARP
// operation across the network (tuning.cc hwLat, the same in 2.21.5, 2.27.7 and 2.30.7).
const HEAD_HW: NcclTuner['hwLatencyUs'] = {
  nvlink: {
    tree: [0.6, 1.25, 4],
    ring: [0.6, 1.9, 3.4],
    collnetdirect: [0, 0, 3.7],
    collnetchain: [0, 0, 2.8],
    nvls: [0, 0, 25],
    nvlstree: [0, 0, 25],
    pat: [0, 0, 4],
  },
  pcie: {
    tree: [1, 1.9, 4],
    ring: [1, 2.5, 5.7],
    collnetdirect: [0, 0, 3.7],
    collnetchain: [0, 0, 2.8],
    nvls: [0, 0, 0],
    nvlstree: [0, 0, 0],
    pat: [0, 0, 4],
  },
  net: {
    tree: [5, 8.5, 14],
    ring: [2.7, 4, 14],
    collnetdirect: [0, 0, 31],
    collnetchain: [0, 0, 30],
    nvls: [0, 0, 18],
    nvlstree: [0, 0, 20.9],
    pat: [0, 0, 14],
  },
};

const HEAD: NcclTuner = {
  tables: '2.30',
  version: '2.30.7',
  hwLatencyUs: HEAD_HW,
  stepLatencyUs: HEAD_HW,
  baseLatencyUs: {
    tree: [6.8, 14, 8.4],
    ring: [6.6, 14, 8.4],
    collnetdirect: [0, 0, 0],
    collnetchain: [0, 0, 0],
    nvls: [0, 0, 0],
    nvlstree: [0, 0, 0],
    pat: [8, 8, 8],
  },
  nvlsPipelined: true,
  hopperLlAsAmpere: false,
  pat: true,
  hostWorkFifo: false,
  search: NEWEST_SEARCH,
  nvls: true,
  nvlsTree: true,
};

// 2.27.7 has no PAT row (its PAT latency is 8 + log2(N) × interLat / 3.5 + 2.8 × n, hard-coded, with the tree's
// network row as interLat since PAT runs one GPU per node), so its PAT hardware latencies are 0.
const V2_27_HW: NcclTuner['hwLatencyUs'] = {
  nvlink: { ...HEAD_HW.nvlink, pat: [0, 0, 0] },
  pcie: { ...HEAD_HW.pcie, pat: [0, 0, 0] },
  net: { ...HEAD_HW.net, nvlstree: [0, 0, 14], pat: [0, 0, 0] },
};

const V2_27: NcclTuner = {
  ...HEAD,
  tables: '2.27',
  version: '2.27.7',
  hwLatencyUs: V2_27_HW,
  stepLatencyUs: V2_27_HW,
  nvlsPipelined: false,
};

const V2_21: NcclTuner = {
  ...V2_27,
  tables: '2.21',
  version: '2.21.5',
  hwLatencyUs: {
    nvlink: { ...V2_27_HW.nvlink, tree: [0.6, 1.25, 28] },
    pcie: { ...V2_27_HW.pcie, tree: [1, 1.9, 28] },
    net: { ...V2_27_HW.net, tree: [5, 8.5, 28] },
  },
  // 28 µs kept tree/Simple from being chosen; its steps cost what 2.27 says they do.
  stepLatencyUs: V2_27_HW,
  baseLatencyUs: { ...HEAD.baseLatencyUs, tree: [6.8, 14, 0] },
};

// 2.18.3's CollNet rows: 8.0 / 4.75 µs on NVLink, 8.0 / 8.0 on PCIe, 10.7 / 14 across the network, and a base
// latency of 6.8 / 14 µs for LL / LL128 (Simple 0).
const V2_18_HW: NcclTuner['hwLatencyUs'] = {
  nvlink: {
    ...HEAD_HW.nvlink,
    collnetdirect: [0, 0, 8],
    collnetchain: [0, 0, 4.75],
    nvls: [0, 0, 0],
    nvlstree: [0, 0, 0],
  },
  pcie: { ...HEAD_HW.pcie, tree: [1, 1.9, 6], collnetdirect: [0, 0, 8], collnetchain: [0, 0, 8] },
  net: { ...HEAD_HW.net, collnetdirect: [0, 0, 10.7], collnetchain: [0, 0, 14], nvlstree: [0, 0, 19] },
};

const V2_18: NcclTuner = {
  ...V2_21,
  tables: '2.18',
  version: '2.18.3',
  hwLatencyUs: V2_18_HW,
  stepLatencyUs: V2_18_HW,
  baseLatencyUs: {
    ...HEAD.baseLatencyUs,
    tree: [6.8, 14, 0],
    collnetdirect: [6.8, 14, 0],
    collnetchain: [6.8, 14, 0],
    nvls: [0, 0, 23],
    nvlstree: [0, 0, 23],
  },
  hopperLlAsAmpere: true,
};

export const DEFAULT_TUNER = HEAD;

/** The table row an algorithm's steps are charged by: its own, or the ring's for those NCCL does not have. */
export function tunedRow(algorithm: string): TunedAlgorithm {
  return algorithm === 'tree' ||
    algorithm === 'collnetdirect' ||
    algorithm === 'collnetchain' ||
    algorithm === 'nvls' ||
    algorithm === 'nvlstree' ||
    algorithm === 'pat'
    ? algorithm
    : 'ring';
}

const VERSION = /^(\d+)\.(\d+)(?:\.(\d+))?/;

/** Whether a version string from a log, a dataset or a setting names an NCCL 2.x release the tuner can read. */
export function isNcclVersion(text: unknown): text is string {
  return typeof text === 'string' && /^2\.\d+/.test(text.trim());
}

/**
 * The spec with the NCCL release a measurement, dataset or setting names, where the spec names none: what a file
 * says about its own machine is more specific than what comes with it.
 */
export function withNcclVersion<S extends { readonly ncclVersion?: string }>(spec: S, version: unknown): S {
  return spec.ncclVersion === undefined && isNcclVersion(version) ? { ...spec, ncclVersion: version.trim() } : spec;
}

/**
 * The tables for an NCCL release ("2.26.2", "2.26.2+cuda12.4"); none given means the newest. The reference has
 * tables for 2.18.3, 2.21.5, 2.27.7 and 2.30.7; other releases are assumed to match one of them: 2.18–2.20 →
 * 2.18.3, 2.21 → 2.21.5, 2.22–2.27 → 2.27.7, 2.28+ → 2.30.7. For 2.22–2.26 that is a guess: when the tree/Simple
 * latencies changed between 2.21.5 and 2.27.7 is not known more finely. Releases before 2.18 take the tables and
 * the search read at their own tags (nccl-versions-pre218.ts, nccl-search-releases.ts).
 */
export function ncclTuner(version?: string): NcclTuner {
  if (version === undefined || version === '') return HEAD;
  const m = VERSION.exec(version.trim());
  if (!m || Number(m[1]) !== 2) throw new EngineError(`ncclVersion must look like 2.26.2, got '${version}'`);
  const minor = Number(m[2]);
  const tables =
    minor >= 28 ? HEAD : minor >= 22 ? V2_27 : minor >= 21 ? V2_21 : minor >= 18 ? V2_18 : tunerBefore218(minor, V2_18);
  return { ...tables, version: m[0], pat: minor >= 23, hostWorkFifo: minor <= 12 };
}

export const PROTOCOL_INDEX: Readonly<Record<Protocol, number>> = { LL: 0, LL128: 1, Simple: 2 };

/** NCCL's per-step latency for an algorithm on a link class, µs, as its cost model ranks with it. */
export function hwLatencyUs(
  tuner: NcclTuner,
  cls: LatencyClass,
  algorithm: keyof AlgorithmRows,
  protocol: Protocol,
): number {
  return tuner.hwLatencyUs[cls][algorithm][PROTOCOL_INDEX[protocol]];
}

/** What the simulator charges for one step of the release's kernels, µs. */
export function stepLatencyUs(
  tuner: NcclTuner,
  cls: LatencyClass,
  algorithm: keyof AlgorithmRows,
  protocol: Protocol,
): number {
  return tuner.stepLatencyUs[cls][algorithm][PROTOCOL_INDEX[protocol]];
}

export function baseLatencyUs(tuner: NcclTuner, algorithm: keyof AlgorithmRows, protocol: Protocol): number {
  return tuner.baseLatencyUs[algorithm][PROTOCOL_INDEX[protocol]];
}

// The shape of an NCCL release's tuner: the tables and rules nccl-versions.ts (2.18 and later) and
// nccl-versions-pre218.ts (2.10–2.17) fill in, kept apart so that neither imports the other's types.
import type { NcclSearchRelease } from './nccl-search-releases';

export type ProtocolRow = readonly [ll: number, ll128: number, simple: number];
/** The algorithms NCCL's tables have rows for. */
export type TunedAlgorithm = 'ring' | 'tree' | 'collnetdirect' | 'collnetchain' | 'nvls' | 'nvlstree' | 'pat';
export type AlgorithmRows = Readonly<Record<TunedAlgorithm, ProtocolRow>>;
export type LatencyClass = 'nvlink' | 'pcie' | 'net';

export interface NcclTuner {
  /**
   * The reference release whose tables these are: 2.18.3, 2.21.5, 2.27.7 or 2.30.7, or the tables of 2.10–2.17
   * read at their tags (nccl-versions-pre218.ts).
   */
  readonly tables: '2.10-2.17' | '2.18' | '2.21' | '2.27' | '2.30';
  /** The version the user gave, or the tables' own when none was given. */
  readonly version: string;
  /** Per-step latency by link class and algorithm, µs [LL, LL128, Simple] (hwLat), as the cost model ranks with it. */
  readonly hwLatencyUs: Readonly<Record<LatencyClass, AlgorithmRows>>;
  /**
   * What one step of the release's kernels costs, which the simulator charges: hwLat, except where a release put a
   * figure in it to steer the choice rather than to describe a step (2.21's 28 µs for tree/Simple).
   */
  readonly stepLatencyUs: Readonly<Record<LatencyClass, AlgorithmRows>>;
  /** Fixed latency per collective, µs [LL, LL128, Simple] (baseLat). */
  readonly baseLatencyUs: AlgorithmRows;
  /**
   * 2.30 gives NVLS the multimem efficiency, counts two pipelined operations per AllReduce and converts bus to
   * algorithm bandwidth by n / 2(n−1); before, NVLS bandwidth was min(bwIntra, bwInter) (NVLSTree over more than two
   * nodes: bwInter / 2) and the conversion a fixed 5/6.
   */
  readonly nvlsPipelined: boolean;
  /** Up to 2.18, Hopper's LL ceiling was Ampere's (87.7 / 22.5 / 19 GB/s). */
  readonly hopperLlAsAmpere: boolean;
  /** PAT (reduce-scatter and all-gather with one GPU per node) exists from 2.23 on. */
  readonly pat: boolean;
  /**
   * Up to 2.12 the host writes the work of every channel but the first (channel 0's rides in the kernel's
   * arguments) into a per-channel FIFO in host memory, which each CTA reads over PCIe and then clears
   * (enqueue.cc getNextOp: wait for the slot's flag, memset and fill the 512-byte slot; device common.h: `active = 0`
   * written back to the host slot). 2.13 replaced it with kernel plans whose done counters live apart from the work.
   */
  readonly hostWorkFifo: boolean;
  /** The release's topology search: speed lists, NVLink figure, duplication (nccl-search-releases.ts). */
  readonly search: NcclSearchRelease;
  /** Before 2.18, the cost model's other form (caps, per-channel ceilings, LL across nodes); undefined after. */
  readonly legacy?: LegacyCostModel;
  /** NVLS arrived in 2.17 (v2.17.1-1 tuning.cc's NVLS row), NVLSTree in 2.18 (v2.18.1-1). */
  readonly nvls: boolean;
  readonly nvlsTree: boolean;
}

/** What 2.10–2.17's tuning.cc does differently from 2.18's, beyond its latency tables. */
export interface LegacyCostModel {
  /**
   * The row of the per-architecture tables an SM takes (compCapIndex): up to 2.14 only an all-SM80 system is Ampere
   * and everything else Volta; 2.15–2.16 add an exact SM90 Hopper row; 2.17 ranks ≥ 90 Hopper and ≥ 80 Ampere.
   */
  readonly tableArch: (sm: number) => 0 | 1 | 2;
  /** Bus bandwidth cap per row before the protocols' factors: 235 GB/s on Ampere; 370 on Hopper in 2.17. */
  readonly busBwCapGBps: readonly [number, number, number];
  /** LL128's per-channel ceiling per row (ll128MaxBwPerCh), for rings and trees alike. */
  readonly ll128PerChannelGBps: readonly [number, number, number];
  /** The tree's per-channel ceiling per row and node column [1, 2, ≥ 3 nodes] (perChMaxTreeBws). */
  readonly treePerChannelGBps: readonly [volta: ProtocolRow, ampere: ProtocolRow, hopper: ProtocolRow];
  /** Across nodes an LL step's intra-node latency is multiplied by this (`intraLat *= 1.8`). */
  readonly llMultiNodeIntraFactor: number;
}

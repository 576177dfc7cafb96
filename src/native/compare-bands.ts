// The model's uncertainty per message size, which decides how far below the model a measured size may fall before
// compare.ts flags it. Kept apart from the comparison because the bands are data with their provenance, and a test
// re-derives them from the calibration runs.
import type { IntraNodeFabric } from '../engine/index';

/** The flat ratio the README and the editor quoted before the uncertainty bands; `--threshold` still sets one. */
export const DEFAULT_FLAG_RATIO = 0.7;

const MiB = 1 << 20;

/** Which links a single node's prediction rests on: NVLink (SXM boards, NVSwitch, meshes) or PCIe (incl. bridges). */
export type FabricClass = 'nvlink' | 'pcie';

export function fabricClassOf(intraNode: IntraNodeFabric): FabricClass {
  return intraNode === 'pcie' || intraNode === 'nvlink-bridge' ? 'pcie' : 'nvlink';
}

/** One size band of the model's uncertainty: how far below the model a healthy unseen run may fall. */
export interface UncertaintyBand {
  readonly multiNode: boolean;
  /** Single-node bands only: the node's fabric class (multi-node bands hold for any). */
  readonly fabric?: FabricClass;
  /** The band holds sizes from minBytes (inclusive) to maxBytes (exclusive). */
  readonly minBytes: number;
  readonly maxBytes: number;
  /** 1 − (1 − worst leave-one-out shortfall) × (1 − LOO_MARGIN), rounded up to 1 %. */
  readonly bound: number;
}

/**
 * The margin beyond the worst leave-one-out shortfall: a size is flagged only when it is a further 5 % below the
 * worst that a healthy run reached against a model that had not seen it. The worst of n runs is exceeded by a
 * further unseen run about once in n + 1 (8 judged runs here), so the margin keeps such a run's tail unflagged.
 */
export const LOO_MARGIN = 0.05;

/**
 * The model's uncertainty per size band, derived from `validate --leave-one-out --json` over the healthy runs in
 * ../shared/calibration: per band, the worst shortfall 1 − measured/modelled busbw of any row judged with the
 * constants refit without that row's run (docs/calibration.md, "Uncertainty bands", has each band's worst row). The
 * project cannot read ../shared at run time, so the figures are kept here (a test re-derives them when it can).
 * Single nodes split by fabric: PCIe and bridged systems rest on constants that one run each supports (host-memory
 * staging, the NVLink-bridge share), so unseen ones of their kind are the least certain.
 */
export const MODEL_UNCERTAINTY_BANDS: readonly UncertaintyBand[] = [
  // A100 ×8 (SuperBench, -g 8) at 512 KiB (31.0 %: ring/LL mid sizes are where A100 runs differ most; 28.6 % before
  // NCCL ≤ 2.17's own tables gave that run lower base and step latencies, 23.6 % before the launch and overlap refits
  // heard the Azure run's LL rows charged in whole trips).
  { multiNode: false, fabric: 'nvlink', minBytes: 0, maxBytes: MiB, bound: 0.35 },
  // The same run at 2 MiB (35.5 %; 31.0 % before NCCL ≤ 2.17's tables, 34.1 % at 1 MiB before LL steps were charged
  // in whole trips).
  { multiNode: false, fabric: 'nvlink', minBytes: MiB, maxBytes: 64 * MiB, bound: 0.39 },
  // A100 ×8 (Azure) at 128 MiB (20.4 % since its refit hears the SuperBench run under NCCL ≤ 2.17's tables; 19.8 %
  // with the Ampere step scale refit on the SuperBench run, 1.09; 16.8 % and 1.92 before NCCL ≤ 2.12's per-channel
  // host work explained that run's ring/LL rows, whose errors had set the refit's median); the 2-GPU A100 NCCL_DEBUG log in ../shared/fixtures-real reaches 17 % at 128 MiB, inside it.
  { multiNode: false, fabric: 'nvlink', minBytes: 64 * MiB, maxBytes: Infinity, bound: 0.25 },
  // RTX 4090 ×8 without P2P at 512 KiB (39.2 %; 45.4 % at 256 KiB before LL steps were charged in whole trips).
  { multiNode: false, fabric: 'pcie', minBytes: 0, maxBytes: MiB, bound: 0.43 },
  // RTX 4090 ×8 without P2P at 32 MiB (28.4 %, host memory at its DRAM peak).
  { multiNode: false, fabric: 'pcie', minBytes: MiB, maxBytes: 64 * MiB, bound: 0.32 },
  // H100 PCIe bridged pair at 1 GiB (51.0 %, the bridge at NCCL's per-link figure).
  { multiNode: false, fabric: 'pcie', minBytes: 64 * MiB, maxBytes: Infinity, bound: 0.54 },
  // No constant is refit on the multi-node runs but the sm >= 89 step scale (forced ring), so these are their
  // in-sample worst rows with the network channel search, NCCL's NVLSTree chunking and the tree's whole-chunk
  // network forwarding: H100 2 nodes at 512 KiB (13.8 %), the forced 2-node ring at 8 MiB (17.0 %; 27.5 % at 1 MiB
  // while its LL128 steps carried the Simple step scale), the 4-node VM at 128 MiB (10.4 %).
  { multiNode: true, minBytes: 0, maxBytes: MiB, bound: 0.19 },
  { multiNode: true, minBytes: MiB, maxBytes: 64 * MiB, bound: 0.22 },
  { multiNode: true, minBytes: 64 * MiB, maxBytes: Infinity, bound: 0.15 },
];

/**
 * How many bounds below the model a size must fall to be flagged: measured < model × (1 − k × bound). The bounds
 * already hold the worst unseen healthy shortfall and its margin, so k = 1.
 */
export const UNCERTAINTY_K = 1;

/** The band a size falls in, for a system of `nodes` nodes whose GPUs are joined by `intraNode`. */
export function uncertaintyBand(
  bytes: number,
  nodes: number,
  intraNode: IntraNodeFabric = 'nvswitch',
): UncertaintyBand {
  const multiNode = nodes > 1;
  const fabric = fabricClassOf(intraNode);
  return MODEL_UNCERTAINTY_BANDS.find(
    (b) =>
      b.multiNode === multiNode &&
      (b.fabric === undefined || b.fabric === fabric) &&
      bytes >= b.minBytes &&
      bytes < b.maxBytes,
  )!;
}

/** The ratio measured/modelled busbw below which a size is flagged when no flat `--threshold` is given. */
export function flagRatioFor(bytes: number, nodes: number, intraNode: IntraNodeFabric = 'nvswitch'): number {
  return 1 - UNCERTAINTY_K * uncertaintyBand(bytes, nodes, intraNode).bound;
}

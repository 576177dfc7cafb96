// "Is my bandwidth normal?": lines a measured sweep up with the simulator's prediction for the same system and
// flags the sizes where the measured bus bandwidth falls further below what the model expects than the model's own
// uncertainty at that size allows (MODEL_UNCERTAINTY_BANDS), for every algorithm NCCL may have run there: its cost
// model's choice, and the pairs it rates within 10 % of that.
import {
  EngineError,
  nearTiedChoices,
  NCCL_ALGORITHM_NAMES,
  resolveSystem,
  withNcclVersion,
  simulateCollective,
  type Algorithm,
  type CollectiveKind,
  type Dtype,
  type Protocol,
  type System,
  type SystemSpec,
  type IntraNodeFabric,
  asBytes,
} from '../engine/index';
import type { Measurement, MeasurementRow } from './import/model';

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

/**
 * NCCL's choice rests on its topology search (channels, per-channel bandwidth), which a system description gives
 * only roughly: pairs its cost model rates within this factor of its choice may be what a real run took. The 4-node
 * H100 VM run (NCCL 2.26.2, its own NCCL_TOPO_FILE) took NVLSTree at 8 MiB, which the 2.27 tables rate 4.6 %
 * slower than tree/LL128.
 */
export const NEAR_TIE_FACTOR = 1.1;

export class CompareError extends Error {}

export interface CompareRow {
  readonly bytes: number;
  readonly measuredTimeUs: number;
  readonly expectedTimeUs: number;
  readonly measuredBusbwGBps: number;
  readonly expectedBusbwGBps: number;
  /** measured / expected bus bandwidth (equivalently expected / measured time). */
  readonly ratio: number;
  readonly flagged: boolean;
  /** The ratio below which this size is flagged: 1 − k × the model's uncertainty at this size, or the flat --threshold. */
  readonly threshold: number;
  readonly algorithm: Algorithm;
  readonly protocol: string;
  /** Who picked the pair the row is judged against: NCCL's own log, NCCL_ALGO, or NCCL's cost model. */
  readonly chosenBy: 'nccl-log' | 'NCCL_ALGO' | 'model';
  /**
   * Where the measurement is below the threshold of NCCL's modelled choice but normal for another pair NCCL rates
   * near it: that pair, and the measurement's ratio to it. The row is then not flagged; NCCL took the other pair.
   */
  readonly explainedBy?: { readonly algorithm: Algorithm; readonly protocol: Protocol; readonly ratio: number };
}

export interface CompareResult {
  readonly system: string;
  readonly collective: CollectiveKind;
  readonly ranks: number;
  /** The flat ratio when one was given; undefined when each size is judged by its uncertainty band. */
  readonly threshold?: number;
  /** The NCCL release whose cost model ranked the algorithms (the measurement's own when it names one). */
  readonly ncclVersion: string;
  readonly rows: readonly CompareRow[];
  readonly flagged: number;
}

const KINDS: Partial<Record<Measurement['collective'], CollectiveKind>> = {
  allreduce: 'allreduce',
  allgather: 'allgather',
  reducescatter: 'reducescatter',
};
const DTYPES: Record<string, Dtype> = {
  float: 'fp32',
  float32: 'fp32',
  fp32: 'fp32',
  half: 'fp16',
  float16: 'fp16',
  fp16: 'fp16',
  bfloat16: 'bf16',
  bf16: 'bf16',
};

/** The collective the model simulates for a measurement, or undefined for one it does not cover (a broadcast). */
export function modelledKind(measurement: Measurement): CollectiveKind | undefined {
  return KINDS[measurement.collective];
}

/** The collective the model simulates for a measurement; a clear error for one it does not cover. */
export function collectiveKindOf(measurement: Measurement): CollectiveKind {
  const kind = modelledKind(measurement);
  if (!kind)
    throw new CompareError(
      `the model covers all-reduce, all-gather and reduce-scatter; this measurement is ${measurement.collective}`,
    );
  return kind;
}

/** The algorithm a measurement forced (NCCL_ALGO in calibration JSON), so the model runs the same one. */
export function forcedAlgorithm(measurement: Measurement): Algorithm | undefined {
  const algo = String(measurement.meta.ncclAlgo ?? '').toLowerCase();
  return NCCL_ALGORITHM_NAMES[algo];
}

export function usableRows(measurement: Measurement): MeasurementRow[] {
  return measurement.rows.filter((r) => r.bytes > 0 && r.timeUs > 0);
}

/**
 * nccl-tests times each size out of place and in place; the faster one is what the hardware reached. "Is my
 * bandwidth normal?" asks about the hardware, so compare and calibrate both measure against it.
 */
export function achieved(row: MeasurementRow): { readonly timeUs: number; readonly busbwGBps: number } {
  return row.inPlace && row.inPlace.timeUs > 0 && row.inPlace.timeUs < row.timeUs ? row.inPlace : row;
}

export function dtypeOf(row: MeasurementRow): Dtype {
  return DTYPES[(row.dtype ?? 'float').toLowerCase()] ?? 'fp32';
}

export function asResolved(system: SystemSpec | System): System {
  return 'topology' in system ? system : resolveSystem(system);
}

/**
 * The system as the measured run saw it: NCCL's choices follow its release, so a measurement that names its NCCL
 * version (nccl-tests' banner, NCCL_DEBUG's first line, calibration JSON) is judged with that release's cost model
 * unless the system file names one. Likewise the launch cost follows the run's process layout (nccl-tests' nGpus,
 * a calibration JSON's `-g`) unless the system file names one: a preset's one process per GPU would misjudge a
 * `-g 8` run's small sizes.
 */
export function withMeasuredNccl(system: System, measurement: Measurement): System {
  let spec = withNcclVersion(system.spec, measurement.meta.ncclVersion);
  const measured = measurement.meta.gpusPerProcess ?? measurement.meta.nGpus;
  if (
    spec.gpusPerProcess === undefined &&
    typeof measured === 'number' &&
    Number.isInteger(measured) &&
    measured >= 1 &&
    measured <= spec.gpusPerNode
  ) {
    spec = { ...spec, gpusPerProcess: measured };
  }
  return spec === system.spec ? system : resolveSystem(spec);
}

export function compareMeasurement(
  measurement: Measurement,
  spec: SystemSpec | System,
  options: { threshold?: number } = {},
): CompareResult {
  const system = withMeasuredNccl(asResolved(spec), measurement);
  const kind = collectiveKindOf(measurement);
  if (measurement.ranks !== system.ranks) {
    throw new CompareError(
      `the measurement has ${measurement.ranks} ranks but the system ${system.label} has ${system.ranks}; adjust --nodes/--gpus-per-node or the system file`,
    );
  }
  const algorithm = forcedAlgorithm(measurement);
  const logged = loggedChoices(measurement, kind);
  const rows = usableRows(measurement).map((row): CompareRow => {
    const dtype = dtypeOf(row);
    const ran = algorithm ? undefined : logged.get(row.bytes);
    const predicted =
      (ran && simulateIfRunnable(system, { kind, bytes: asBytes(row.bytes), dtype, ...ran })) ||
      simulateCollective(system, { kind, bytes: asBytes(row.bytes), dtype, ...(algorithm ? { algorithm } : {}) });
    const chosenBy = algorithm
      ? 'NCCL_ALGO'
      : ran && predicted.algorithm === ran.algorithm && predicted.protocol === ran.protocol
        ? 'nccl-log'
        : 'model';
    const best = achieved(row);
    const threshold = options.threshold ?? flagRatioFor(row.bytes, system.nodes, system.spec.intraNode);
    // Times carry more digits than nccl-tests' two-decimal busbw, so the ratio comes from them.
    const ratio = predicted.timeUs / best.timeUs;
    const measuredBusbw = best.busbwGBps > 0 ? best.busbwGBps : predicted.busbwGBps * ratio;
    const explainedBy =
      ratio < threshold && chosenBy === 'model'
        ? nearChoiceExplaining(system, kind, row.bytes, dtype, best.timeUs, threshold, predicted)
        : undefined;
    return {
      bytes: row.bytes,
      measuredTimeUs: best.timeUs,
      expectedTimeUs: predicted.timeUs,
      measuredBusbwGBps: measuredBusbw,
      expectedBusbwGBps: predicted.busbwGBps,
      ratio,
      flagged: ratio < threshold && !explainedBy,
      threshold,
      algorithm: predicted.algorithm,
      protocol: predicted.protocol,
      chosenBy,
      ...(explainedBy ? { explainedBy } : {}),
    };
  });
  return {
    system: system.label,
    collective: kind,
    ranks: system.ranks,
    ...(options.threshold !== undefined ? { threshold: options.threshold } : {}),
    ncclVersion: system.tuner.version,
    rows,
    flagged: rows.filter((r) => r.flagged).length,
  };
}

const LOGGED_ALGORITHMS: Readonly<Record<string, Algorithm>> = {
  RING: 'ring',
  TREE: 'tree',
  COLLNET_DIRECT: 'collnetdirect',
  COLLNETDIRECT: 'collnetdirect',
  COLLNET_CHAIN: 'collnetchain',
  COLLNETCHAIN: 'collnetchain',
  NVLS: 'nvls',
  NVLS_TREE: 'nvlstree',
  NVLSTREE: 'nvlstree',
  PAT: 'pat',
};
const LOGGED_PROTOCOLS: Readonly<Record<string, Protocol>> = { LL: 'LL', LL128: 'LL128', SIMPLE: 'Simple' };

/**
 * The pair NCCL logged for each size of this collective (NCCL_DEBUG_SUBSYS=TUNING: "AllReduce: 8388608 Bytes -> Algo
 * RING proto SIMPLE"), first call first. Pairs the model does not have are left out.
 */
export function loggedChoices(
  measurement: Measurement,
  kind: CollectiveKind,
): Map<number, { algorithm: Algorithm; protocol: Protocol }> {
  const out = new Map<number, { algorithm: Algorithm; protocol: Protocol }>();
  const lines = measurement.meta.tuningChoices;
  if (!Array.isArray(lines)) return out;
  for (const line of lines) {
    const m = /^(\w+) (\d+) B: (\w+)\/(\w+)$/.exec(String(line));
    if (!m || m[1].toLowerCase() !== kind) continue;
    const algorithm = LOGGED_ALGORITHMS[m[3].toUpperCase()];
    const protocol = LOGGED_PROTOCOLS[m[4].toUpperCase()];
    const bytes = Number(m[2]);
    if (algorithm && protocol && !out.has(bytes)) out.set(bytes, { algorithm, protocol });
  }
  return out;
}

/** The simulation of a pair NCCL ran, or undefined when the model cannot run that pair on this system. */
export function simulateIfRunnable(
  system: System,
  request: Parameters<typeof simulateCollective>[1],
): ReturnType<typeof simulateCollective> | undefined {
  try {
    return simulateCollective(system, request);
  } catch (error) {
    if (error instanceof EngineError) return undefined;
    throw error;
  }
}

/** The near-tied pair (other than the model's choice) for which the measured time is normal, with the best ratio. */
function nearChoiceExplaining(
  system: System,
  kind: CollectiveKind,
  bytes: number,
  dtype: Dtype,
  measuredUs: number,
  threshold: number,
  chosen: { algorithm: Algorithm; protocol: string },
): CompareRow['explainedBy'] {
  if (system.fabric.idealised) return undefined;
  let found: CompareRow['explainedBy'];
  for (const near of nearTiedChoices(system, kind, asBytes(bytes), dtype, NEAR_TIE_FACTOR)) {
    if (near.algorithm === chosen.algorithm && near.protocol === chosen.protocol) continue;
    const ratio =
      simulateCollective(system, {
        kind,
        bytes: asBytes(bytes),
        dtype,
        algorithm: near.algorithm,
        protocol: near.protocol,
      }).timeUs / measuredUs;
    if (ratio >= threshold && (!found || ratio > found.ratio))
      found = { algorithm: near.algorithm, protocol: near.protocol, ratio };
  }
  return found;
}

/** Median of |predicted − measured| / measured over the rows: the calibration's figure of merit. */
export function medianRelativeError(rows: readonly { measuredTimeUs: number; expectedTimeUs: number }[]): number {
  const errors = rows
    .map((r) => Math.abs(r.expectedTimeUs - r.measuredTimeUs) / r.measuredTimeUs)
    .sort((a, b) => a - b);
  if (errors.length === 0) return 0;
  const mid = Math.floor(errors.length / 2);
  return errors.length % 2 ? errors[mid] : (errors[mid - 1] + errors[mid]) / 2;
}

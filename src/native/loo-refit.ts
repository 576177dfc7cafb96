// Leave-one-out refits of the engine's fitted constants (`validate --leave-one-out`). Several constants were fitted
// on the calibration runs that `validate` then judges, so the in-sample error overstates the accuracy on a machine
// the engine has not seen. For each dataset, every constant fitted on it is refit here on the other datasets that
// support it (a deterministic one-dimensional search), or, where no other dataset supports it, set to what the
// hardware facts alone give; the dataset is then judged with those values.
//
// The engine's constants are read at module level, so a refit value reaches the simulator through the data it
// already takes: the system spec's overrides, the resolved System (launch time, link capacities, the NCCL tuner's
// per-step latencies that only the simulator charges) and compareDataset's time hook (the host/device overlap).
import {
  compareDataset,
  hostUs,
  hostWorkSlotUs,
  launchPerProcessUs,
  resolveSystem,
  type DatasetComparison,
  type System,
  type SystemSpec,
  type Bytes,
  type Micros,
  asGBps,
  asMicros,
} from '../engine/index';

export type ConstantName =
  | 'LAUNCH_PER_GPU_US'
  | 'OVERLAP_SHARPNESS'
  | 'intraStepLatencyScale(sm>=89)'
  | 'intraStepLatencyScale(sm<89)'
  | 'nvlinkBridgeEfficiency(NVLink4)'
  | 'HOST_MEMORY_GBPS'
  | 'HOST_WORK_SLOT_US';

export type ConstantValues = Readonly<Record<ConstantName, number>>;

/**
 * The values the engine uses (src/engine/constants.ts). They are repeated here because the engine does not export
 * its constants; a test checks that the two agree.
 */
export const ENGINE_VALUES: ConstantValues = {
  LAUNCH_PER_GPU_US: 4.8,
  OVERLAP_SHARPNESS: 4,
  'intraStepLatencyScale(sm>=89)': 2,
  'intraStepLatencyScale(sm<89)': 3.8,
  'nvlinkBridgeEfficiency(NVLink4)': 0.5,
  HOST_MEMORY_GBPS: 120,
  HOST_WORK_SLOT_US: 0.2,
};

export interface FittedConstant {
  readonly name: ConstantName;
  readonly unit: string;
  readonly meaning: string;
  /**
   * Datasets (by file name) that support the constant: those the engine's value was fitted on, as its comment in
   * constants.ts says, and runs of the same kind added later (the SuperBench A100 run, a fixture dataset named in
   * calibration/fixture-datasets.json, matches the A100 prefix: a single-process -g 8 A100 ring like the Azure one).
   */
  readonly fittedOn: RegExp;
  /** The sizes of a supporting dataset that depend on the constant and that the refit judges. */
  readonly fitBytes: (bytes: number) => boolean;
  /** Search interval of the refit. */
  readonly range: readonly [number, number];
  /** What the hardware facts alone give, used when no other dataset supports the constant. */
  readonly fallback: { readonly value: number; readonly source: string };
}

const KiB = 1024;
const MiB = 1024 * KiB;

export const FITTED_CONSTANTS: readonly FittedConstant[] = [
  {
    name: 'LAUNCH_PER_GPU_US',
    unit: 'µs',
    meaning: 'host cost to launch one collective per GPU (a process pays it for each GPU it drives)',
    fittedOn: /^(a100-8gpu|gb200-4gpu|rtx4090-8gpu)/,
    fitBytes: (b) => b <= 64 * KiB,
    range: [0.5, 20],
    fallback: { value: 3.5, source: 'a CUDA kernel launch, 2–5 µs' },
  },
  {
    name: 'OVERLAP_SHARPNESS',
    unit: '',
    meaning: 'p of the p-norm that combines host and device time (∞: a plain maximum)',
    fittedOn: /^(a100-8gpu|gb200-4gpu)/,
    fitBytes: (b) => b >= 128 * KiB && b <= 8 * MiB,
    range: [1.5, 64],
    fallback: { value: Infinity, source: 'the host overlaps the device: time = max(host, device)' },
  },
  {
    name: 'intraStepLatencyScale(sm>=89)',
    unit: '×',
    meaning: "intra-node ring Simple step cost over NCCL's per-step figure, Ada and newer",
    fittedOn: /^(gb200-4gpu|rtx4090-8gpu|h100-16gpu-.*-ring)/,
    fitBytes: (b) => b >= 256 * KiB && b <= 64 * MiB,
    range: [0.5, 8],
    fallback: { value: 1, source: "NCCL's own per-step latency (tuning.cc hwLat)" },
  },
  {
    name: 'intraStepLatencyScale(sm<89)',
    unit: '×',
    meaning: "intra-node ring Simple step cost over NCCL's per-step figure, before Ada",
    fittedOn: /^a100-8gpu/,
    fitBytes: (b) => b >= 256 * KiB && b <= 64 * MiB,
    range: [0.5, 8],
    fallback: { value: 1, source: "NCCL's own per-step latency (tuning.cc hwLat)" },
  },
  {
    name: 'nvlinkBridgeEfficiency(NVLink4)',
    unit: '×',
    meaning: "share of NCCL's per-link NVLink figure an NVLink 4 bridge between PCIe cards delivers",
    fittedOn: /^h100pcie-2gpu/,
    fitBytes: () => true,
    range: [0.2, 1.25],
    fallback: { value: 1, source: "NCCL's per-link figure (topo.h, 20.6 GB/s on SM90)" },
  },
  {
    name: 'HOST_MEMORY_GBPS',
    unit: 'GB/s',
    meaning: 'host DRAM bandwidth per socket for traffic staged without P2P',
    fittedOn: /^rtx4090-8gpu.*nop2p/,
    fitBytes: (b) => b >= 16 * MiB,
    range: [30, 400],
    fallback: { value: 204.8, source: 'peak of 8 DDR4-3200 channels (EPYC 7542)' },
  },
  {
    name: 'HOST_WORK_SLOT_US',
    unit: 'µs',
    meaning: 'host cost per GPU of each channel beyond the first on NCCL ≤ 2.12 (a work slot in host memory)',
    fittedOn: /^a100-8gpu-nvswitch-1node-superbench/,
    fitBytes: (b) => b >= 32 * KiB && b <= 2 * MiB,
    range: [0.02, 1],
    fallback: { value: 0, source: 'no per-slot host figure in ../shared: the launch constant alone' },
  },
];

export interface CalibrationDataset {
  readonly name: string;
  readonly dataset: Record<string, unknown>;
  /** The system spec the dataset is judged on, with its NCCL release applied. */
  readonly spec: SystemSpec;
}

const suspect = (d: CalibrationDataset): boolean => d.dataset.suspect === true;

/** Whether the engine's value of `constant` was fitted on `dataset` (suspect runs never count). */
export function supports(constant: FittedConstant, dataset: CalibrationDataset): boolean {
  return !suspect(dataset) && constant.fittedOn.test(dataset.name);
}

/** The engine's own p in the host/device p-norm, which a simulated time already carries. */
const ENGINE_P = ENGINE_VALUES.OVERLAP_SHARPNESS;

function pNorm(a: number, b: number, p: number): number {
  const top = Math.max(a, b);
  if (top <= 0) return 0;
  if (!Number.isFinite(p)) return top;
  return top * ((a / top) ** p + (b / top) ** p) ** (1 / p);
}

/** The system as the engine would resolve it had its constants had `values`. */
export function variantSystem(spec: SystemSpec, values: ConstantValues): System {
  let system = resolveSystem(spec);
  const bridge = values['nvlinkBridgeEfficiency(NVLink4)'] / ENGINE_VALUES['nvlinkBridgeEfficiency(NVLink4)'];
  if (spec.intraNode === 'nvlink-bridge' && system.gpu.nvlinkGen >= 4 && bridge !== 1) {
    // The bridge factor multiplies NCCL's per-link figure wherever a bridge is built, so the per-link override
    // scaled by the same ratio gives the bridge the refit rate.
    const perLink = spec.overrides?.nvlinkGBpsPerLink ?? system.gpu.nvlinkGBpsPerLink;
    system = resolveSystem({ ...spec, overrides: { ...spec.overrides, nvlinkGBpsPerLink: asGBps(perLink * bridge) } });
  }
  const launchUs =
    spec.overrides?.launchUs !== undefined || spec.intraNode === 'uniform-ring'
      ? system.launchUs
      : launchPerProcessUs(spec.gpusPerProcess ?? 1, asMicros(values.LAUNCH_PER_GPU_US));
  const slotUs = hostWorkSlotUs(spec, values.HOST_WORK_SLOT_US);
  const host = values.HOST_MEMORY_GBPS / ENGINE_VALUES.HOST_MEMORY_GBPS;
  const links =
    host === 1
      ? system.topology.links
      : system.topology.links.map((l) => (l.kind === 'host' ? { ...l, GBps: asGBps(l.GBps * host) } : l));
  const key: ConstantName =
    system.gpu.smVersion >= 89 ? 'intraStepLatencyScale(sm>=89)' : 'intraStepLatencyScale(sm<89)';
  const step = values[key] / ENGINE_VALUES[key];
  let tuner = system.tuner;
  if (step !== 1) {
    // The simulator charges the tuner's step latencies (NCCL's selection ranks with hwLatencyUs, untouched), scaled
    // for intra-node Simple ring steps; scaling those entries scales that charge. Before Ada the scale is
    // NVLink's only (PCIe steps keep NCCL's figure), so its refit moves NVLink steps only.
    const scaled = { ...tuner.stepLatencyUs };
    const classes = system.gpu.smVersion >= 89 ? (['nvlink', 'pcie'] as const) : (['nvlink'] as const);
    for (const cls of classes) {
      const ring = tuner.stepLatencyUs[cls].ring;
      scaled[cls] = { ...tuner.stepLatencyUs[cls], ring: [ring[0], ring[1], ring[2] * step] };
    }
    tuner = { ...tuner, stepLatencyUs: scaled };
  }
  return {
    ...system,
    launchUs,
    hostWorkSlotUs: slotUs,
    tuner,
    topology: links === system.topology.links ? system.topology : { ...system.topology, links },
  };
}

/** Judges a dataset with the constants at `values`, on the sizes `includeBytes` admits. */
export function compareWith(
  d: CalibrationDataset,
  values: ConstantValues,
  includeBytes?: (bytes: Bytes) => boolean,
): DatasetComparison {
  const p = values.OVERLAP_SHARPNESS;
  // A simulated time is pNorm(launch, device, engine p); recover the device time and recombine with the refit p.
  const adjustTimeUs =
    p === ENGINE_P
      ? undefined
      : (timeUs: Micros, system: System, channels: number): Micros => {
          const host = hostUs(system, channels);
          const deviceUs = Math.max(0, timeUs ** ENGINE_P - host ** ENGINE_P) ** (1 / ENGINE_P);
          return asMicros(pNorm(host, deviceUs, p));
        };
  return compareDataset(variantSystem(d.spec, values), d.dataset, { includeBytes, adjustTimeUs });
}

function medianOf(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Sum over datasets of the median |log(simulated / measured busbw)| on the sizes the constant governs. */
function objective(constant: FittedConstant, datasets: readonly CalibrationDataset[], values: ConstantValues): number {
  let total = 0;
  for (const d of datasets) {
    const rows = compareWith(d, values, constant.fitBytes).rows;
    if (rows.length > 0) total += medianOf(rows.map((r) => Math.abs(Math.log(r.simulatedBusbwGBps / r.busbwGBps))));
  }
  return total;
}

function logSpace(lo: number, hi: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => lo * (hi / lo) ** (i / (count - 1)));
}

/** Three significant digits: the data do not pin a constant closer, and it keeps the search's grid out of reports. */
const round3 = (value: number): number => Number(value.toPrecision(3));

/**
 * The value of `constant` that best fits `datasets`, the other constants held at `values`: a log-spaced grid over
 * the constant's range, then a finer grid between the best point's neighbours. Deterministic; ties keep the
 * smaller value.
 */
export function refitConstant(
  constant: FittedConstant,
  datasets: readonly CalibrationDataset[],
  values: ConstantValues,
): number {
  const score = (v: number): number => objective(constant, datasets, { ...values, [constant.name]: v });
  const coarse = logSpace(constant.range[0], constant.range[1], 17);
  const coarseScores = coarse.map(score);
  const best = coarseScores.indexOf(Math.min(...coarseScores));
  const lo = coarse[Math.max(0, best - 1)];
  const hi = coarse[Math.min(coarse.length - 1, best + 1)];
  const fine = logSpace(lo, hi, 9);
  const fineScores = fine.map(score);
  return round3(fine[fineScores.indexOf(Math.min(...fineScores))]);
}

export interface RefitValue {
  readonly constant: ConstantName;
  readonly value: number;
  /** The datasets the value was refit on; empty when it fell back to the hardware facts. */
  readonly refitOn: readonly string[];
  /** Set when no other dataset supports the constant: what the fallback value rests on. */
  readonly fallback?: string;
}

export interface LeaveOneOutRow {
  readonly dataset: string;
  readonly inSample: DatasetComparison;
  readonly leaveOneOut: DatasetComparison;
  /** Constants fitted on this dataset and refit without it; empty when none was, so both columns agree. */
  readonly refits: readonly RefitValue[];
}

/**
 * Refits, without `heldOut`, every constant fitted on it: two coordinate rounds, so constants refit together see
 * each other's refit values. Only the other datasets' rows are read.
 */
export function refitWithout(
  heldOut: string,
  datasets: readonly CalibrationDataset[],
): { values: ConstantValues; refits: RefitValue[] } {
  const values: Record<ConstantName, number> = { ...ENGINE_VALUES };
  const held = datasets.find((d) => d.name === heldOut);
  const targets = held ? FITTED_CONSTANTS.filter((c) => supports(c, held)) : [];
  const refits = new Map<ConstantName, RefitValue>();
  const rounds = targets.length > 1 ? 2 : 1;
  for (let round = 0; round < rounds; round++) {
    for (const constant of targets) {
      const others = datasets.filter((d) => d.name !== heldOut && supports(constant, d));
      if (others.length === 0) {
        values[constant.name] = constant.fallback.value;
        refits.set(constant.name, {
          constant: constant.name,
          value: constant.fallback.value,
          refitOn: [],
          fallback: constant.fallback.source,
        });
      } else {
        values[constant.name] = refitConstant(constant, others, values);
        refits.set(constant.name, {
          constant: constant.name,
          value: values[constant.name],
          refitOn: others.map((d) => d.name),
        });
      }
    }
  }
  return { values, refits: targets.map((c) => refits.get(c.name)!) };
}

export function leaveOneOut(datasets: readonly CalibrationDataset[]): LeaveOneOutRow[] {
  return datasets.map((d) => {
    const inSample = compareWith(d, ENGINE_VALUES);
    const { values, refits } = refitWithout(d.name, datasets);
    return { dataset: d.name, inSample, leaveOneOut: refits.length > 0 ? compareWith(d, values) : inSample, refits };
  });
}

/** Each constant refit on every dataset that supports it: checks that the search reproduces the engine's value. */
export function refitAll(datasets: readonly CalibrationDataset[]): RefitValue[] {
  return FITTED_CONSTANTS.map((c) => {
    const on = datasets.filter((d) => supports(c, d));
    return {
      constant: c.name,
      value: on.length > 0 ? refitConstant(c, on, ENGINE_VALUES) : c.fallback.value,
      refitOn: on.map((d) => d.name),
    };
  });
}

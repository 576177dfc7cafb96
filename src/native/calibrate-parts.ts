// The parts of calibration that hold no search state: the result's shape, the parameters a system offers for
// fitting, the row spread the fit sees, and the sentence that names a part pinned at its bound. calibrate.ts runs
// the search; this file keeps it under one screen of state.
import type { System, SystemOverrides, SystemSpec } from '../engine/index';
import type { ParamBound } from './calibrate-bounds';
import type { CompareRow } from './compare';
import type { MeasurementRow } from './import/model';

export type Param = keyof SystemOverrides;

export interface CalibrationResult {
  readonly system: SystemSpec;
  readonly medianErrorBefore: number;
  readonly medianErrorAfter: number;
  readonly parameters: Readonly<Partial<Record<Param, { readonly from: number; readonly to: number }>>>;
  /** Parameters left alone because a factor of 4 either way moves no measured size by 5 %: the data cannot tell. */
  readonly unidentified: readonly Param[];
  readonly evaluations: number;
  /** The box each fittable parameter was held in (absent where no hardware constrains it). */
  readonly bounds: Readonly<Partial<Record<Param, ParamBound>>>;
  /** The smallest size the fit saw; every size is still judged. */
  readonly fitMinBytes: number;
  /** Median |time error| below 1 MiB, unfitted and fitted, when the run has such sizes. */
  readonly smallSizeError?: { readonly before: number; readonly after: number };
  /** Why the fit found was thrown away and the unfitted system kept, in one sentence. */
  readonly rejected?: string;
  /** Present when no system inside the bounds explains the fitted sizes. */
  readonly unexplained?: Unexplained;
}

export interface Unexplained {
  /** One sentence for the user: which way the run misses, by how much, and which part would have to change. */
  readonly sentence: string;
  /** True when the run is slower than the bounded model, false when it is faster. */
  readonly slower: boolean;
  /** Median |time error| of the best bounded fit on the fitted sizes from 1 MiB, and below (NaN when none). */
  readonly fitErrorLarge: number;
  readonly fitErrorSmall: number;
  /** The parts pinned at a bound whose release explains most, best first, with the value the data asks for. */
  readonly parts: readonly {
    readonly name: Param;
    readonly part: string;
    readonly wanted: number;
    readonly bound: number;
    readonly lineRateGBps?: number;
    /** How much releasing it lowers the mean |log error|. */ readonly gain: number;
  }[];
}

/**
 * The model's own uncertainty, as `validate` judges it on the published runs (docs/calibration.md): a median
 * error within 10 % from 1 MiB and 25 % below. A bounded fit that misses by more has not explained the run.
 */
export const MODEL_UNCERTAINTY_LARGE = 0.1;
export const MODEL_UNCERTAINTY_SMALL = 0.25;

/** The overrides that matter for this system, with the values it uses now. */
export function fittableParameters(system: System): Partial<Record<Param, number>> {
  const links = system.topology.links;
  const first = (kinds: string[]): { GBps: number; latencyUs: number } | undefined =>
    links.find((l) => kinds.includes(l.kind));
  const base: Partial<Record<Param, number>> = { launchUs: Math.max(system.launchUs, 0.5) };
  if (system.spec.intraNode === 'uniform-ring') {
    const link = links[0];
    if (link) Object.assign(base, { linkGBps: link.GBps, linkLatencyUs: Math.max(link.latencyUs, 0.1) });
    return base;
  }
  const nvlink = first(['nvlink', 'nvswitch']);
  if (nvlink && system.gpu.nvlinkGBpsPerLink > 0)
    Object.assign(base, {
      nvlinkGBpsPerLink: system.gpu.nvlinkGBpsPerLink,
      nvlinkLatencyUs: Math.max(nvlink.latencyUs, 0.05),
    });
  const pcie = first(['pcie']);
  // Across nodes every GPU also reaches its NIC over PCIe (GPUDirect RDMA), a hop in series with the NIC.
  if (pcie && (!nvlink || system.fabric.hostStaged || system.spec.intraNode === 'pcie' || system.nodes > 1))
    Object.assign(base, { pcieGBps: pcie.GBps, pcieLatencyUs: Math.max(pcie.latencyUs, 0.05) });
  const socket = first(['inter-socket']);
  if (socket && (system.fabric.hostStaged || system.spec.intraNode === 'pcie')) base.interSocketGBps = socket.GBps;
  // The NIC's own link is the slowest network link; leaf-to-spine uplinks carry several NICs' worth.
  const nets = links.filter((l) => l.kind === 'network').sort((a, b) => a.GBps - b.GBps);
  if (nets.length > 0) Object.assign(base, { nicGBps: nets[0].GBps, nicLatencyUs: Math.max(nets[0].latencyUs, 0.1) });
  return base;
}

/** Up to `limit` rows spread evenly in log size, so small and large messages weigh alike. */
export function spread(rows: MeasurementRow[], limit: number): MeasurementRow[] {
  if (rows.length <= limit) return rows;
  return Array.from({ length: limit }, (_, i) => rows[Math.round((i * (rows.length - 1)) / (limit - 1))]);
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function percent(value: number): string {
  return `${(value * 100).toFixed(1)} %`;
}

export function unitOf(name: Param): string {
  if (name === 'launchUs' || name.endsWith('LatencyUs')) return 'µs';
  return name === 'nvlinkGBpsPerLink' ? 'GB/s per link' : 'GB/s';
}

export function relativeErrors(rows: readonly CompareRow[]): number[] {
  return rows.map((r) => Math.abs(r.expectedTimeUs - r.measuredTimeUs) / r.measuredTimeUs);
}

/** What one part pinned at its bound would have to be, as a clause of the user's sentence. */
export function partClause(p: Unexplained['parts'][number]): string {
  const unit = unitOf(p.name);
  const wanted = `${Number(p.wanted.toPrecision(3))} ${unit}`;
  if (p.lineRateGBps === undefined)
    return `the ${p.part} would have to be ${wanted}, past its ${Number(p.bound.toPrecision(3))} µs floor`;
  const share = (p.wanted / p.lineRateGBps).toFixed(2);
  const line = `${Number(p.lineRateGBps.toPrecision(4))} ${unit} line rate`;
  const limit =
    p.wanted < p.bound
      ? `a healthy one runs at ${Number(p.bound.toPrecision(3))} ${unit} or more`
      : 'which no link exceeds';
  return `the ${p.part} would have to run at ${wanted} (${share} of its ${line}; ${limit})`;
}

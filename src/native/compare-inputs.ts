// What a measurement tells the comparison (compare.ts) and calibration (calibrate.ts) about the run behind it: the
// collective and dtype the model simulates, the rows it can judge and the faster of their two timings, the NCCL
// release and process layout the run had, and the algorithm NCCL forced or logged for each size.
import {
  NCCL_ALGORITHM_NAMES,
  resolveSystem,
  withNcclVersion,
  type Algorithm,
  type CollectiveKind,
  type Dtype,
  type Protocol,
  type System,
  type SystemSpec,
} from '../engine/index';
import type { Measurement, MeasurementRow } from './import/model';

export class CompareError extends Error {}

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

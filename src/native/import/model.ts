// The one measurement model every importer produces: nccl-tests tables, NCCL_DEBUG logs, Kineto traces,
// DeepSpeed comms logs, calibration JSON and the native engine's own runs all become Measurements (and,
// where the source has per-kernel timing, a Trace). These files are pure: text or bytes in, model out, so the
// extension and the CLI share them.
import {
  type Bytes,
  type GBps,
  type Micros,
  type SystemSpec,
  type Trace,
  asBytes,
  asMicros,
  asGBps,
} from '../../engine/index';

export type MeasurementKind = 'nccl-tests' | 'nccl-log' | 'kineto' | 'deepspeed' | 'calibration-json' | 'native';

export type CollectiveName =
  | 'allreduce'
  | 'allgather'
  | 'reducescatter'
  | 'broadcast'
  | 'reduce'
  | 'alltoall'
  | 'sendrecv'
  | 'gather'
  | 'scatter'
  | 'hypercube'
  | 'barrier'
  | 'unknown';

/** One timed size, out-of-place unless the source gave only in-place numbers (then those). */
export interface MeasurementRow {
  readonly bytes: Bytes;
  readonly timeUs: Micros;
  readonly algbwGBps: GBps;
  readonly busbwGBps: GBps;
  /** nccl-tests' #wrong count (elements that failed validation); absent when the source has none or N/A. */
  readonly wrong?: number;
  readonly count?: number;
  readonly dtype?: string;
  /** The in-place twin, when the source has both. */
  readonly inPlace?: {
    readonly timeUs: Micros;
    readonly algbwGBps: GBps;
    readonly busbwGBps: GBps;
    readonly wrong?: number;
  };
  /** Old nccl-tests layouts report the largest absolute error instead of a count. */
  readonly maxError?: number;
  /** How many calls a summary row stands for (DeepSpeed's log_summary). */
  readonly calls?: number;
  /** 1-based source line, so a view can point back at the file. */
  readonly line?: number;
}

export type MetaValue = string | number | boolean | null | readonly string[] | readonly number[];

export interface Measurement {
  readonly kind: MeasurementKind;
  readonly collective: CollectiveName;
  readonly ranks: number;
  readonly rows: readonly MeasurementRow[];
  readonly system?: SystemSpec;
  readonly meta: Readonly<Record<string, MetaValue>>;
}

/** What importing one file gives: its measurements, a trace when it has per-rank timing, and notes. */
export interface ImportResult {
  readonly kind: MeasurementKind;
  readonly measurements: readonly Measurement[];
  readonly trace?: Trace;
  readonly system?: SystemSpec;
  readonly warnings: readonly string[];
}

/** Bad input, with the 1-based line and column where it went wrong. */
export class MeasurementParseError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
    readonly file?: string,
  ) {
    super(`${file ? `${file}:` : ''}${line}:${column}: ${message}`);
    this.name = 'MeasurementParseError';
  }
}

/** Element sizes of the dtype names nccl-tests, PyTorch and DeepSpeed print. */
const DTYPE_BYTES: Record<string, number> = {
  int8: 1,
  uint8: 1,
  char: 1,
  'signed char': 1,
  bool: 1,
  fp8: 1,
  f8e4m3: 1,
  f8e5m2: 1,
  float8: 1,
  int32: 4,
  uint32: 4,
  int: 4,
  float: 4,
  float32: 4,
  fp32: 4,
  int64: 8,
  uint64: 8,
  long: 8,
  double: 8,
  float64: 8,
  fp64: 8,
  half: 2,
  float16: 2,
  fp16: 2,
  bfloat16: 2,
  bf16: 2,
  short: 2,
  int16: 2,
};

export function dtypeBytes(name: string | undefined): number | undefined {
  if (!name) return undefined;
  return DTYPE_BYTES[name.trim().toLowerCase()];
}

/** Maps nccl-tests binaries, PyTorch op names and DeepSpeed op names onto one collective vocabulary. */
export function normalizeCollective(name: string): CollectiveName {
  const key = name
    .toLowerCase()
    .replace(/^(nccl:|c10d::)/, '')
    .replace(/_perf(_mpi)?$/, '')
    .replace(/[^a-z]/g, '');
  const table: Record<string, CollectiveName> = {
    allreduce: 'allreduce',
    allreducecoalesced: 'allreduce',
    allgather: 'allgather',
    allgatherbase: 'allgather',
    allgatherintotensor: 'allgather',
    allgathercoalesced: 'allgather',
    reducescatter: 'reducescatter',
    reducescatterbase: 'reducescatter',
    reducescattertensor: 'reducescatter',
    broadcast: 'broadcast',
    reduce: 'reduce',
    alltoall: 'alltoall',
    alltoallbase: 'alltoall',
    alltoallsingle: 'alltoall',
    sendrecv: 'sendrecv',
    send: 'sendrecv',
    recv: 'sendrecv',
    gather: 'gather',
    scatter: 'scatter',
    hypercube: 'hypercube',
    barrier: 'barrier',
  };
  return table[key] ?? 'unknown';
}

/** nccl-tests' bus-bandwidth factor for each collective: busbw = algbw × factor. */
export function busbwFactor(collective: CollectiveName, ranks: number): number {
  if (ranks <= 1) return collective === 'allreduce' ? 0 : 1;
  switch (collective) {
    case 'allreduce':
      return (2 * (ranks - 1)) / ranks;
    case 'allgather':
    case 'reducescatter':
    case 'alltoall':
    case 'gather':
    case 'scatter':
      return (ranks - 1) / ranks;
    default:
      return 1;
  }
}

/** Builds a row from bytes and time, deriving algbw and busbw as nccl-tests does (1 GB = 1e9 B). */
export function rowFromTime(bytes: number, timeUs: number, collective: CollectiveName, ranks: number): MeasurementRow {
  const algbwGBps = asGBps(timeUs > 0 ? bytes / (timeUs * 1e3) : 0);
  return {
    bytes: asBytes(bytes),
    timeUs: asMicros(timeUs),
    algbwGBps,
    busbwGBps: asGBps(algbwGBps * busbwFactor(collective, ranks)),
  };
}

/** Line starts of a text, for turning a character offset into a line and column. */
export function positionOf(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** Splits text into lines, dropping a trailing CR so CRLF files parse like LF ones. */
export function splitLines(text: string): string[] {
  return text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

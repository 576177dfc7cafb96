// The engine's public request and result types for one collective.
import type { Trace } from './trace/model';
import type { RecordedSpans } from './trace/simulated-index';
import type { Bytes, GBps, Micros } from './units';

export type Algorithm =
  'ring' | 'tree' | 'collnetdirect' | 'collnetchain' | 'nvls' | 'nvlstree' | 'pat' | 'hierarchical' | 'direct';
export type Protocol = 'LL' | 'LL128' | 'Simple';
export type Dtype = 'fp32' | 'fp16' | 'bf16' | 'fp8e4m3' | 'fp8e5m2';
export type ReduceOp = 'sum' | 'avg' | 'premulsum';
export type CollectiveKind = 'allreduce' | 'reducescatter' | 'allgather';

export const ALGORITHMS: readonly Algorithm[] = [
  'ring',
  'tree',
  'collnetdirect',
  'collnetchain',
  'nvls',
  'nvlstree',
  'pat',
  'hierarchical',
  'direct',
];
/** NCCL's own algorithms by the names NCCL_ALGO takes (case-insensitive): the ones `auto` chooses among. */
export const NCCL_ALGORITHM_NAMES: Readonly<Record<string, Algorithm>> = {
  ring: 'ring',
  tree: 'tree',
  collnetdirect: 'collnetdirect',
  collnetchain: 'collnetchain',
  nvls: 'nvls',
  nvlstree: 'nvlstree',
  pat: 'pat',
};

export const PROTOCOLS: readonly Protocol[] = ['LL', 'LL128', 'Simple'];
export const DTYPES: readonly Dtype[] = ['fp32', 'fp16', 'bf16', 'fp8e4m3', 'fp8e5m2'];

export const DTYPE_BYTES: Readonly<Record<Dtype, number>> = { fp32: 4, fp16: 2, bf16: 2, fp8e4m3: 1, fp8e5m2: 1 };

export interface CollectiveRequest {
  readonly kind?: CollectiveKind;
  /** The full user buffer (count × element size), as nccl-tests' "size" column. */
  readonly bytes: Bytes;
  readonly algorithm?: Algorithm | 'auto';
  readonly protocol?: Protocol | 'auto';
  readonly dtype?: Dtype;
  readonly op?: ReduceOp;
  /**
   * NCCL_PROTO is set for the run: a forced LL128 then runs where NCCL's default rule leaves it off (the paths or
   * the GPU generation; ll128-rule.ts), as NCCL runs it.
   */
  readonly ncclProtoSet?: boolean;
  /** Produce spans. Off for sweeps, where only the time matters. */
  readonly trace?: boolean;
  /**
   * The most spans the simulator records (MAX_TRACE_SPANS when not given). A trace written lazily or summarised per
   * node (trace/lazy.ts, trace/summary.ts) needs every simulated span, which is what the fast path simulates (one
   * rank per symmetric class), not one per rank: it passes Infinity.
   */
  readonly traceSpanLimit?: number;
  /**
   * The trace is for a summary per node (trace/summary.ts): the simulator records its flows and times
   * (CollectiveResult.recordedSpans) and `trace` holds the metadata alone; the summary makes the spans it draws.
   */
  readonly traceForSummary?: boolean;
}

export interface PhaseTimes {
  readonly exchange: Micros;
  readonly reduce: Micros;
  readonly broadcast: Micros;
}

export interface CollectiveResult {
  readonly kind: CollectiveKind;
  readonly bytes: Bytes;
  readonly ranks: number;
  readonly timeUs: Micros;
  readonly algbwGBps: GBps;
  readonly busbwGBps: GBps;
  readonly algorithm: Algorithm;
  readonly protocol: Protocol;
  readonly channels: number;
  /** Time each phase occupied on the critical rank, in µs. */
  readonly phases: PhaseTimes;
  readonly trace?: Trace;
  /** The trace's simulated spans as recorded, with `traceForSummary`: pass them to summarisedCollectiveTrace. */
  readonly recordedSpans?: RecordedSpans;
  readonly spanCount: number;
}

export interface SweepRow {
  readonly bytes: Bytes;
  readonly count: number;
  readonly dtype: Dtype;
  readonly timeUs: Micros;
  readonly algbwGBps: GBps;
  readonly busbwGBps: GBps;
  readonly algorithm: Algorithm;
  readonly protocol: Protocol;
}

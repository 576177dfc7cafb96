// The events of a Kineto trace as the importer (kineto.ts) reads them, and the message sizes they carry: in a
// kernel's own collective args, or in the `nccl:*` annotation around the launch that started it.
import { dtypeBytes, type CollectiveName } from './model';
export interface KinetoEvent {
  readonly ph?: string;
  readonly cat?: string;
  readonly name?: string;
  readonly pid?: number | string;
  readonly tid?: number | string;
  readonly ts?: number;
  readonly dur?: number;
  readonly args?: Record<string, unknown>;
}

export interface NcclKernel {
  readonly rank: number;
  readonly stream: string;
  readonly collective: CollectiveName;
  readonly algorithm?: string;
  readonly protocol?: string;
  readonly op?: string;
  readonly dtype?: string;
  readonly bytes?: number;
  readonly groupSize?: number;
  readonly startUs: number;
  readonly durationUs: number;
  readonly name: string;
}

export const num = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v)
    ? v
    : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))
      ? Number(v)
      : undefined;
/** A count of ranks: a whole number from 1 to 2^24; anything else (0, 2.5, 1e308 in a corrupt trace) is no count. */
export const rankCount = (v: unknown): number | undefined => {
  const n = num(v);
  return n !== undefined && Number.isInteger(n) && n >= 1 && n <= 2 ** 24 ? n : undefined;
};
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Bytes of a collective from its args: the full buffer, so all-gather counts its output and reduce-scatter its input. */
export function bytesFromArgs(args: Record<string, unknown>, collective: CollectiveName): number | undefined {
  const elem = dtypeBytes(str(args.dtype));
  const inN = num(args['In msg nelems']);
  const outN = num(args['Out msg nelems']);
  if (elem === undefined || (inN === undefined && outN === undefined)) return undefined;
  const nelems = collective === 'allgather' ? Math.max(inN ?? 0, outN ?? 0) : (inN ?? outN ?? 0);
  return sizeOrUndefined(nelems * elem);
}

/** Size from an old-style `nccl:*` annotation: Input Dims [[n]] with Input type ["float"]. */
export function bytesFromDims(args: Record<string, unknown>): number | undefined {
  const dims = args['Input Dims'];
  const types = args['Input type'];
  if (!Array.isArray(dims) || !Array.isArray(dims[0]) || dims[0].length === 0 || !Array.isArray(types))
    return undefined;
  const elem = dtypeBytes(str(types[0]));
  if (elem === undefined) return undefined;
  return sizeOrUndefined((dims[0] as unknown[]).reduce<number>((p, d) => p * (num(d) ?? 0), 1) * elem);
}

/** A byte count from a hand-edited or corrupt trace may be negative or overflow; such a size is no size. */
export function sizeOrUndefined(bytes: number): number | undefined {
  return Number.isFinite(bytes) && bytes >= 0 ? bytes : undefined;
}

/**
 * The nccl: annotations of each thread sorted by start, with the latest end seen so far, so the annotation around a
 * launch is found by binary search instead of a scan of every annotation per kernel (which was quadratic: 80,000
 * annotated calls took 11 s).
 */
export interface AnnotationIndex {
  readonly byThread: Map<
    string,
    { starts: number[]; ends: number[]; maxEnds: number[]; order: number[]; events: KinetoEvent[] }
  >;
}

/** Thread ids compare strictly (7 and "7" are different threads), as the trace's own values. */
export const threadKey = (tid: unknown): string => `${typeof tid}:${String(tid)}`;

export function indexAnnotations(annotations: readonly KinetoEvent[]): AnnotationIndex {
  const byThread: AnnotationIndex['byThread'] = new Map();
  const grouped = new Map<string, { start: number; end: number; order: number; event: KinetoEvent }[]>();
  annotations.forEach((a, order) => {
    const start = num(a.ts);
    if (start === undefined) return;
    const key = threadKey(a.tid);
    const list = grouped.get(key) ?? [];
    grouped.set(key, list);
    list.push({ start, end: start + (num(a.dur) ?? 0), order, event: a });
  });
  for (const [key, list] of grouped) {
    list.sort((x, y) => x.start - y.start || x.order - y.order);
    const maxEnds: number[] = [];
    list.forEach((x, i) => maxEnds.push(Math.max(x.end, i > 0 ? maxEnds[i - 1] : -Infinity)));
    byThread.set(key, {
      starts: list.map((x) => x.start),
      ends: list.map((x) => x.end),
      maxEnds,
      order: list.map((x) => x.order),
      events: list.map((x) => x.event),
    });
  }
  return { byThread };
}

export function bytesFromEnclosingAnnotation(
  launch: KinetoEvent | undefined,
  index: AnnotationIndex,
): number | undefined {
  const t = num(launch?.ts);
  if (!launch || t === undefined) return undefined;
  const thread = index.byThread.get(threadKey(launch.tid));
  if (!thread) return undefined;
  // The last annotation starting at or before t, then back while an earlier one could still reach t; among those
  // that enclose t, the first in file order wins, as a scan in file order would pick.
  let lo = 0;
  let hi = thread.starts.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (thread.starts[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  let best = -1;
  for (let i = lo - 1; i >= 0 && thread.maxEnds[i] >= t; i--) {
    if (thread.ends[i] >= t && (best < 0 || thread.order[i] < thread.order[best])) best = i;
  }
  return best >= 0 ? bytesFromDims(thread.events[best].args ?? {}) : undefined;
}

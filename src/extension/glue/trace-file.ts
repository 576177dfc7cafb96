// Reading and writing trace files. The extension's own file (*.cptrace.json) is Chrome Trace Event JSON, so it
// opens in Perfetto, with the full trace model embedded under one extra key, so it reopens in the timeline
// without loss. Any other Chrome trace (a Kineto export, a Perfetto JSON) is converted event by event.
import { TraceBuilder, traceToChromeJson, type Phase, type Trace, asBytes, asMicros } from '../../engine/index';
import { parseJsonText } from '../../native/import/json-text';
import { MeasurementParseError } from '../../native/import/model';
import { l10n } from './l10n';

export const EMBED_KEY = 'collectiveProfiler';
export const TRACE_FILE_VERSION = 1;

/** Chrome JSON for Perfetto, plus the model for the timeline. */
export function serializeTraceFile(trace: Trace): string {
  const chrome = traceToChromeJson(trace) as unknown;
  const base = Array.isArray(chrome) ? { traceEvents: chrome } : (chrome as Record<string, unknown>);
  return JSON.stringify({ ...base, [EMBED_KEY]: { version: TRACE_FILE_VERSION, trace } });
}

export type TraceFileFormat = 'collective-profiler' | 'chrome';

const PHASE_WORDS: readonly [RegExp, Phase][] = [
  // A whole library collective (an NCCL kernel, a c10d call) first: its name also contains "reduce" or "gather".
  [/nccl|gloo|c10d|all_?reduce|reduce_?scatter|all_?gather|collective/i, 'collective'],
  [/exchange|send|recv/i, 'exchange'],
  [/broadcast/i, 'broadcast'],
  [/reduce/i, 'reduce'],
  [/optim|adam|sgd/i, 'optimizer'],
  [/forward|backward|aten::|kernel|gemm|conv|matmul|compute/i, 'compute'],
];

/** Profiler categories say what an event is better than its name: a cuDNN "ReduceSplitK" kernel is compute. */
const PROFILER_CATEGORIES =
  /^(kernel|gpu_op|cpu_op|cuda_runtime|cuda_driver|python_function|user_annotation|gpu_memcpy|gpu_memset|ac2g)$/i;

export function phaseOf(name: string, cat: string): Phase {
  const library = PHASE_WORDS[0][0];
  if (PROFILER_CATEGORIES.test(cat) && !library.test(name))
    return /^(kernel|gpu_op|cpu_op)$/i.test(cat) ? 'compute' : 'other';
  return PHASE_WORDS.find(([re]) => re.test(name) || re.test(cat))?.[1] ?? 'other';
}

/** Imported spans use no links; one shared empty list instead of a new array per span. */
const NO_LINKS: readonly string[] = Object.freeze([]);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const finite = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Reads a trace file; throws MeasurementParseError with a line and column for anything that is not a trace. */
export function readTraceFile(
  text: string,
  fileName: string,
): { trace: Trace; format: TraceFileFormat; warnings: string[] } {
  const doc = parseJsonText(text, fileName);
  if (isRecord(doc) && isRecord(doc[EMBED_KEY])) {
    return {
      trace: embeddedTrace(doc[EMBED_KEY] as Record<string, unknown>, fileName),
      format: 'collective-profiler',
      warnings: [],
    };
  }
  const events = Array.isArray(doc)
    ? doc
    : isRecord(doc) && Array.isArray(doc.traceEvents)
      ? doc.traceEvents
      : undefined;
  if (!events)
    throw new MeasurementParseError(
      l10n.t('not a trace: expected Chrome Trace Event JSON (a "traceEvents" array or an array of events)'),
      1,
      1,
      fileName,
    );
  // A PyTorch profiler trace names its rank in distributedInfo; a process id is no rank.
  const info = isRecord(doc) && isRecord(doc.distributedInfo) ? doc.distributedInfo : {};
  const rank = finite(info.rank);
  return { ...chromeEventsToTrace(events, fileName, rank), format: 'chrome' };
}

/** Rebuilds an embedded trace through the validating builder, so a hand-edited file cannot feed the renderer nonsense. */
function embeddedTrace(embed: Record<string, unknown>, fileName: string): Trace {
  const raw = embed.trace;
  if (!isRecord(raw) || !Array.isArray(raw.lanes) || !Array.isArray(raw.spans) || !isRecord(raw.metadata)) {
    throw new MeasurementParseError(
      l10n.t('"{0}" must hold metadata, lanes and spans', `${EMBED_KEY}.trace`),
      1,
      1,
      fileName,
    );
  }
  const metadata = raw.metadata as unknown as Trace['metadata'];
  const builder = new TraceBuilder({
    origin: String(metadata.origin ?? 'file'),
    title: String(metadata.title ?? fileName),
    system: typeof metadata.system === 'string' ? metadata.system : undefined,
    ranks: finite(metadata.ranks) ?? 0,
    facts: isRecord(metadata.facts) ? (metadata.facts as Record<string, string | number>) : undefined,
  });
  const laneIds = new Map<number, number>();
  for (const lane of raw.lanes as unknown[]) {
    if (!isRecord(lane) || finite(lane.id) === undefined || typeof lane.label !== 'string')
      throw new MeasurementParseError(l10n.t('a lane needs an id and a label'), 1, 1, fileName);
    const kind = lane.kind === 'link' || lane.kind === 'node' || lane.kind === 'stream' ? lane.kind : 'rank';
    laneIds.set(
      lane.id as number,
      builder.lane(kind, lane.label, { node: finite(lane.node), rank: finite(lane.rank) }),
    );
  }
  (raw.spans as unknown[]).forEach((span, index) => {
    if (!isRecord(span)) throw new MeasurementParseError(l10n.t('span {0} is not an object', index), 1, 1, fileName);
    const lane = laneIds.get(span.lane as number);
    if (lane === undefined)
      throw new MeasurementParseError(
        l10n.t('span {0} is on unknown lane {1}', index, String(span.lane)),
        1,
        1,
        fileName,
      );
    try {
      builder.add({
        ...(span as unknown as Trace['spans'][number]),
        lane,
        links: Array.isArray(span.links) ? span.links.map(String) : [],
      });
    } catch (error) {
      throw new MeasurementParseError(
        l10n.t('span {0}: {1}', index, error instanceof Error ? error.message : String(error)),
        1,
        1,
        fileName,
      );
    }
  });
  // Flows between spans of the file; one naming a span the file does not have is dropped, not drawn to nowhere.
  const spanCount = builder.spanCount;
  for (const flow of Array.isArray(raw.flows) ? (raw.flows as unknown[]) : []) {
    if (!isRecord(flow)) continue;
    const from = finite(flow.fromSpan);
    const to = finite(flow.toSpan);
    const known = (i: number | undefined): i is number =>
      i !== undefined && Number.isInteger(i) && i >= 0 && i < spanCount;
    if (known(from) && known(to)) builder.flow(from, to, typeof flow.name === 'string' ? flow.name : undefined);
  }
  return builder.build();
}

/**
 * Converts Chrome trace events: complete events (ph "X") and begin/end pairs (ph "B"/"E") become spans on one lane
 * per process and thread, named by the trace's own process_name/thread_name metadata. Timestamps are µs already.
 */
export function chromeEventsToTrace(
  events: readonly unknown[],
  fileName: string,
  /** The rank the trace was recorded on, when it says; spans get -1 (no rank) otherwise, never a process id. */
  rank = -1,
): { trace: Trace; warnings: string[] } {
  const warnings: string[] = [];
  const names = new Map<string, string>();
  // JSON.parse gives every event its own copy of its name; a trace repeats a few kernel names millions of times,
  // so the spans share one copy each (about 100 MB less host memory for a 1,000,000-span trace).
  const shared = new Map<string, string>();
  const intern = (text: string): string => {
    const known = shared.get(text);
    if (known !== undefined) return known;
    shared.set(text, text);
    return text;
  };
  for (const e of events) {
    if (!isRecord(e) || e.ph !== 'M' || !isRecord(e.args) || typeof e.args.name !== 'string') continue;
    if (e.name === 'process_name') names.set(`p${String(e.pid)}`, e.args.name);
    if (e.name === 'thread_name') names.set(`t${String(e.pid)}:${String(e.tid)}`, e.args.name);
  }
  type Complete = {
    pid: string;
    tid: string;
    name: string;
    cat: string;
    start: number;
    end: number;
    args: Record<string, unknown>;
  };
  const spans: Complete[] = [];
  const open = new Map<string, Complete[]>();
  let skipped = 0;
  for (const e of events) {
    if (!isRecord(e)) {
      skipped++;
      continue;
    }
    const ts = finite(e.ts);
    const pid = String(e.pid ?? 0);
    const tid = String(e.tid ?? 0);
    const name = typeof e.name === 'string' ? e.name : '';
    const cat = typeof e.cat === 'string' ? e.cat : '';
    const args = isRecord(e.args) ? e.args : {};
    if (e.ph === 'X' && ts !== undefined) {
      spans.push({ pid, tid, name, cat, start: ts, end: ts + Math.max(0, finite(e.dur) ?? 0), args });
    } else if (e.ph === 'B' && ts !== undefined) {
      // Push onto the thread's open stack, not a copy of it: a truncated trace may hold many thousands of
      // begins without ends, and copying the stack on each one made opening it quadratic (20,000 took 46 s).
      const key = `${pid}:${tid}`;
      const begun = { pid, tid, name, cat, start: ts, end: ts, args };
      const stack = open.get(key);
      if (stack) stack.push(begun);
      else open.set(key, [begun]);
    } else if (e.ph === 'E' && ts !== undefined) {
      const begun = open.get(`${pid}:${tid}`)?.pop();
      if (begun) spans.push({ ...begun, end: Math.max(begun.start, ts) });
      else skipped++;
    }
  }
  if (skipped > 0) warnings.push(`${skipped} events were not complete spans and were skipped`);
  if (spans.length === 0)
    throw new MeasurementParseError(
      l10n.t('the trace has no complete ("X") or begin/end events to show'),
      1,
      1,
      fileName,
    );
  // A loop, not Math.min(...spread): a trace may hold millions of events.
  let origin = Infinity;
  for (const s of spans) origin = Math.min(origin, s.start);
  const builder = new TraceBuilder({
    origin: 'imported:chrome',
    title: fileName.split(/[\\/]/).pop() ?? fileName,
    ranks: new Set(spans.map((s) => s.pid)).size,
  });
  const laneOrder = [...new Set(spans.map((s) => `${s.pid}:${s.tid}`))].sort((a, b) =>
    a.localeCompare(b, undefined, { numeric: true }),
  );
  const lanes = new Map<string, number>();
  laneOrder.forEach((key, index) => {
    const [pid, tid] = key.split(':');
    const label = `${names.get(`p${pid}`) ?? `process ${pid}`} · ${names.get(`t${pid}:${tid}`) ?? `thread ${tid}`}`;
    lanes.set(key, builder.lane('stream', label, { rank: index }));
  });
  for (const s of spans) {
    const phase = phaseOf(s.name, s.cat);
    const bytes = finite(s.args.bytes) ?? 0;
    builder.add({
      lane: lanes.get(`${s.pid}:${s.tid}`)!,
      rank,
      phase,
      name: intern(s.name),
      step: -1,
      channel: 0,
      chunk: 0,
      bytes: asBytes(Math.max(0, bytes)),
      links: NO_LINKS,
      startUs: asMicros(s.start - origin),
      endUs: asMicros(s.end - origin),
    });
  }
  return { trace: builder.build(), warnings };
}

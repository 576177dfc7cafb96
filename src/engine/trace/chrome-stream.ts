// Chrome Trace Event JSON (chrome.ts) written in pieces, for a trace too large to hold as one string: the writer
// asks for the next piece, writes it, and drops it. V8 strings stop at about 512 MiB, and a drawn trace of 131,072
// ranks can pass that, so the trace is never one document in memory. Pure: the CLI and extension do the writing.
import type { Lane, Span, TraceMetadata } from './model';
import type { TraceItem } from './lazy';

/** About this many characters per piece: large enough that writes are few, small enough to stay off the heap's limits. */
const PIECE_CHARS = 1 << 20;

/** The "X" event of one span, in the process of its lane's node (`pid`), as traceToChromeJson writes it. */
export function chromeSpanEvent(span: Span, pid: number): object {
  return {
    ph: 'X',
    name: span.name ?? span.phase,
    cat: span.phase,
    pid,
    tid: span.lane,
    ts: span.startUs,
    dur: Math.max(0, span.endUs - span.startUs),
    args: {
      rank: span.rank,
      step: span.step,
      channel: span.channel,
      chunk: span.chunk,
      bytes: span.bytes,
      links: span.links.join(' '),
      ...(span.args ?? {}),
    },
  };
}

/** The metadata events naming a lane (and its node's process, the first time that node is seen). */
export function chromeLaneEvents(lane: Lane, pids: Set<number>): object[] {
  const pid = lane.node ?? 0;
  const events: object[] = [];
  if (!pids.has(pid)) {
    pids.add(pid);
    events.push({ ph: 'M', name: 'process_name', pid, tid: 0, args: { name: `node ${pid}` } });
  }
  events.push({ ph: 'M', name: 'thread_name', pid, tid: lane.id, args: { name: lane.label } });
  events.push({ ph: 'M', name: 'thread_sort_index', pid, tid: lane.id, args: { sort_index: lane.id } });
  return events;
}

/**
 * The Chrome JSON of `items` in pieces: the events first, then `otherData` from `metadata()`, asked for only after
 * the last item (so counts gathered while drawing are complete). The pieces joined are one JSON document.
 */
export function* chromeTraceChunks(items: Iterable<TraceItem>, metadata: () => TraceMetadata): Generator<string> {
  const pids = new Set<number>();
  /** Each lane's process (its node): all a span needs of its lane. */
  const pidOfLane = new Map<number, number>();
  let piece = '{"displayTimeUnit":"ms","traceEvents":[';
  let first = true;
  const add = (event: object): void => {
    piece += (first ? '' : ',') + JSON.stringify(event);
    first = false;
  };
  for (const item of items) {
    if (item.lane) {
      pidOfLane.set(item.lane.id, item.lane.node ?? 0);
      for (const event of chromeLaneEvents(item.lane, pids)) add(event);
    } else add(chromeSpanEvent(item.span, pidOfLane.get(item.span.lane) ?? 0));
    if (piece.length >= PIECE_CHARS) {
      yield piece;
      piece = '';
    }
  }
  yield `${piece}],"otherData":${JSON.stringify({ ...metadata() })}}`;
}

// How `simulate --trace` writes a trace: every rank's spans, or the nodes summarised. A trace of every rank of a
// large system is not what anyone reads (engine/trace/summary.ts says why), while the nodes mostly repeat each other,
// so above FULL_TRACE_MAX_RANKS the trace is summarised per node by default: one lane group per set of nodes that
// draw alike, labelled with the nodes it stands for. `--trace-detail full` writes every rank's spans, drawn rank by
// rank and streamed to the file, so memory holds only what the simulator ran.
import {
  FULL_TRACE_MAX_RANKS,
  LazyDrawnTrace,
  TRACE_DETAILS,
  resolvedTraceDetail,
  MAX_TRACE_SPANS,
  chromeTraceChunks,
  summarisedCollectiveTrace,
  traceToChromeJson,
  type CollectiveResult,
  type System,
  type TraceDetail,
  type TraceItem,
} from '../engine/index';
import { writeOutput, writeOutputFileAsync, type OutputTarget } from '../native/files/output-file';
import { UsageError } from './command';
import { flagValue } from './flag-values';
import type { OptionSpec } from './options';

/**
 * The most spans the simulator records for a trace: what stays in memory whatever the detail (every other span is
 * drawn from these). A run with more stops its trace at the last whole round that fits, and says so.
 */
export const TRACE_SIMULATED_SPANS = MAX_TRACE_SPANS;

export const TRACE_DETAIL_OPTION: OptionSpec = {
  name: 'trace-detail',
  value: 'detail',
  help: `With --trace: full (every rank's spans, streamed), summary (one lane group per set of alike nodes) or auto (full up to ${FULL_TRACE_MAX_RANKS} ranks)`,
  default: 'auto',
};

export function traceDetailFlag(flags: Map<string, string[]>): TraceDetail {
  const text = flagValue(flags, 'trace-detail') ?? 'auto';
  const detail = TRACE_DETAILS.find((d) => d === text.toLowerCase());
  if (!detail) throw new UsageError(`--trace-detail '${text}' must be one of ${TRACE_DETAILS.join(', ')}`);
  return detail;
}

/** Writes the drawn trace of `result` at `detail`; returns how many spans it holds and the detail written. */
export async function writeTrace(
  target: OutputTarget,
  system: System,
  result: CollectiveResult,
  detail: TraceDetail,
): Promise<{ spans: number; detail: 'summary' | 'full' }> {
  const trace = result.trace!;
  const chosen = resolvedTraceDetail(detail, system.ranks);
  if (chosen === 'summary') {
    const summary = summarisedCollectiveTrace(system, result, trace, result.recordedSpans);
    writeOutput(target, JSON.stringify(traceToChromeJson(summary)));
    return { spans: summary.spans.length, detail: chosen };
  }
  if (result.recordedSpans) throw new Error('a trace recorded for a summary cannot be written in full');
  const lazy = new LazyDrawnTrace(system, result, trace);
  let spans = 0;
  function* counted(): Generator<TraceItem> {
    for (const item of lazy.items()) {
      if (item.span) spans++;
      yield item;
    }
  }
  const chunks = chromeTraceChunks(counted(), () => lazy.metadata());
  if (target.stdout) await writeStdout(chunks);
  else await writeOutputFileAsync(target.path, chunks, { flag: target.flag });
  return { spans, detail: chosen };
}

/** Writes the pieces to stdout, waiting for the pipe to drain so a slow reader never fills memory. */
async function writeStdout(chunks: Iterable<string>): Promise<void> {
  for (const chunk of chunks) {
    if (!process.stdout.write(chunk)) await new Promise<void>((resolve) => process.stdout.once('drain', resolve));
  }
}

// The links between a trace in the timeline and the source it came from, both ways: a span selected in the
// timeline (the selectSpan message) names its source line and a one-line summary for the status bar; a source line
// in the editor names the time range of its spans, which the host sends to the timeline as a reveal message.
import { formatBytes, formatMicros, type Trace, asMicros } from '../../engine/index';

export interface SpanSelection {
  /** The span's source line, when the trace says where it came from. */
  readonly source?: { readonly file: string; readonly line: number };
  /** e.g. "allreduce ring Simple · 1.23 ms · 64 MiB", shown in the status bar. */
  readonly summary: string;
}

/** What selecting span `index` of `trace` shows; undefined for an index the trace does not have. */
export function spanSelection(trace: Trace, index: number): SpanSelection | undefined {
  const span = trace.spans[index];
  if (!span) return undefined;
  const parts = [span.name ?? span.phase, formatMicros(asMicros(span.endUs - span.startUs))];
  if (span.bytes > 0) parts.push(formatBytes(span.bytes));
  return { source: span.source, summary: parts.join(' · ') };
}

export interface SourceExtent {
  readonly startUs: number;
  readonly endUs: number;
  /** How many spans came from the line. */
  readonly spans: number;
}

/**
 * The time range covered by the spans that came from `file`:`line` (1-based), widened by a tenth on each side so
 * the spans do not touch the panel's edges; undefined when no span came from there. Paths compare after
 * `normalizePath` (the host passes path.resolve), so "./train.py" and an absolute path to it agree.
 */
export function sourceExtent(
  trace: Trace,
  file: string,
  line: number,
  normalizePath: (p: string) => string = (p) => p,
): SourceExtent | undefined {
  const target = normalizePath(file);
  let startUs = Infinity;
  let endUs = -Infinity;
  let spans = 0;
  const seen = new Map<string, boolean>();
  for (const span of trace.spans) {
    if (!span.source || span.source.line !== line) continue;
    let same = seen.get(span.source.file);
    if (same === undefined) {
      same = normalizePath(span.source.file) === target;
      seen.set(span.source.file, same);
    }
    if (!same) continue;
    spans++;
    startUs = Math.min(startUs, span.startUs);
    endUs = Math.max(endUs, span.endUs);
  }
  if (spans === 0) return undefined;
  const marginUs = Math.max((endUs - startUs) / 10, 1e-3);
  return { startUs: startUs - marginUs, endUs: endUs + marginUs, spans };
}

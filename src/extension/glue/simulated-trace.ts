// The trace a Profile command draws for one simulated collective: the engine's drawn trace (every rank filled from
// the rank it mirrors, the launch and pacing drawn, so it ends at the predicted time), the same one `simulate
// --trace` writes. This wrapper adds only the localised error when the engine returned no trace.
import {
  type CollectiveResult,
  type System,
  type Trace,
  type TraceDetail,
  MAX_TRACE_SPANS,
  drawnCollectiveTrace as engineDrawnTrace,
  resolvedTraceDetail,
  summarisedCollectiveTrace,
} from '../../engine/index';
import { l10n } from './l10n';

/** The engine keeps at most this many spans in a trace (MAX_TRACE_SPANS in src/engine/constants.ts). */
export const ENGINE_TRACE_SPAN_CAP = MAX_TRACE_SPANS;

export { LAUNCH_SPAN_NAME, PACING_SPAN_NAME } from '../../engine/index';

/**
 * The drawn trace at `detail` (the collectiveProfiler.trace.detail setting): above FULL_TRACE_MAX_RANKS, unless set
 * to full, one lane group per set of nodes that draw alike, labelled with the nodes it stands for, as `simulate
 * --trace` writes it. In full, the panels get the in-memory drawn trace, mirrored up to the engine's span cap: every
 * rank's spans of a large system are for `simulate --trace-detail full`, which streams them to a file.
 */
export function drawnCollectiveTrace(system: System, result: CollectiveResult, detail: TraceDetail = 'auto'): Trace {
  const trace = result.trace;
  if (!trace) throw new Error(l10n.t('The engine returned no trace for this collective.'));
  return resolvedTraceDetail(detail, system.ranks) === 'summary'
    ? summarisedCollectiveTrace(system, result, trace)
    : engineDrawnTrace(system, result, trace);
}

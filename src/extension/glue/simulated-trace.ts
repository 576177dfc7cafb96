// The trace a Profile command draws for one simulated collective: the engine's drawn trace (every rank filled from
// the rank it mirrors, the launch and pacing drawn, so it ends at the predicted time), the same one `simulate
// --trace` writes. This wrapper adds only the localised error when the engine returned no trace.
import {
  type CollectiveResult,
  type System,
  type Trace,
  MAX_TRACE_SPANS,
  drawnCollectiveTrace as engineDrawnTrace,
} from '../../engine/index';
import { l10n } from './l10n';

/** The engine keeps at most this many spans in a trace (MAX_TRACE_SPANS in src/engine/constants.ts). */
export const ENGINE_TRACE_SPAN_CAP = MAX_TRACE_SPANS;

export { LAUNCH_SPAN_NAME, PACING_SPAN_NAME } from '../../engine/index';

export function drawnCollectiveTrace(system: System, result: CollectiveResult): Trace {
  const trace = result.trace;
  if (!trace) throw new Error(l10n.t('The engine returned no trace for this collective.'));
  return engineDrawnTrace(system, result, trace);
}

// Size limits for files the extension reads whole. A file past the limit is refused before it is read, with a
// message that says what to do instead, so a 2 GB trace never freezes the extension host. The limits are the
// CLI's (one table, docs/limits.md), so a file the CLI imports also opens in the editor.
import { INPUT_LIMITS_BYTES } from '../../native/files/input-limits';
import { l10n } from './l10n';

/** The timeline parses a trace whole (one V8 string), as the CLI reads a measurement whole: the same limit holds. */
export const MAX_TRACE_BYTES = INPUT_LIMITS_BYTES.measurement;
/** Measurements are text tables and logs; anything this large is not one. */
export const MAX_MEASUREMENT_BYTES = INPUT_LIMITS_BYTES.measurement;

export function formatFileSize(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(0)} MB`;
  return `${Math.ceil(bytes / 1024)} KB`;
}

/** Undefined when the file may be read; otherwise the refusal, naming the size, the limit and a way forward. */
export function refuseLargeFile(
  name: string,
  sizeBytes: number,
  limitBytes: number,
  what: 'trace' | 'measurement',
): string | undefined {
  if (sizeBytes <= limitBytes) return undefined;
  return what === 'trace'
    ? l10n.t(
        '{0} is {1}; the timeline reads traces up to {2} without freezing the editor. Open it in Perfetto (ui.perfetto.dev), which streams large traces, or record fewer steps (a shorter profiler schedule) and open that.',
        name,
        formatFileSize(sizeBytes),
        formatFileSize(limitBytes),
      )
    : l10n.t(
        '{0} is {1}; the timeline reads measurements up to {2} without freezing the editor. Split it (for example with `split -l`) or keep only the runs you need, and import those.',
        name,
        formatFileSize(sizeBytes),
        formatFileSize(limitBytes),
      );
}

// The webview panels' user-facing text: the English templates the panels label themselves with, each the key of
// its translation. The host localises every one with vscode.l10n (src/extension/glue/webview-strings.ts) and hands
// the table to the page it builds, as an inert JSON block the bundle reads before it draws anything: the panels
// build their toolbars at load, before the host may post a message. Templates number their arguments {0}, {1}…
// as vscode.l10n.t does, so a translation may reorder them.

/** Every English template a panel shows. Adding a label to a panel means adding it here and to the host's table. */
export const WEBVIEW_STRINGS = [
  '1 match',
  '1 span',
  '1 rank',
  'algbw',
  'Algorithm comparison',
  'Algorithm comparison at {0}',
  "algorithm/protocol (★ NCCL's choice)",
  'all lanes (busy time)',
  'and {0} more names',
  'backward',
  'bandwidth',
  'broadcast',
  'bucket size (bucket_cap_mb)',
  'Bucket-size sweep',
  'Bucket-size sweep · recommended {0}, step {1}',
  'Bus bandwidth vs message size',
  'busbw',
  'busbw (GB/s)',
  'busbw per rank ({0} ranks)',
  'algbw per rank ({0} ranks)',
  'bytes',
  'channel',
  'Channel overlay',
  'channel {0} · {1}',
  'channel {0}: {1} → {2}',
  'chunk',
  'Click a span for its details; shift+drag (or drag on the time axis) selects a range. W/S zoom, A/D pan, ctrl+wheel zooms.',
  'collective',
  'collective and size',
  'Collective charts',
  'collectives',
  'Colour legend',
  'compute / forward',
  'Could not show the trace: {0}',
  'Counting the selected range…',
  'count',
  'counters · {0}',
  'duration',
  'exchange',
  'exchange (send/recv)',
  'Export as Chrome/Perfetto JSON',
  'Export…',
  'exposed communication (ms)',
  'Flows',
  'Fold {0}',
  'from',
  'Gradient scaling: loss curves of a synthetic least-squares model',
  'idle',
  'lane',
  'link',
  'links',
  'loss (mean squared error, log)',
  'message size (bytes)',
  'moved',
  'name',
  'No channel overlay',
  'no span in the range',
  'no span in the range moved bytes',
  'node {0}',
  'node {0} · 1 lane',
  'node {0} · {1} lanes',
  'nodes',
  'Open the source line',
  'optimizer',
  'other',
  'peak {0} GB/s',
  'phase',
  'Phase breakdown',
  'Pin this lane to the top',
  'range',
  'rank',
  'Receiving spans… {0} of {1}',
  'Receiving {0} spans…',
  'reduce',
  'Reset zoom',
  'Scaling with node count',
  'Flame graph of the range',
  'Search spans',
  'Search spans (name, phase, lane)',
  'Select this span',
  'Selected range',
  'Selected span',
  'self',
  'SGD step',
  'Show the whole trace',
  'Slices in range',
  'source',
  'start',
  'step',
  'step time (ms)',
  'step {0} → rank {1}',
  'There is nothing to chart in this result.',
  'This chart could not be drawn: {0}',
  'time (µs)',
  'time (µs, log)',
  'time per call (µs, log)',
  'Time per call vs message size',
  'time per step (ms)',
  'to',
  'Topology',
  'total',
  'Trace overview',
  'Trace timeline',
  'Trace timeline: W/S zoom, A/D pan',
  'Unfold {0}',
  'Unpin this lane',
  'Waiting for a topology…',
  'Waiting for a trace…',
  'Waiting for data…',
  '{0} % busy',
  '{0} % · {1} per rank',
  '{0} (measured)',
  '{0} GB/s per rank over {1}',
  '{0} matches',
  '{0} of messages',
  '{0} over links',
  '{0} ranks',
  '{0} spans',
  '{0} spans of {1} highlighted',
  '{0} · {1} GB/s busbw',
  '{0} – {1} of {2}',
  'Assumptions',
  'What {0} did not say was assumed. Change a value and re-run.',
  'Model',
  'Sequence length (tokens)',
  'Micro-batch per GPU (sequences)',
  'Compute efficiency (% of peak matmul)',
  'Gradient bucket (MiB)',
  'from the config',
  'assumed',
  'set here',
  'Also assumed',
  'Re-run profile',
  'Re-run sweep',
  'Running again with the changed values…',
  'Nothing changed: edit a value first.',
  '{0}: not a number',
  '{0}: must be a whole number between {1} and {2}',
  '{0}: must be between {1} and {2}',
] as const;

export type WebviewString = (typeof WEBVIEW_STRINGS)[number];

/** The display-language text of every template, keyed by the English template. */
export type WebviewStrings = Readonly<Record<WebviewString, string>>;

/** The id of the page's JSON block that carries the table (a data block: the CSP never runs it). */
export const WEBVIEW_STRINGS_ELEMENT_ID = 'collective-profiler-strings';

/** Longest translation accepted; a longer one is dropped in favour of the English template. */
const MAX_TRANSLATION_LENGTH = 2048;

const KNOWN: ReadonlySet<string> = new Set(WEBVIEW_STRINGS);

/**
 * The table from the page's JSON text. The page is built by the host, but a table it cannot read must not stop
 * the panel: anything that is not a string for a known template is left out, and `t` falls back to the English.
 */
export function readWebviewStrings(json: string | null | undefined): Partial<WebviewStrings> {
  if (!json) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  const table: Partial<Record<WebviewString, string>> = {};
  for (const [key, value] of Object.entries(parsed))
    if (KNOWN.has(key) && typeof value === 'string' && value.length <= MAX_TRANSLATION_LENGTH)
      table[key as WebviewString] = value;
  return table;
}

/** Fills `{0}`, `{1}`… with `args`, as vscode.l10n.t does; a placeholder without an argument stays as written. */
export function formatWebviewString(template: string, args: readonly (string | number)[]): string {
  if (args.length === 0) return template;
  return template.replace(/\{(\d+)\}/g, (whole, index: string) =>
    Number(index) < args.length ? String(args[Number(index)]) : whole,
  );
}

/** The table as the page's JSON block: `<` escaped, so no translation can close the script element. */
export function webviewStringsJson(strings: WebviewStrings): string {
  return JSON.stringify(strings).replace(/</g, '\\u003c');
}
